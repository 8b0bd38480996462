package api

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec"
)

// exhausted: overloaded when every route is cooling (529; 503 for formats without one) with
// Retry-After = the real remaining cooldown in whole seconds, at least 1; 502 when real
// attempts failed. Rendered in each client's envelope.
func TestExhaustedAnswer(t *testing.T) {
	cases := []struct {
		name     string
		spec     *clientSpec // nil: an endpoint without a client format (embeddings, images, videos)
		endpoint string
		attempts int
		onlyBusy bool
		wait     time.Duration
		status   int
		retry    string
		typ      string // the envelope's error type
	}{
		{"chat, rounded up", chatClient, "", 2, true, 2300 * time.Millisecond, 529, "3", "overloaded_error"},
		{"chat, whole seconds stay", chatClient, "", 2, true, 3 * time.Second, 529, "3", "overloaded_error"},
		{"chat, a cooldown that just ended", chatClient, "", 1, true, 0, 529, "1", "overloaded_error"},
		{"chat, under a second", chatClient, "", 1, true, time.Nanosecond, 529, "1", "overloaded_error"},
		{"chat, nothing tried", chatClient, "", 0, false, 12 * time.Second, 529, "12", "overloaded_error"},
		{"messages", messagesClient, "", 2, true, 34 * time.Second, 529, "34", "overloaded_error"},
		{"messages, a long billing cooldown, no clamp", messagesClient, "", 1, true, 15 * time.Minute, 529, "900", "overloaded_error"},
		{"responses: 503", responsesClient, "", 2, true, 2500 * time.Millisecond, 503, "3", "service_unavailable_error"},
		{"embeddings", nil, codec.FormatEmbeddings, 1, true, 4 * time.Second, 529, "4", "overloaded_error"},
		{"gemini clients: 503", nil, codec.FormatGemini, 1, true, 4 * time.Second, 503, "4", "overloaded_error"},
		{"real failures: 502", chatClient, "", 2, false, 5 * time.Second, 502, "", "upstream_error"},
		{"real failures, messages: 502", messagesClient, "", 2, false, 5 * time.Second, 502, "", "api_error"},
		{"real failures, responses: 502", responsesClient, "", 2, false, 5 * time.Second, 502, "", "server_error"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := &exchange{id: "req_test", endpoint: c.endpoint}
			if c.spec != nil {
				x.endpoint = c.spec.name
				if c.spec != chatClient {
					x.envelope = c.spec.format
				}
			}
			w := httptest.NewRecorder()
			writeError(w, x, exhausted(x, c.attempts, c.onlyBusy, c.wait))
			if w.Code != c.status || w.Header().Get("Retry-After") != c.retry {
				t.Fatalf("status %d Retry-After %q, want %d %q: %s", w.Code, w.Header().Get("Retry-After"), c.status, c.retry, w.Body)
			}
			var body struct {
				Type  string `json:"type"`
				Error struct {
					Type    string `json:"type"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatal(err)
			}
			if body.Error.Type != c.typ || body.Error.Message == "" || c.spec == messagesClient && body.Type != "error" {
				t.Fatalf("body %s, want error type %s", w.Body, c.typ)
			}
		})
	}
}
