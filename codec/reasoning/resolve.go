// Package reasoning maps a client's thinking controls onto a model's reasoning class, and
// moves inline <think>…</think> reasoning out of content.
package reasoning

import (
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// rank orders efforts; xhigh sits between high and max, minimal below low.
var rank = map[string]int{"minimal": 0, "low": 2, "medium": 4, "high": 6, "xhigh": 7, "max": 8}

// Decision is what the gateway sends for a request's thinking.
type Decision struct {
	Thinking    ir.Thinking // what the upstream encoder expresses
	EffortUsed  string      // for the X-Reasoning-Effort header; "" when no effort applies
	SplitInline bool        // move <think>…</think> out of content
}

// Resolve applies decisions.md's rules: "none" disables; an effort the model does not list
// maps to the nearest listed one (ties go up); toggle-only models treat any effort but
// "none" as on; always-on and non-reasoning models ignore every flag.
func Resolve(m *catalog.Model, t ir.Thinking) Decision {
	on := wantsThinking(t)
	switch m.Reasoning.Class {
	case catalog.ReasoningNone:
		return Decision{}
	case catalog.ReasoningAlwaysOn:
		return Decision{Thinking: ir.Thinking{IncludeText: true, Summary: t.Summary}, SplitInline: m.Reasoning.Inline}
	case catalog.ReasoningToggle:
		if on == nil {
			return Decision{Thinking: ir.Thinking{Summary: t.Summary}} // the model's default
		}
		d := Decision{Thinking: ir.Thinking{Enabled: on, BudgetTokens: t.BudgetTokens, IncludeText: *on, Summary: t.Summary, Adaptive: m.Reasoning.Adaptive}}
		d.SplitInline = *on && m.Reasoning.Inline
		return d
	}
	// Effort-level model.
	if on != nil && !*on {
		off := false
		return Decision{Thinking: ir.Thinking{Enabled: &off, Effort: "none", Adaptive: m.Reasoning.Adaptive}, EffortUsed: "none"}
	}
	want := t.Effort
	if want == "" || want == "none" {
		switch {
		case t.BudgetTokens > 0:
			want = effortForBudget(t.BudgetTokens)
		case on != nil:
			want = "medium"
		default:
			// No thinking asked for: the model's default, with the summary the client wants.
			return Decision{Thinking: ir.Thinking{Summary: t.Summary}}
		}
	}
	used := Nearest(m.Reasoning.Efforts, want)
	yes := true
	return Decision{
		Thinking: ir.Thinking{Effort: used, Enabled: &yes, BudgetTokens: t.BudgetTokens, IncludeText: true, Summary: t.Summary,
			Adaptive: m.Reasoning.Adaptive},
		EffortUsed:  used,
		SplitInline: m.Reasoning.Inline,
	}
}

// wantsThinking reads the client's on/off intent: nil when it said nothing.
func wantsThinking(t ir.Thinking) *bool {
	yes, no := true, false
	switch {
	case t.Effort == "none":
		return &no
	case t.Enabled != nil:
		return t.Enabled
	case t.Effort != "" || t.BudgetTokens > 0:
		return &yes
	}
	return nil
}

// effortForBudget is wire-formats §7.7's reverse mapping of a token budget.
func effortForBudget(b int) string {
	switch {
	case b <= 1024:
		return "low"
	case b <= 4096:
		return "medium"
	}
	return "high"
}

// Nearest returns the listed effort closest to want; unknown wants count as medium.
func Nearest(listed []string, want string) string {
	if len(listed) == 0 {
		return want
	}
	w, ok := rank[want]
	if !ok {
		w = rank["medium"]
	}
	best, bestDist := listed[0], 1<<30
	for _, e := range listed {
		d := rank[e] - w
		if d < 0 {
			d = -d
		}
		if d < bestDist || d == bestDist && rank[e] > rank[best] {
			best, bestDist = e, d
		}
	}
	return best
}
