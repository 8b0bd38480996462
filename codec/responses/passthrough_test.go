package responses

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// A responses body for a responses route keeps everything but model and reasoning's effort and
// summary, which follow the resolved thinking; no summary is invented.
func TestPassBody(t *testing.T) {
	on, off := true, false
	const body = `{"model":"cx","input":"hi","store":false,"include":["reasoning.encrypted_content"],` +
		`"reasoning":{"effort":"medium","generate_summary":"concise","context":"all_turns"}}`
	const rest = `"input":"hi","store":false,"include":["reasoning.encrypted_content"]`
	cases := []struct {
		name      string
		thinking  ir.Thinking
		maxTokens int
		want      string
	}{
		{"effort model: nearest effort, summary under its current name", ir.Thinking{Effort: "high", Enabled: &on, Summary: "concise", IncludeText: true}, 0,
			`{"model":"up",` + rest + `,"reasoning":{"effort":"high","summary":"concise","context":"all_turns"}}`},
		{"toggle model on: the model's effort", ir.Thinking{Enabled: &on, Summary: "concise", IncludeText: true}, 0,
			`{"model":"up",` + rest + `,"reasoning":{"summary":"concise","context":"all_turns"}}`},
		{"off", ir.Thinking{Enabled: &off, Effort: "none"}, 0,
			`{"model":"up",` + rest + `,"reasoning":{"effort":"none","context":"all_turns"}}`},
		{"no reasoning, output capped", ir.Thinking{}, 50,
			`{"model":"up",` + rest + `,"reasoning":{"context":"all_turns"},"max_output_tokens":50}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PassBody([]byte(body), "up", c.thinking, c.maxTokens)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "body", got, c.want)
		})
	}
	got, _ := PassBody([]byte(`{"model":"cx","input":"hi","reasoning":{"effort":"low"}}`), "up", ir.Thinking{}, 0)
	sameJSON(t, "body without reasoning left", got, `{"model":"up","input":"hi"}`)
}

// Whatever a body DecodeRequest accepts, PassBody gives JSON with the route's model, the
// members it does not rewrite as they were, and every member once.
func FuzzPassBody(f *testing.F) {
	f.Add([]byte(`{"model":"m","input":"hi","reasoning":{"effort":"low","summary":"auto","x":1},"max_output_tokens":9}`), "high")
	f.Add([]byte(`{"mod\u0065l":"m","input":"hi","model":"n","reasoning":null}`), "")
	f.Fuzz(func(t *testing.T, body []byte, effort string) {
		if _, err := Format.DecodeRequest(body); err != nil {
			return
		}
		out, err := PassBody(body, "up", ir.Thinking{Effort: effort, Summary: "auto"}, 64)
		if err != nil {
			t.Fatalf("PassBody refused what DecodeRequest took: %v", err)
		}
		var in, got map[string]json.RawMessage
		json.Unmarshal(body, &in)
		if err := json.Unmarshal(out, &got); err != nil || string(got["model"]) != `"up"` || string(got["max_output_tokens"]) != "64" {
			t.Fatalf("out %s: %v", out, err)
		}
		for k, v := range in {
			if k != "model" && k != "reasoning" && k != "max_output_tokens" && !bytes.Equal(got[k], v) {
				t.Fatalf("member %q changed: %s -> %s", k, v, got[k])
			}
		}
	})
}
