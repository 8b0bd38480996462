// Package reasoning maps a client's thinking controls onto a model's reasoning class, and
// moves inline <think>…</think> reasoning out of content.
package reasoning

import "github.com/modelgate/modelgate/codec/ir"

// Reasoning classes (decisions.md, "Effort values"): a catalog model's reasoning.class.
const (
	ClassNone     = "none"      // no chain-of-thought
	ClassAlwaysOn = "always_on" // thinks on every call; flags are ignored
	ClassToggle   = "toggle"    // on/off, no effort levels
	ClassEffort   = "effort"    // lists the efforts it accepts
)

// Model is what Resolve reads of a model. The catalog converts its record into one
// (catalog.Reasoning.Model), so the codecs know nothing of where models are stored.
type Model struct {
	Class    string   // one of the Class constants
	Efforts  []string // ClassEffort: the efforts the model accepts, in the order low < medium < high < max
	Inline   bool     // writes its reasoning as <think>…</think> at the start of content
	Adaptive bool     // takes only adaptive thinking sized by an effort, not a budget (Claude 4.7 and later)
}

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
func Resolve(m Model, t ir.Thinking) Decision {
	on := wantsThinking(t)
	switch m.Class {
	case ClassNone:
		return Decision{}
	case ClassAlwaysOn:
		return Decision{Thinking: ir.Thinking{IncludeText: true, Summary: t.Summary}, SplitInline: m.Inline}
	case ClassToggle:
		if on == nil {
			return Decision{Thinking: ir.Thinking{Summary: t.Summary}} // the model's default
		}
		d := Decision{Thinking: ir.Thinking{Enabled: on, BudgetTokens: t.BudgetTokens, IncludeText: *on, Summary: t.Summary, Adaptive: m.Adaptive}}
		d.SplitInline = *on && m.Inline
		return d
	}
	// Effort-level model.
	if on != nil && !*on {
		off := false
		return Decision{Thinking: ir.Thinking{Enabled: &off, Effort: "none", Adaptive: m.Adaptive}, EffortUsed: "none"}
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
	used := Nearest(m.Efforts, want)
	yes := true
	return Decision{
		Thinking: ir.Thinking{Effort: used, Enabled: &yes, BudgetTokens: t.BudgetTokens, IncludeText: true, Summary: t.Summary,
			Adaptive: m.Adaptive},
		EffortUsed:  used,
		SplitInline: m.Inline,
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

// effortForBudget maps a token budget back to the effort it stands for.
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
