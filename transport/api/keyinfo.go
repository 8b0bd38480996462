package api

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
)

// keyInfo is GET /v1/key's data: OpenRouter's /api/v1/key fields first (clients and tools
// read them), money as exact decimal strings rather than its floats, then the gateway's own.
type keyInfo struct {
	Label          string         `json:"label"`
	Usage          string         `json:"usage"` // this month's, as usage_monthly (README, "GET /v1/key")
	UsageDaily     string         `json:"usage_daily"`
	UsageMonthly   string         `json:"usage_monthly"`
	Limit          *string        `json:"limit"`
	LimitRemaining *string        `json:"limit_remaining"`
	IsFreeTier     bool           `json:"is_free_tier"`
	RateLimit      *keyRateLimit  `json:"rate_limit"`
	Key            keyRecord      `json:"key"`
	Today          keyPeriodUsage `json:"today"`
	ThisMonth      keyPeriodUsage `json:"this_month"`
	Account        keyAccount     `json:"account"`
}

type keyRateLimit struct {
	Requests  int64  `json:"requests"`
	Interval  string `json:"interval"`
	Remaining int64  `json:"remaining"`
	ResetsAt  string `json:"resets_at"`
}

type keyRecord struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Hint      string   `json:"hint"`
	Models    []string `json:"models"`
	ZDR       bool     `json:"zdr"`
	CreatedAt string   `json:"created_at"`
}

// keyPeriodUsage is what the request log holds for the key since a UTC day's or month's start.
type keyPeriodUsage struct {
	Since    string `json:"since"`
	Requests int64  `json:"requests"`
	CostUSD  string `json:"cost_usd"`
}

type keyAccount struct {
	ID               string       `json:"id"`
	Plan             string       `json:"plan"`
	CreditBalanceUSD string       `json:"credit_balance_usd"`
	Window           keyAllowance `json:"window"`
	Weekly           keyAllowance `json:"weekly"`
}

// keyAllowance is an allowance in calls; Limit 0 is unlimited, and Remaining is then null.
type keyAllowance struct {
	Used      float64  `json:"used"`
	Limit     int64    `json:"limit"`
	Remaining *float64 `json:"remaining"`
	ResetsAt  string   `json:"resets_at"`
}

// keyLimits is the calling key's own spending budget and what is left of it in the current
// period (its spend and what its calls in flight hold taken off), in USD; both nil for a key
// without a budget.
func (s *Server) keyLimits(ctx context.Context, k persistence.Key, plan *catalog.Plan) (limit, remaining *string, err error) {
	if k.Limits.Budget == 0 {
		return nil, nil, nil
	}
	st, err := s.Quota.KeyState(ctx, k.AccountID, k.ID, plan, k.Limits)
	if err != nil {
		return nil, nil, err
	}
	l, left := k.Limits.Budget.String(), st.Remaining.String()
	return &l, &left, nil
}

// keyInfo answers GET /v1/key: the calling key, its usage today and this month (UTC) from
// the request log, and its account's allowance and credits from the quota owner. It admits
// no call and counts nothing.
func (s *Server) keyInfo(w http.ResponseWriter, r *http.Request) {
	x, ok := s.beginKeyHolder(w, r, "key")
	if !ok {
		return
	}
	planName, err := s.Accounts.AccountPlan(x.key.AccountID)
	if err != nil {
		s.render(x, s.readFailed(x, "account lookup failed", err))
		return
	}
	plan, ok := x.catalog.Plan(planName)
	if !ok {
		s.render(x, errPlanNotFound(planName))
		return
	}
	now := s.now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	today, err := s.keyUsage(x.key, day)
	var month keyPeriodUsage
	if err == nil {
		month, err = s.keyUsage(x.key, time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC))
	}
	if err != nil {
		s.render(x, s.readFailed(x, "key usage read failed", err))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), budgetWait)
	defer cancel()
	st, err := s.Quota.State(ctx, x.key.AccountID, plan)
	var limit, remaining *string
	if err == nil {
		limit, remaining, err = s.keyLimits(ctx, x.key, plan)
	}
	if err != nil {
		s.Logger.Warn("quota state unavailable", "request_id", x.id, "account", x.key.AccountID, "err", err)
		s.render(x, &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: codeQuotaUnavailable, RetryAfter: 1,
			Message: "the account's limits could not be read; retry shortly"})
		return
	}
	info := keyInfo{Label: x.key.Name, Usage: month.CostUSD, UsageDaily: today.CostUSD, UsageMonthly: month.CostUSD,
		IsFreeTier: st.Balance <= 0 && st.Spent == 0, Today: today, ThisMonth: month,
		Key: keyRecord{ID: x.key.ID, Name: x.key.Name, Hint: x.key.Hint, Models: x.key.Models, ZDR: x.key.ZDR,
			CreatedAt: rfc3339(time.Unix(x.key.CreatedAt, 0))},
		Account: keyAccount{ID: x.key.AccountID, Plan: planName, CreditBalanceUSD: st.Balance.String(),
			Window: allowanceOf(st.Window), Weekly: allowanceOf(st.Weekly)}}
	if info.Label == "" {
		info.Label = x.key.Hint
	}
	if info.Key.Models == nil {
		info.Key.Models = []string{}
	}
	info.Limit, info.LimitRemaining = limit, remaining
	x.rated = true // the headers come from the state just read
	if plan.BurstRPM > 0 || plan.Throttle.Enabled() {
		b := keyBudget(st, x.key.ID, plan, now)
		info.RateLimit = &keyRateLimit{Requests: b.Limit, Interval: "1m", Remaining: b.Remaining, ResetsAt: rfc3339(b.Reset)}
		setRateHeaders(x.w, b, now)
	}
	respond.JSON(w, http.StatusOK, map[string]any{"data": info})
}

// beginKeyHolder starts a key-holder endpoint's call: any of the API's key headers is
// read. False means the refusal was answered.
func (s *Server) beginKeyHolder(w http.ResponseWriter, r *http.Request, endpoint string) (*exchange, bool) {
	x := s.begin(w, r, endpoint)
	x.anyKeyHeader = true
	_, ok := s.openUnrecorded(w, r, x, false)
	return x, ok
}

// keyUsage sums the key's log entries from since on: the usage query's totals.
func (s *Server) keyUsage(k persistence.Key, since time.Time) (keyPeriodUsage, error) {
	page, err := s.Log.QueryLog(persistence.LogQuery{Account: k.AccountID, KeyID: k.ID, From: since, Limit: 1})
	if err != nil {
		return keyPeriodUsage{}, err
	}
	return keyPeriodUsage{Since: rfc3339(since), Requests: page.Totals.Count, CostUSD: money.Amount(page.Totals.Cost).String()}, nil
}

func allowanceOf(a quota.Allowance) keyAllowance {
	v := keyAllowance{Used: float64(a.Used) / 1000, Limit: a.Limit / 1000, ResetsAt: rfc3339(a.ResetsAt)}
	if a.Limit > 0 {
		left := float64(max(0, a.Limit-a.Used-a.Reserved)) / 1000
		v.Remaining = &left
	}
	return v
}

// readFailed is the answer to a store read that failed: logged, and a 500 to retry.
func (s *Server) readFailed(x *exchange, what string, err error) *apiError {
	s.Logger.Error(what, "request_id", x.id, "account", x.key.AccountID, "err", err)
	return &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error", Message: "the account's records could not be read; try again"}
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
