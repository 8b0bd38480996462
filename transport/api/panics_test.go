package api_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/transport/api"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// sseEvent is one event of a stream as the client read it.
type sseEvent struct{ name, data string }

func readEvents(raw []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "" && cur.data != "":
			out = append(out, cur)
			cur = sseEvent{}
		}
	}
	return out
}

// field reads a dotted path of a JSON object ("error.code").
func field(t *testing.T, raw string, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("not JSON: %s", raw)
	}
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

// TestPanicIsThatRequestsError: a handler that panics (this test build's messages decoder
// panics on a marker, see panic_inject_test.go) answers that request in its client's envelope —
// a 500 before anything was sent, the format's in-band error once its stream had begun — logs
// the stack without content, counts it per endpoint, reports the route's attempt, refunds the
// call and logs it as a 500; the node serves on.
func TestPanicIsThatRequestsError(t *testing.T) {
	var logs nodetest.LogBuffer
	env, fx := nodetest.StartWithFixed(t, nodetest.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	const canary = "CANARY-panic-prompt"
	msgs := `[{"role":"user","content":"` + canary + `"}]`
	cases := []struct {
		name, path, body string
		stream           bool
		endpoint         string
		// whole answers: the envelope's fields; streams: the last event's name and fields
		event string
		want  map[string]any
	}{
		{"chat", "/v1/chat/completions", `{"model":"fx-msg","messages":` + msgs + `}`, false, "chat", "",
			map[string]any{"error.type": "server_error", "error.code": "internal_error"}},
		{"messages", "/v1/messages", `{"model":"fx-msg","max_tokens":100,"messages":` + msgs + `}`, false, "messages", "",
			map[string]any{"type": "error", "error.type": "api_error", "error.code": "internal_error"}},
		{"responses", "/v1/responses", `{"model":"fx-msg","input":"` + canary + `"}`, false, "responses", "",
			map[string]any{"error.type": "server_error", "error.code": "internal_error"}},
		{"gemini", "/v1beta/models/fx-msg:generateContent", `{"contents":[{"role":"user","parts":[{"text":"` + canary + `"}]}]}`, false, "gemini", "",
			map[string]any{"error.code": 500.0, "error.status": "INTERNAL"}},
		{"chat stream", "/v1/chat/completions", `{"model":"fx-msg","stream":true,"messages":` + msgs + `}`, true, "chat", "",
			map[string]any{"error.type": "server_error", "error.code": "internal_error"}},
		{"messages stream", "/v1/messages", `{"model":"fx-msg","max_tokens":100,"stream":true,"messages":` + msgs + `}`, true, "messages", "error",
			map[string]any{"type": "error", "error.type": "api_error", "error.code": "internal_error"}},
		{"responses stream", "/v1/responses", `{"model":"fx-msg","stream":true,"input":"` + canary + `"}`, true, "responses", "response.failed",
			map[string]any{"response.status": "failed", "response.error.code": "server_error", "response.id": "resp_msg_panic"}},
		{"gemini stream", "/v1beta/models/fx-msg:streamGenerateContent?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"` + canary + `"}]}]}`, true, "gemini", "",
			map[string]any{"error.code": 500.0, "error.status": "INTERNAL"}},
	}
	var ids []string
	for _, c := range cases {
		if c.stream {
			fx.SetStream("fm", nodetest.Testdata(t, "panics", "answer.messages.sse"))
		} else {
			fx.SetJSON("fm", nodetest.Testdata(t, "panics", "answer.messages.json"))
		}
		resp := env.Post(c.path, env.Key, c.body)
		raw := nodetest.Read(t, resp) // a dropped connection fails here
		id := resp.Header.Get("X-Request-Id")
		ids = append(ids, id)
		got := string(raw)
		if !c.stream {
			if resp.StatusCode != 500 || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: %d %s %s", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), raw)
				continue
			}
		} else {
			events := readEvents(raw)
			if resp.StatusCode != 200 || len(events) < 2 || !strings.Contains(got, "Hello") {
				t.Errorf("%s: %d, the answer's beginning is missing: %s", c.name, resp.StatusCode, raw)
				continue
			}
			last := events[len(events)-1]
			if last.name != c.event || strings.Contains(got, "[DONE]") || strings.Contains(got, "message_stop") {
				t.Errorf("%s: stream ends with %q %s, want the in-band error %q alone", c.name, last.name, last.data, c.event)
			}
			got = last.data
		}
		for path, want := range c.want {
			if v := field(t, got, path); v != want {
				t.Errorf("%s: %s = %v, want %v in %s", c.name, path, v, want, got)
			}
		}
		if !strings.Contains(got, "the gateway failed while answering this request; nothing was charged") || !strings.Contains(got, id) {
			t.Errorf("%s: the error does not say what happened and under which request id %s: %s", c.name, id, got)
		}
	}

	// The node serves on, and the same route answers a healthy call.
	fx.SetJSON("fm", bytes.ReplaceAll(nodetest.Testdata(t, "panics", "answer.messages.json"), []byte(" "+api.PanicMarker), nil))
	if resp := env.Post("/v1/messages", env.Key, cases[1].body); resp.StatusCode != 200 {
		t.Fatalf("after the panics: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	} else {
		nodetest.Read(t, resp)
	}

	// Each panicking call is logged as a 500, refunded, and its route attempt is over.
	var statuses []string
	for _, e := range usage(t, env) {
		statuses = append(statuses, strconv.Itoa(e.Status)+"/"+e.ChargedUSD)
	}
	wantStatuses := strings.Repeat("500/0/", len(cases)) + "200/0"
	if got := strings.Join(statuses, "/"); got != strings.TrimSuffix(wantStatuses, "/") {
		t.Errorf("logged statuses/charges = %s, want %s", got, wantStatuses)
	}
	if q := quotaOf(t, env); !strings.Contains(q, `"window":{"used":1,`) || !strings.Contains(q, `"in_flight":0`) {
		t.Errorf("quota after %d panics and one call = %s; want one call used, none in flight", len(cases), q)
	}
	waitState(t, env, "fm", func(s *routehealth.State) bool { return s.InFlight == 0 })

	metrics := env.Metrics()
	for _, ep := range []string{"chat", "messages", "responses", "gemini"} {
		if line := `modelgate_panics_total{where="` + ep + `"} 2`; !strings.Contains(metrics, line) {
			t.Errorf("metrics lack %s", line)
		}
	}
	waitLog(t, &logs, len(cases))
	text := logs.String()
	for _, id := range ids {
		if !strings.Contains(text, `"request_id":"`+id+`"`) {
			t.Errorf("no log line for request %s", id)
		}
	}
	// Each stack names the injected panic's frame: a decoder, or the same-format relay's
	// scan of the answer (panicky.RelayWhole, panicky.RewriteModel).
	if strings.Count(text, "request handler panicked") != len(cases) || strings.Count(text, "panicky") < len(cases) || !strings.Contains(text, `"panic_type":"string"`) {
		t.Errorf("the panics are not logged once each with their stack:\n%s", text)
	}
	if strings.Contains(text, canary) || strings.Contains(text, api.PanicMarker) {
		t.Error("content (the prompt or the panic's text) reached the log")
	}
}

func waitLog(t *testing.T, logs *nodetest.LogBuffer, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(logs.String(), "request handler panicked") < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
}
