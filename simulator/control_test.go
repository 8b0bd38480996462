package simulator

import (
	"net/http"
	"testing"
	"time"
)

func TestControlEndpoint(t *testing.T) {
	s, base := startSim(t)
	resp, data := call(t, http.MethodPut, base+"/_sim/routes/beta", `{"first_byte_ms":5,
		"tokens_per_second":50,"fail_status":503,"retry_after":2,"fail_kind":"retry_hint","retry_delay_ms":1500,
		"fail_fraction":0.5,"drop_after_chunks":4,"long_line_bytes":100,"long_line_after_chunks":2,"video_ms":250,"video_fail_fraction":0.25,"video_output_seconds":3,
		"image_url":"http://127.0.0.2:9/redirect","token_lifetime_ms":2000}`, "-")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT status %d: %s", resp.StatusCode, data)
	}
	assertJSON(t, data, `{"route":"beta","first_byte_ms":5,"tokens_per_second":50,"fail_status":503,
		"retry_after":2,"fail_kind":"retry_hint","retry_delay_ms":1500,"fail_fraction":0.5,"drop_after_chunks":4,"long_line_bytes":100,
		"long_line_after_chunks":2,"video_ms":250,"video_fail_fraction":0.25,"video_output_seconds":3,"image_url":"http://127.0.0.2:9/redirect",
		"token_lifetime_ms":2000,"calls":0,"token_grants":0}`)
	want := Behavior{FirstByteDelay: 5 * time.Millisecond, TokensPerSecond: 50, FailStatus: 503,
		RetryAfter: 2, FailKind: FailRetryHint, RetryDelay: 1500 * time.Millisecond, FailFraction: 0.5, DropAfterChunks: 4, LongLineBytes: 100, LongLineAfterChunks: 2, VideoDuration: 250 * time.Millisecond, VideoFailFraction: 0.25, VideoOutputSeconds: 3,
		ImageURL: "http://127.0.0.2:9/redirect", TokenLifetime: 2 * time.Second}
	if got := s.Behavior("beta"); got != want {
		t.Errorf("Behavior(beta) = %+v, want %+v", got, want)
	}

	post(t, base+"/r/beta/v1/chat/completions", hiChat)
	call(t, http.MethodGet, base+"/r/beta/v1/models", "", "")
	_, data = call(t, http.MethodGet, base+"/_sim/routes/beta", "", "-")
	assertJSON(t, data, `{"route":"beta","first_byte_ms":5,"tokens_per_second":50,"fail_status":503,
		"retry_after":2,"fail_kind":"retry_hint","retry_delay_ms":1500,"fail_fraction":0.5,"drop_after_chunks":4,"long_line_bytes":100,
		"long_line_after_chunks":2,"video_ms":250,"video_fail_fraction":0.25,"video_output_seconds":3,"image_url":"http://127.0.0.2:9/redirect",
		"token_lifetime_ms":2000,"calls":2,"token_grants":0,
		"last_request":{"method":"GET","uri":"/r/beta/v1/models","body":"",
			"headers":{"Accept-Encoding":"gzip","Authorization":"(masked)","Content-Type":"application/json","User-Agent":"Go-http-client/1.1"}}}`)

	// The empty name is the default route; an empty body heals a route.
	call(t, http.MethodPut, base+"/_sim/routes/", `{"fail_status":429}`, "-")
	if got := s.Behavior(""); got != (Behavior{FailStatus: 429}) {
		t.Errorf("Behavior(\"\") = %+v", got)
	}
	call(t, http.MethodPut, base+"/_sim/routes/", `{}`, "-")
	if got := s.Behavior(""); got != (Behavior{}) {
		t.Errorf("after healing: %+v", got)
	}

	for _, bad := range []string{`{"fail_rate":0.5}`, `{"fail_fraction":1.5}`, `{"fail_status":200}`,
		`{"first_byte_ms":-1}`, `{"drop_after_chunks":-2}`, `{"video_ms":-1}`, `{"video_fail_fraction":1.5}`,
		`{"video_fail_fraction":-0.1}`, `{"video_ms":"fast"}`, `{"fail_kind":"billing"}`, `{"retry_delay_ms":-1}`, `{"video_output_seconds":-1}`,
		`{"long_line_bytes":-1}`, `{"long_line_bytes":67108865}`, `{"long_line_after_chunks":-1}`, `{"token_lifetime_ms":-1}`, `not json`} {
		resp, data := call(t, http.MethodPut, base+"/_sim/routes/beta", bad, "-")
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("PUT %s: status %d (%s), want 400", bad, resp.StatusCode, data)
		}
	}
	if got := s.Behavior("beta"); got != want {
		t.Errorf("rejected PUTs changed the route: %+v", got)
	}
}

