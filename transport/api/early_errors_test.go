package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// earlyCatalog has models whose first route (weight 1) is tried first and whose second is a
// standby (weight 0, used only when the first cannot serve), both on a Fixed upstream.
const earlyCatalog = `
server: {first_byte_timeout: 5s, idle_stream_timeout: 300ms, max_body_bytes: 65536}
models:
  - id: two-msg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: m1, format: messages, base_url: "{{FIXED}}/r/m1/v1", upstream_model: claude-sonnet-4-5, credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: m2, format: messages, base_url: "{{FIXED}}/r/m2/v1", upstream_model: claude-sonnet-4-5, credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: resp-then-msg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.0000025", completion: "0.00001"}
    routes:
      - {id: r1, format: responses, base_url: "{{FIXED}}/r/r1/v1", upstream_model: gpt-5, credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: r2, format: messages, base_url: "{{FIXED}}/r/r2/v1", upstream_model: claude-sonnet-4-5, credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: chat-then-msg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: c1, format: chat, base_url: "{{FIXED}}/r/c1/v1", upstream_model: gpt-4o, credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: c2, format: messages, base_url: "{{FIXED}}/r/c2/v1", upstream_model: claude-sonnet-4-5, credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: one-msg
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes:
      - {id: o1, format: messages, base_url: "{{FIXED}}/r/o1/v1", upstream_model: claude-sonnet-4-5, credential_env: NODETEST_SIM_KEY}
  - id: one-resp
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.0000025", completion: "0.00001"}
    routes:
      - {id: p1, format: responses, base_url: "{{FIXED}}/r/p1/v1", upstream_model: gpt-5, credential_env: NODETEST_SIM_KEY}
  - id: one-resp-b
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.0000025", completion: "0.00001"}
    routes:
      - {id: p2, format: responses, base_url: "{{FIXED}}/r/p2/v1", upstream_model: gpt-5, credential_env: NODETEST_SIM_KEY}
  - id: two-silent
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: s1, format: chat, base_url: "{{FIXED}}/r/s1/v1", upstream_model: gpt-4o, credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: s2, format: chat, base_url: "{{FIXED}}/r/s2/v1", upstream_model: gpt-4o, credential_env: NODETEST_SIM_KEY, weight: 1}
  - id: one-chat
    kind: chat
    max_output_tokens: 512
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: h1, format: chat, base_url: "{{FIXED}}/r/h1/v1", upstream_model: gpt-4o, credential_env: NODETEST_SIM_KEY}
`

func startEarly(t *testing.T) (*nodetest.Env, *nodetest.Fixed) {
	up := nodetest.StartFixed(t)
	return nodetest.Start(t, strings.ReplaceAll(earlyCatalog, "{{FIXED}}", up.URL), nodetest.Options{}), up
}

