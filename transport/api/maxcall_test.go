package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// maxCallCatalog gives calls 1 s in all, well under the idle time-out, over a Fixed upstream.
const maxCallCatalog = `
server: {first_byte_timeout: 5s, idle_stream_timeout: 5s, max_call_duration: 1s, max_body_bytes: 65536}
models:
  - id: slow
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: s1, format: chat, base_url: "{{FIXED}}/r/s1/v1", upstream_model: gpt-4o, credential_env: NODETEST_SIM_KEY}
`

// A call still running at server.max_call_duration is cut, whatever its upstream still
// sends: a stream that has begun ends with an error event in the client's format, a call
// whose answer has not begun gets 504 call_too_long; either way the call is settled (nothing
// stays in flight) and logged once.
func TestACallIsCutAtItsMaxDuration(t *testing.T) {
	cases := []struct {
		name       string
		fixture    string
		wantStatus int
		wantBody   string
		wantLogged int
	}{
		{name: "a stream under way", fixture: "chat_text_then_silence.sse", wantStatus: 200,
			wantBody: "the call ran past the gateway's longest allowed call (1s); the answer is incomplete", wantLogged: 502},
		{name: "no answer begun", fixture: "chat_role_then_silence.sse", wantStatus: 504,
			wantBody: `"code":"call_too_long"`, wantLogged: 504},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := nodetest.StartFixed(t)
			env := nodetest.Start(t, strings.ReplaceAll(maxCallCatalog, "{{FIXED}}", up.URL), nodetest.Options{})
			up.Set("s1", nodetest.FixedAnswer{ContentType: "text/event-stream", Body: nodetest.Testdata(t, "streams_early", tc.fixture), Stall: 4 * time.Second})
			start := time.Now()
			resp := env.Post("/v1/chat/completions", env.Key, `{"model":"slow","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
			raw := string(nodetest.Read(t, resp))
			took := time.Since(start)
			if resp.StatusCode != tc.wantStatus || !strings.Contains(raw, tc.wantBody) {
				t.Fatalf("%d %q\nwant %d with %s", resp.StatusCode, raw, tc.wantStatus, tc.wantBody)
			}
			if took < time.Second || took > 3*time.Second {
				t.Errorf("the call ended after %s, want about 1s (the upstream stalled 4s)", took)
			}
			env.WaitIdle()
			if e := usage(t, env); len(e) != 1 || e[0].Status != tc.wantLogged {
				t.Fatalf("log = %+v, want one entry with status %d", e, tc.wantLogged)
			}
		})
	}
}
