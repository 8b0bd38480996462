package api_test

import (
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// An upstream that reports negative token counts is served and logged with them read as 0:
// the call costs what its non-negative counts say, and its settle is never refused for a
// negative cost (which answered a 503 cannot_record instead of the model's answer).
func TestNegativeUsageCountsAsZero(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	cases := []struct {
		name, route, model, path, body, answer string
		input, output                          int64
	}{
		{name: "chat", route: "fc", model: "fx-chat", path: "/v1/chat/completions",
			body:   `{"model":"fx-chat","messages":[{"role":"user","content":"hi"}]}`,
			answer: `{"id":"c1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":-5,"total_tokens":2}}`,
			input:  7},
		{name: "messages", route: "fm", model: "fx-msg", path: "/v1/messages",
			body:   `{"model":"fx-msg","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`,
			answer: `{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":-3,"output_tokens":4}}`,
			output: 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.SetJSON(c.route, []byte(c.answer))
			resp := env.Post(c.path, env.Key, c.body)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			var found bool
			for _, e := range usage(t, env) {
				if e.RequestID != resp.Header.Get("X-Request-Id") {
					continue
				}
				found = true
				if e.Status != 200 || e.InputTokens != c.input || e.OutputTokens != c.output || e.Cost < 0 {
					t.Fatalf("logged %+v, want input %d output %d", e, c.input, c.output)
				}
			}
			if !found {
				t.Fatal("the call is not in the log")
			}
		})
	}
}
