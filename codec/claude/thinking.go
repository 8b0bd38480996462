// Package claude holds what Claude takes wherever it is served, whatever the wire format
// around it: Anthropic's messages API, Bedrock's InvokeModel (the messages body) and Bedrock's
// Converse (additionalModelRequestFields) carry the same thinking member.
package claude

import "github.com/modelgate/modelgate/codec/ir"

// EffortBudget is docs/conversion.md's effort → budget_tokens map.
var EffortBudget = map[string]int{
	"minimal": 1024, "low": 1024, "medium": 2048, "high": 4096, "xhigh": 8192, "max": 16384,
}

// MinBudget is Claude's smallest budget_tokens.
const MinBudget = 1024

// Plan is the thinking a request to Claude carries, for each format to write.
type Plan struct {
	Thinking map[string]any // the thinking member; nil to send none
	Budget   int            // its budget_tokens, which max_tokens must exceed
	Effort   string         // output_config.effort (models that take only adaptive thinking)
}

// On reports whether the plan sends thinking.
func (p Plan) On() bool { return p.Thinking != nil }

// MaxTokens raises a cap that leaves no room beside the thinking budget.
func (p Plan) MaxTokens(n int) int {
	if p.Budget > 0 && n <= p.Budget {
		return n + p.Budget
	}
	return n
}

// PlanThinking: nothing when thinking is off or not asked; for models that take only adaptive
// thinking, {"type":"adaptive"} with the effort in output_config; otherwise enabled with the
// given budget or the effort's, and adaptive when thinking is on with neither.
func PlanThinking(t ir.Thinking) Plan {
	on := t.Enabled != nil && *t.Enabled
	if t.Enabled != nil && !on || t.Effort == "none" {
		return Plan{}
	}
	if t.Adaptive {
		if !on && t.Effort == "" && t.BudgetTokens <= 0 {
			return Plan{}
		}
		return Plan{Thinking: map[string]any{"type": "adaptive"}, Effort: adaptiveEffort(t.Effort)}
	}
	budget := t.BudgetTokens
	if budget <= 0 && t.Effort != "" {
		var ok bool
		if budget, ok = EffortBudget[t.Effort]; !ok {
			budget = EffortBudget["medium"]
		}
	}
	if budget > 0 {
		budget = max(budget, MinBudget)
		return Plan{Thinking: map[string]any{"type": "enabled", "budget_tokens": budget}, Budget: budget}
	}
	if on {
		return Plan{Thinking: map[string]any{"type": "adaptive"}}
	}
	return Plan{}
}

// adaptiveEffort is the output_config.effort for an effort (the API takes low, medium, high,
// xhigh, max); "" leaves the model's default.
func adaptiveEffort(e string) string {
	if e == "minimal" {
		return "low"
	}
	return e
}
