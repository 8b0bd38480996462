package messages

import (
	"bytes"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
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
