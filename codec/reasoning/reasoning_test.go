package reasoning

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func ptr(b bool) *bool { return &b }

func TestResolve(t *testing.T) {
	effort := Model{Class: ClassEffort, Efforts: []string{"high", "max"}}
	lowHigh := Model{Class: ClassEffort, Efforts: []string{"low", "high"}}
	toggle := Model{Class: ClassToggle, Inline: true}
	always := Model{Class: ClassAlwaysOn}
	none := Model{Class: ClassNone}
	cases := []struct {
		name    string
		m       Model
		in      ir.Thinking
		effort  string
		enabled *bool
		used    string
		inline  bool
	}{
		{"listed effort", effort, ir.Thinking{Effort: "high"}, "high", ptr(true), "high", false},
		{"low maps up to nearest listed", effort, ir.Thinking{Effort: "low"}, "high", ptr(true), "high", false},
		{"medium between low and high goes up", lowHigh, ir.Thinking{Effort: "medium"}, "high", ptr(true), "high", false},
		{"minimal to low", lowHigh, ir.Thinking{Effort: "minimal"}, "low", ptr(true), "low", false},
		{"xhigh to max", effort, ir.Thinking{Effort: "xhigh"}, "max", ptr(true), "max", false},
		{"none disables", effort, ir.Thinking{Effort: "none"}, "none", ptr(false), "none", false},
		{"thinking disabled", effort, ir.Thinking{Enabled: ptr(false)}, "none", ptr(false), "none", false},
		{"budget 1024 is low", lowHigh, ir.Thinking{Enabled: ptr(true), BudgetTokens: 1024}, "low", ptr(true), "low", false},
		{"budget 30000 is high", lowHigh, ir.Thinking{Enabled: ptr(true), BudgetTokens: 30000}, "high", ptr(true), "high", false},
		{"enable_thinking alone is medium", lowHigh, ir.Thinking{Enabled: ptr(true)}, "high", ptr(true), "high", false},
		{"nothing asked", effort, ir.Thinking{}, "", nil, "", false},
		{"toggle: effort means on", toggle, ir.Thinking{Effort: "low"}, "", ptr(true), "", true},
		{"toggle: none means off", toggle, ir.Thinking{Effort: "none"}, "", ptr(false), "", false},
		{"toggle: silent", toggle, ir.Thinking{}, "", nil, "", false},
		{"always on ignores off", always, ir.Thinking{Enabled: ptr(false)}, "", nil, "", false},
		{"no reasoning ignores effort", none, ir.Thinking{Effort: "high"}, "", nil, "", false},
	}
	for _, c := range cases {
		d := Resolve(c.m, c.in)
		en := d.Thinking.Enabled
		if d.Thinking.Effort != c.effort || d.EffortUsed != c.used || d.SplitInline != c.inline ||
			(en == nil) != (c.enabled == nil) || en != nil && *en != *c.enabled {
			t.Errorf("%s: got effort %q used %q enabled %v inline %v", c.name, d.Thinking.Effort, d.EffortUsed, en, d.SplitInline)
		}
	}
}

func TestSplitterAcrossChunks(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		think  string
		text   string
	}{
		{"whole tags", []string{"<think>plan</think>answer"}, "plan", "answer"},
		{"split everywhere", []string{"<th", "ink>pl", "an</th", "ink>", "\nans", "wer"}, "plan", "answer"},
		{"one char at a time", strings.Split("<think>a<b</think>c", ""), "a<b", "c"},
		{"no think", []string{"<thx", "yz"}, "", "<thxyz"},
		{"leading whitespace", []string{"\n <think>x</think>y"}, "x", "y"},
		{"unclosed", []string{"<think>never closed"}, "never closed", ""},
		{"think later is content", []string{"hi <think>x</think>"}, "", "hi <think>x</think>"},
	}
	for _, c := range cases {
		var s Splitter
		var think, text strings.Builder
		run := func(evs []ir.Event) {
			for _, e := range evs {
				switch e.Kind {
				case ir.EvReasoning:
					think.WriteString(e.Text)
				case ir.EvText:
					text.WriteString(e.Text)
				}
			}
		}
		for _, ch := range c.chunks {
			run(s.Filter(ir.Event{Kind: ir.EvText, Text: ch}))
		}
		run(s.Filter(ir.Event{Kind: ir.EvFinish}))
		if think.String() != c.think || text.String() != c.text {
			t.Errorf("%s: think %q text %q", c.name, think.String(), text.String())
		}
	}
}

func TestSplitParts(t *testing.T) {
	got := SplitParts([]ir.Part{{Kind: ir.PartText, Text: "<think>why</think>\nbecause"}})
	if len(got) != 2 || got[0].Reasoning.Text != "why" || got[1].Text != "because" {
		t.Fatalf("%+v", got)
	}
}

// The catalog's adaptive flag reaches the encoder with the resolved thinking, and a summary the
// client asked for survives when it asks nothing else (the model's default effort).
func TestResolveCarriesAdaptiveAndSummary(t *testing.T) {
	adaptive := Model{Class: ClassEffort, Efforts: []string{"low", "high"}, Adaptive: true}
	toggle := Model{Class: ClassToggle, Adaptive: true}
	none := Model{Class: ClassNone}
	cases := []struct {
		name string
		m    Model
		in   ir.Thinking
		want ir.Thinking
	}{
		{"effort on adaptive model", adaptive, ir.Thinking{Effort: "high", Enabled: ptr(true)},
			ir.Thinking{Effort: "high", Enabled: ptr(true), IncludeText: true, Adaptive: true}},
		{"off on adaptive model", adaptive, ir.Thinking{Effort: "none"},
			ir.Thinking{Effort: "none", Enabled: ptr(false), Adaptive: true}},
		{"toggle on, adaptive", toggle, ir.Thinking{Effort: "low"},
			ir.Thinking{Enabled: ptr(true), IncludeText: true, Adaptive: true}},
		{"summary alone on an effort model", adaptive, ir.Thinking{Summary: "auto"}, ir.Thinking{Summary: "auto"}},
		{"summary alone on a toggle model", toggle, ir.Thinking{Summary: "concise"}, ir.Thinking{Summary: "concise"}},
		{"summary on a model without reasoning", none, ir.Thinking{Summary: "auto"}, ir.Thinking{}},
	}
	for _, c := range cases {
		got := Resolve(c.m, c.in).Thinking
		if !sameThinking(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func sameThinking(a, b ir.Thinking) bool {
	if (a.Enabled == nil) != (b.Enabled == nil) || a.Enabled != nil && *a.Enabled != *b.Enabled {
		return false
	}
	a.Enabled, b.Enabled = nil, nil
	return a == b
}
