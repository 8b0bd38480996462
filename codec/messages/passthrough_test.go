package messages

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// A messages body for a messages route keeps everything but model and the thinking the
// model's class resolved, said as EncodeRequest says it.
func TestPassBody(t *testing.T) {
	on, off := true, false
	const cc = `{"model":"cc","max_tokens":1000,"messages":[{"role":"user","content":"<a> & b"},{"role":"system","content":"env"}],` +
		`"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"high","task_budget":{"total":9}},"context_management":{"edits":[]}}`
	const tail = `"messages":[{"role":"user","content":"<a> & b"},{"role":"system","content":"env"}],"context_management":{"edits":[]}`
	cases := []struct {
		name      string
		thinking  ir.Thinking
		maxTokens int
		want      string
	}{
		{"adaptive model: as sent", ir.Thinking{Effort: "high", Enabled: &on, Adaptive: true}, 0,
			`{"model":"up","max_tokens":1000,` + tail + `,"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"high","task_budget":{"total":9}}}`},
		{"adaptive model, nearest effort", ir.Thinking{Effort: "max", Enabled: &on, Adaptive: true}, 0,
			`{"model":"up","max_tokens":1000,` + tail + `,"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"effort":"max","task_budget":{"total":9}}}`},
		{"budget model: enabled with the effort's budget, max_tokens above it, display kept, no effort", ir.Thinking{Effort: "high", Enabled: &on}, 0,
			`{"model":"up","max_tokens":5096,` + tail + `,"thinking":{"type":"enabled","budget_tokens":4096,"display":"omitted"},"output_config":{"task_budget":{"total":9}}}`},
		{"toggle model: adaptive, no effort", ir.Thinking{Enabled: &on}, 0,
			`{"model":"up","max_tokens":1000,` + tail + `,"thinking":{"type":"adaptive","display":"omitted"},"output_config":{"task_budget":{"total":9}}}`},
		{"off: no thinking", ir.Thinking{Enabled: &off, Effort: "none"}, 0,
			`{"model":"up","max_tokens":1000,` + tail + `,"output_config":{"task_budget":{"total":9}}}`},
		{"no reasoning, output clamped", ir.Thinking{}, 512,
			`{"model":"up","max_tokens":512,` + tail + `,"output_config":{"task_budget":{"total":9}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PassBody([]byte(cc), "up", c.thinking, c.maxTokens)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, got, c.want)
			if !bytes.Contains(got, []byte(`"<a> & b"`)) {
				t.Errorf("text is re-escaped: %s", got)
			}
		})
	}
}

func TestPassBodyDropsAnEmptyOutputConfig(t *testing.T) {
	got, err := PassBody([]byte(`{"model":"cc","max_tokens":10,"messages":[],"output_config":{"effort":"low"}}`), "up", ir.Thinking{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, `{"model":"up","max_tokens":10,"messages":[]}`)
}

// Whatever a body DecodeRequest accepts, PassBody gives JSON with the route's model, the
// members it does not rewrite as they were, and every member once.
func FuzzPassBody(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":10,"messages":[],"thinking":{"type":"enabled","budget_tokens":2000,"display":"omitted"},"output_config":{"effort":"low","x":1}}`), true)
	f.Add([]byte(`{"mod\u0065l":"m","max_tokens":10,"messages":[],"model":"n","output_config":null}`), false)
	f.Fuzz(func(t *testing.T, body []byte, on bool) {
		if _, err := Format.DecodeRequest(body); err != nil {
			return
		}
		out, err := PassBody(body, "up", ir.Thinking{Enabled: &on, Effort: "high", Adaptive: on}, 64)
		if err != nil {
			t.Fatalf("PassBody refused what DecodeRequest took: %v", err)
		}
		checkPassed(t, body, out, "thinking", "max_tokens", "output_config")
	})
}

// checkPassed: out decodes with model "up", and every member of body but model and the
// rewritten ones has the same value; no name occurs twice.
func checkPassed(t *testing.T, body, out []byte, rewritten ...string) {
	t.Helper()
	var in, got map[string]json.RawMessage
	json.Unmarshal(body, &in)
	if err := json.Unmarshal(out, &got); err != nil || string(got["model"]) != `"up"` {
		t.Fatalf("out %s: %v", out, err)
	}
	for k, v := range in {
		if k == "model" || slices.Contains(rewritten, k) {
			continue
		}
		if !bytes.Equal(got[k], v) {
			t.Fatalf("member %q changed: %s -> %s", k, v, got[k])
		}
	}
	seen := map[string]bool{}
	jsonscan.Members(out, func(k []byte, _ jsonscan.Span) bool {
		name := jsonscan.Key(k)
		if seen[name] && (name == "model" || slices.Contains(rewritten, name)) {
			t.Fatalf("%q twice in %s", name, out)
		}
		seen[name] = true
		return true
	})
}
