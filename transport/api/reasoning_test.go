package api_test

import (
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// An effort that is none of none, minimal, low, medium, high, xhigh, max is the client's 400,
// in its own envelope, naming the allowed values, whatever format the model's route speaks; no
// upstream is called.
func TestUnknownEffortIsTheClientsError(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	const allowed = `is not one of none, minimal, low, medium, high, xhigh, max`
	cases := []struct {
		name, path, body string
		want             string // the error body without request_id
	}{
		{"chat, chat route", "/v1/chat/completions", `{"model":"chat","reasoning_effort":"extreme","messages":[{"role":"user","content":"x"}]}`,
			`{"error":{"message":"reasoning_effort \"extreme\" ` + allowed + `","type":"invalid_request_error","param":"reasoning_effort","code":"invalid_request"}}`},
		{"chat, messages route", "/v1/chat/completions", `{"model":"msg","reasoning_effort":"extreme","messages":[{"role":"user","content":"x"}]}`,
			`{"error":{"message":"reasoning_effort \"extreme\" ` + allowed + `","type":"invalid_request_error","param":"reasoning_effort","code":"invalid_request"}}`},
		{"messages", "/v1/messages", `{"model":"msg","max_tokens":10,"output_config":{"effort":"extreme"},"messages":[{"role":"user","content":"x"}]}`,
			`{"type":"error","error":{"type":"invalid_request_error","message":"output_config.effort: effort \"extreme\" ` + allowed + `","code":"invalid_request"}}`},
		{"responses", "/v1/responses", `{"model":"resp","input":"x","reasoning":{"effort":"extreme"}}`,
			`{"error":{"message":"reasoning.effort \"extreme\" ` + allowed + `","type":"invalid_request_error","param":"reasoning.effort","code":"invalid_request"}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01")
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 400 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			holder := got // chat and responses carry request_id inside error, messages beside it
			if e, ok := got["error"].(map[string]any); ok && e["request_id"] != nil {
				holder = e
			}
			if holder["request_id"] != resp.Header.Get("X-Request-Id") {
				t.Errorf("request_id %v, header %q", holder["request_id"], resp.Header.Get("X-Request-Id"))
			}
			delete(holder, "request_id")
			var want map[string]any
			json.Unmarshal([]byte(c.want), &want)
			if g, w := canonicalJSON(got), canonicalJSON(want); g != w {
				t.Errorf("body %s\nwant %s", g, w)
			}
		})
	}
	for _, route := range []string{"a", "b", "m", "r"} {
		if n := env.Sim.Calls(route); n != 0 {
			t.Errorf("route %s was called %d times", route, n)
		}
	}
}

func canonicalJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