// TestControlSteersVideoJobs: video_ms and video_fail_fraction set over HTTP take effect on
// the next job.
func TestControlSteersVideoJobs(t *testing.T) {
	_, base := startSim(t)
	if resp, data := call(t, http.MethodPut, base+"/_sim/routes/vid", `{"video_ms":1,"video_fail_fraction":1}`, "-"); resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT: %d %s", resp.StatusCode, data)
	}
	id := str(createVideo(t, base, "vid", `{"prompt":"x"}`), "id")
	if v := waitVideo(t, base, "vid", id); v["status"] != "failed" {
		t.Errorf("job under video_fail_fraction 1 ended %v", v["status"])
	}
	call(t, http.MethodPut, base+"/_sim/routes/vid", `{"video_ms":60000}`, "-")
	id = str(createVideo(t, base, "vid", `{"prompt":"x"}`), "id")
	time.Sleep(20 * time.Millisecond)
	if _, data := pollVideo(t, base, "vid", id); str(decode(t, data), "status") != "queued" {
		t.Errorf("a one-minute job after 20 ms: %s", data)
	}
}

func TestRoutesAreIsolatedAndRecorded(t *testing.T) {
	s, base := startSim(t)
	body := `{"model":"gpt-x","messages":[{"role":"user","content":"alpha only"}]}`
	resp, data := callHeaders(t, http.MethodPost, base+"/r/alpha/v1/chat/completions", body,
		map[string]string{"Authorization": "Bearer alpha-key", "X-Trace": "t-1"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	post(t, base+"/v1/chat/completions", hiChat)

	if got := string(s.LastRequest("alpha")); got != body {
		t.Errorf("LastRequest(alpha) = %q, want %q", got, body)
	}
	h := s.LastHeaders("alpha")
	if h.Get("Authorization") != "Bearer alpha-key" || h.Get("X-Trace") != "t-1" {
		t.Errorf("LastHeaders(alpha) = %v", h)
	}
	if got := string(s.LastRequest("")); got != hiChat {
		t.Errorf("LastRequest(\"\") = %q", got)
	}
	for route, want := range map[string]int64{"alpha": 1, "": 1, "beta": 0} {
		if got := s.Calls(route); got != want {
			t.Errorf("Calls(%q) = %d, want %d", route, got, want)
		}
	}
	if s.LastRequest("beta") != nil || s.LastHeaders("beta") != nil {
		t.Error("an unused route has a recorded request")
	}
}

func TestModelsHealthAndUnknownPaths(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, method, path, auth string
		status                   int
		body                     string
	}{
		{"models", http.MethodGet, "/v1/models", "", 200,
			`{"object":"list","data":[{"id":"sim-model","object":"model","created":1700000000,"owned_by":"simulator"}]}`},
		{"models on a route", http.MethodGet, "/r/x/v1/models", "", 200,
			`{"object":"list","data":[{"id":"sim-model","object":"model","created":1700000000,"owned_by":"simulator"}]}`},
		{"unknown path", http.MethodPost, "/r/x/v1/completions", "", 404,
			`{"error":{"message":"Invalid URL (POST /r/x/v1/completions)","type":"invalid_request_error","param":null,"code":null}}`},
		{"wrong method", http.MethodGet, "/v1/chat/completions", "", 404,
			`{"error":{"message":"Invalid URL (GET /v1/chat/completions)","type":"invalid_request_error","param":null,"code":null}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := call(t, tc.method, base+tc.path, "", tc.auth)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			assertJSON(t, data, tc.body)
		})
	}
	resp, data := call(t, http.MethodGet, base+"/healthz", "", "-")
	if resp.StatusCode != http.StatusOK || string(data) != "ok\n" {
		t.Errorf("healthz: %d %q", resp.StatusCode, data)
	}
}