// An upstream that opened its stream and failed before any content (Anthropic's
// overloaded_error after message_start, a rate-limited response.failed after response.created,
// a role chunk and then silence) has sent the client nothing yet: the request fails over to the
// next route invisibly, and the route is judged as for the same answer before the stream.
func TestEarlyStreamErrorFailsOver(t *testing.T) {
	env, up := startEarly(t)
	good := nodetest.Testdata(t, "streams_early", "messages_text.sse")
	cases := []struct {
		name, path, body string
		first, second    string // routes
		answer           []byte // the first route's stream
		stall            time.Duration
		reason           string // the first route's cooldown reason
		failures         uint64
	}{
		{"messages overloaded after message_start", "/v1/messages", `{"model":"two-msg","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"m1", "m2", nodetest.Testdata(t, "streams_early", "messages_overloaded_after_start.sse"), 0, "", 1},
		{"responses rate limit after response.created", "/v1/chat/completions", `{"model":"resp-then-msg","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"r1", "r2", nodetest.Testdata(t, "streams_early", "responses_rate_limited_after_created.sse"), 0, routehealth.ReasonRateLimit, 1},
		{"chat role chunk then silence", "/v1/chat/completions", `{"model":"chat-then-msg","stream":true,"messages":[{"role":"user","content":"hi"}]}`,
			"c1", "c2", nodetest.Testdata(t, "streams_early", "chat_role_then_silence.sse"), 2 * time.Second, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.Set(c.first, nodetest.FixedAnswer{ContentType: "text/event-stream", Body: c.answer, Stall: c.stall})
			up.SetStream(c.second, good)
			resp := env.Post(c.path, env.Key, c.body)
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != 200 || !strings.Contains(raw, "Hello from the second route.") ||
				strings.Contains(raw, "Overloaded") || strings.Contains(raw, "Rate limit") || strings.Contains(raw, "error") {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			st := waitState(t, env, c.first, func(s *routehealth.State) bool { return s.Failures == c.failures })
			if st.Reason != c.reason {
				t.Errorf("route %s: reason %q, want %q", c.first, st.Reason, c.reason)
			}
			env.WaitIdle()
			e := usage(t, env)
			if last := e[len(e)-1]; last.Route != c.second || last.Attempts != 2 || last.Status != 200 {
				t.Fatalf("log = %+v", last)
			}
		})
	}
}

// With no other route to try, an error before any content reaches the client in its stream,
// with the provider's words, as one later in the answer does.
func TestEarlyStreamErrorWithNoRouteLeft(t *testing.T) {
	env, up := startEarly(t)
	up.SetStream("o1", nodetest.Testdata(t, "streams_early", "messages_overloaded_after_start.sse"))
	resp := env.Post("/v1/messages", env.Key, `{"model":"one-msg","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	got := frames(t, nodetest.Read(t, resp))
	if resp.StatusCode != 200 || len(got) != 3 || got[0].name != "message_start" || got[1].name != "ping" || got[2].name != "error" ||
		!strings.Contains(got[2].data, `"type":"overloaded_error"`) || !strings.Contains(got[2].data, `"message":"Overloaded"`) {
		t.Fatalf("%d %+v", resp.StatusCode, got)
	}
	env.WaitIdle()
	if e := usage(t, env); len(e) != 1 || e[0].Status != 529 || e[0].CostUSD != "0" {
		t.Fatalf("log = %+v", e)
	}
}

// A billing refusal inside an answer that had begun keeps its class but never the provider's
// words (decisions.md: the operator's problem); the route rests for the billing cooldown and
// the call costs nothing.
func TestBillingRefusalInsideAnAnswer(t *testing.T) {
	env, up := startEarly(t)
	billing := nodetest.Testdata(t, "streams_early", "responses_billing_after_text.sse")
	for _, c := range []struct{ name, route, path, body string }{
		{"responses client, same format", "p1", "/v1/responses", `{"model":"one-resp","stream":true,"input":"hi"}`},
		{"chat client, converted", "p2", "/v1/chat/completions", `{"model":"one-resp-b","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			up.SetStream(c.route, billing)
			resp := env.Post(c.path, env.Key, c.body)
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != 200 || !strings.Contains(raw, "Partial") || !strings.Contains(raw, "insufficient_quota") ||
				strings.Contains(raw, "You exceeded") || !strings.Contains(raw, "the gateway operator's side") {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			st := waitState(t, env, c.route, func(s *routehealth.State) bool { return s.Reason == routehealth.ReasonBilling })
			if st.Refusal != "You exceeded your current quota, please check your plan and billing details." {
				t.Errorf("the operator's view lost the provider's words: %q", st.Refusal)
			}
		})
	}
	env.WaitIdle()
	for _, e := range usage(t, env) {
		if e.Status != 502 || e.CostUSD != "0" {
			t.Fatalf("log = %+v", e)
		}
	}
}

// A stream that goes silent after its answer began ends with an error event naming the idle
// time-out; one silent before any content was failed over (TestEarlyStreamErrorFailsOver).
func TestChatStreamSilentMidAnswer(t *testing.T) {
	env, up := startEarly(t)
	up.Set("h1", nodetest.FixedAnswer{ContentType: "text/event-stream", Body: nodetest.Testdata(t, "streams_early", "chat_text_then_silence.sse"), Stall: 2 * time.Second})
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"one-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 200 || !strings.Contains(raw, "Half an") || !strings.Contains(raw, "idle time-out") || strings.Contains(raw, "[DONE]") {
		t.Fatalf("%d %q", resp.StatusCode, raw)
	}
}

// Every route silent past the idle time-out before its answer began (the role chunk, then
// nothing) has sent the client nothing: both are tried, and the client gets a 502 (a silent
// route is a failed one, not a busy one).
func TestChatStreamIdleTimeout(t *testing.T) {
	env, up := startEarly(t)
	silent := nodetest.FixedAnswer{ContentType: "text/event-stream", Body: nodetest.Testdata(t, "streams_early", "chat_role_then_silence.sse"), Stall: 2 * time.Second}
	up.Set("s1", silent)
	up.Set("s2", silent)
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"two-silent","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 502 || !strings.Contains(raw, `"code":"upstream_error"`) {
		t.Fatalf("%d %q", resp.StatusCode, raw)
	}
	env.WaitIdle()
	if e := usage(t, env); len(e) != 1 || e[0].Attempts != 2 || e[0].Status != 502 {
		t.Fatalf("log = %+v", e)
	}
}
