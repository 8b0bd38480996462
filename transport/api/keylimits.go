package api

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/persistence"
)

// BudgetResetHeader carries when a spent key budget returns (RFC 3339), on its 402: a client
// learns it without parsing the error body. A total budget never returns: no header.
const BudgetResetHeader = "X-Modelgate-Budget-Reset"

// errKeyBudget is the 402 of a key whose own budget (l) is spent for its period: it says
// when the budget returns, in the message, in resets_at and in BudgetResetHeader.
func errKeyBudget(d quota.Decision, l persistence.KeyLimits) *apiError {
	e := &apiError{Status: http.StatusPaymentRequired, Type: "insufficient_quota", Code: string(quota.LimitKeyBudget),
		Message: "this API key's " + periodWord(l.Period) + " budget of $" + l.Budget.String() + " is spent",
		Extra:   map[string]any{"budget_usd": l.Budget.String(), "period": l.Period}}
	if d.ResetsAt.IsZero() {
		e.Message += "; a total budget does not reset: raise or remove the key's budget"
		return e
	}
	resets := d.ResetsAt.UTC().Format(time.RFC3339)
	e.Message += "; it returns at " + resets
	e.Extra["resets_at"] = resets
	e.Header = http.Header{BudgetResetHeader: {resets}}
	return e
}

func periodWord(p string) string {
	switch p {
	case persistence.BudgetDay:
		return "daily"
	case persistence.BudgetWeek:
		return "weekly"
	case persistence.BudgetMonth:
		return "monthly"
	}
	return "total"
}
