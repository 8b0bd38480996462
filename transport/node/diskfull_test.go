package node_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// jsonField reads a dotted path of a JSON object ("error.code").
func jsonField(raw []byte, path string) any {
	var v any
	json.Unmarshal(raw, &v)
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// TestDiskFullIsA503 fakes a full disk (the fault suite fills a real one,
// diskfull_faults_test.go): while the data directory's disk is below its reserve, every call is
// refused before any upstream with a 503 in its client's envelope and a Retry-After, reads go
// on, /healthz says degraded, modelgate_store_writable is 0, and one line is logged; when space
// returns, calls are served again by themselves, and every answered call is in the log — and no
// refusal for the full disk, which could not be recorded (an unrecorded call is never
// acknowledged, and never logged later).
func TestDiskFullIsA503(t *testing.T) {
	disk := nodetest.NewDisk(1 << 40)
	var logs nodetest.LogBuffer
	env := nodetest.Start(t, "", nodetest.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Store: persistence.Options{MinFreeBytes: 4 << 20, BallastBytes: 1 << 20, RecheckEvery: 20 * time.Millisecond, FreeSpace: disk.FreeSpace, MeasureEvery: -1}})
	env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1","idempotency_key":"c1"}`).Body.Close()
	calls := []struct {
		name, path, body string
		want             map[string]any // the envelope's fields
	}{
		{"chat", "/v1/chat/completions", chat("chat", "hi"),
			map[string]any{"error.type": "server_error", "error.code": "cannot_record"}},
		{"chat stream", "/v1/chat/completions", `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			map[string]any{"error.type": "server_error", "error.code": "cannot_record"}},
		{"messages", "/v1/messages", `{"model":"msg","max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`,
			map[string]any{"type": "error", "error.type": "overloaded_error", "error.code": "cannot_record"}},
		{"responses", "/v1/responses", `{"model":"resp","input":"hi"}`,
			map[string]any{"error.type": "service_unavailable_error", "error.code": "cannot_record"}},
		{"gemini", "/v1beta/models/gem:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`,
			map[string]any{"error.code": 503.0, "error.status": "UNAVAILABLE"}},
		{"embeddings", "/v1/embeddings", `{"model":"embed","input":"hi"}`,
			map[string]any{"error.type": "server_error", "error.code": "cannot_record"}},
		{"images", "/v1/images/generations", `{"model":"img","prompt":"a fox"}`,
			map[string]any{"error.type": "server_error", "error.code": "cannot_record"}},
		{"videos", "/v1/videos", `{"model":"vid","prompt":"a wave","mode":"text","seconds":"4"}`,
			map[string]any{"error.type": "server_error", "error.code": "cannot_record"}},
	}
	answered := map[string]int{} // request id → status, of every call made
	post := func(path, body string) (*http.Response, []byte) {
		resp := env.Post(path, env.Key, body)
		raw := nodetest.Read(t, resp)
		answered[resp.Header.Get("X-Request-Id")] = resp.StatusCode
		return resp, raw
	}
	for _, c := range calls {
		if resp, raw := post(c.path, c.body); resp.StatusCode != 200 {
			t.Fatalf("%s before the disk filled: %d %s", c.name, resp.StatusCode, raw)
		}
	}

	disk.Set(1 << 20) // below the 4 MiB reserve
	simCalls := env.Sim.Calls("a") + env.Sim.Calls("b")
	for round := 0; round < 3; round++ {
		for _, c := range calls {
			resp, raw := post(c.path, c.body)
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "10" || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s while full: %d Retry-After %q %s", c.name, resp.StatusCode, resp.Header.Get("Retry-After"), raw)
			}
			for path, want := range c.want {
				if got := jsonField(raw, path); got != want {
					t.Errorf("%s while full: %s = %v, want %v in %s", c.name, path, got, want, raw)
				}
			}
			if !strings.Contains(string(raw), "cannot record calls right now") {
				t.Errorf("%s while full: the message does not say why: %s", c.name, raw)
			}
		}
	}
	if n := env.Sim.Calls("a") + env.Sim.Calls("b"); n != simCalls {
		t.Errorf("%d upstream calls while the disk was full, want none", n-simCalls)
	}
	if r := env.Do(http.MethodGet, "/v1/models", env.Key, ""); r.StatusCode != 200 {
		t.Errorf("model list while full: %d", r.StatusCode)
	} else {
		nodetest.Read(t, r)
	}
	health := nodetest.Read(t, env.Do(http.MethodGet, "/healthz", "", ""))
	if jsonField(health, "status") != "degraded" || jsonField(health, "store.writable") != false ||
		!strings.Contains(jsonField(health, "store.reason").(string), "below the 4.0 MiB reserve") {
		t.Errorf("healthz while full = %s", health)
	}
	if r := env.Do(http.MethodGet, "/readyz", "", ""); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readyz while full: %d %s, want 503: calls are refused", r.StatusCode, nodetest.Read(t, r))
	} else if b := nodetest.Read(t, r); jsonField(b, "status") != "degraded" || jsonField(b, "store") != "the data directory's disk is full; writes resume once 4.0 MiB are free" {
		t.Errorf("readyz while full = %s", b)
	}
	if m := env.Metrics(); !strings.Contains(m, "modelgate_store_writable 0") ||
		!strings.Contains(m, "modelgate_store_free_bytes 1.048576e+06") {
		t.Errorf("metrics while full lack modelgate_store_writable 0 and the free bytes")
	}
	if n := strings.Count(logs.String(), "data directory full"); n != 1 {
		t.Errorf("%d 'data directory full' lines for %d refused calls, want 1", n, 3*len(calls))
	}

	disk.Set(1 << 40)
	testutil.WaitFor(t, "calls to be served again", func() bool {
		resp, _ := post(calls[0].path, calls[0].body)
		return resp.StatusCode == 200
	})
	for _, c := range calls {
		if resp, raw := post(c.path, c.body); resp.StatusCode != 200 {
			t.Errorf("%s after space returned: %d %s", c.name, resp.StatusCode, raw)
		}
	}
	if h := nodetest.Read(t, env.Do(http.MethodGet, "/healthz", "", "")); string(h) != `{"status":"ok"}` {
		t.Errorf("healthz after space returned = %s", h)
	}
	if r := env.Do(http.MethodGet, "/readyz", "", ""); r.StatusCode != http.StatusOK {
		t.Errorf("readyz after space returned: %d %s", r.StatusCode, nodetest.Read(t, r))
	} else {
		nodetest.Read(t, r)
	}
	if m := env.Metrics(); !strings.Contains(m, "modelgate_store_writable 1") {
		t.Error("metrics after space returned lack modelgate_store_writable 1")
	}
	if n := strings.Count(logs.String(), "has space again"); n != 1 {
		t.Errorf("%d 'has space again' lines, want 1", n)
	}

	// Every call served is in the log; no call refused for the full disk is.
	resp := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/usage", "")
	var usage struct {
		Data []persistence.LogEntry `json:"data"`
	}
	json.Unmarshal(nodetest.Read(t, resp), &usage)
	logged := map[string]int{}
	for _, e := range usage.Data {
		logged[e.RequestID] = e.Status
	}
	for id, status := range answered {
		if got, present := logged[id]; status == 200 && got != 200 || status == 503 && present {
			t.Errorf("request %s answered %d is logged as %d (logged: %v)", id, status, got, present)
		}
	}
}
