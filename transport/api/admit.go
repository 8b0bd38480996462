package api

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
)

// Accounts is the part of the store that tells an account's plan. Every admission asks it;
// persistence.Store answers from its cache of plans, which every account write empties of
// what it changed before it returns.
type Accounts interface {
	AccountPlan(id string) (string, error)
}

// admission is what the quota owner reserved for one call.
type admission struct {
	reservation quota.Reservation
	paid        bool
	account     string
	plan        *catalog.Plan
}

// ledger is the account side of a call: its admission by the account's quota owner, the
// rate headers of its answer, the answer itself and its record in the account's ledger
// (settle.go). Every answer to a known key goes through it.
type ledger struct {
	quota    *quota.Service
	accounts Accounts
	recorder Recorder // nil: calls are admitted without asking
	logger   *slog.Logger
	board    *routehealth.Board // the gateway's clock
}

func (l *ledger) now() time.Time { return l.board.Now() }

// admit classifies the client and asks the account's quota owner for the call, in that
// order: a refused client never uses quota. It sets the X-RateLimit headers either way.
func (l *ledger) admit(r *http.Request, x *exchange, m *catalog.Model, estimated money.Amount) (*admission, *apiError) {
	return l.admitUnits(r, x, quota.Units(m.QuotaMultiplier), estimated)
}

// admitUnits is admit for a call that counts units in the plan.
func (l *ledger) admitUnits(r *http.Request, x *exchange, units int64, estimated money.Amount) (*admission, *apiError) {
	x.rated = true // from here the headers come from this account's answer, or not at all
	planName, err := l.accounts.AccountPlan(x.key.AccountID)
	if err != nil {
		l.logger.Error("account lookup failed", "request_id", x.id, "account", x.key.AccountID, "err", err)
		return nil, &apiError{Status: http.StatusInternalServerError, Type: "server_error", Code: "internal_error", Message: "the account could not be read; try again"}
	}
	plan, ok := x.catalog.Plan(planName)
	if !ok {
		l.logger.Error("account on a plan the catalog does not define", "request_id", x.id, "account", x.key.AccountID, "plan", planName)
		return nil, errPlanNotFound(planName)
	}
	if !plan.AllowAutomated && !x.catalog.Clients.IsInteractive(r.Header) {
		l.publishBudget(x, plan)
		return nil, &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "coding_agent_required",
			Message: "coding agent required: this plan serves interactive coding clients, identified by their User-Agent; automated and unknown clients need a plan that admits them"}
	}
	if l.recorder != nil && l.recorder.CheckWritable() != nil {
		x.unrecorded = true
		return nil, errCannotRecord() // its charge and log entry could not be kept
	}
	d, err := l.quota.Admit(x.admissionContext(), quota.AdmitRequest{Account: x.key.AccountID, KeyID: x.key.ID, Plan: plan,
		Units: units, EstimatedCost: estimated, At: x.arrived, KeyLimits: x.key.Limits,
		TTL: x.catalog.Server.MaxCallDuration + reservationSlack})
	if err != nil {
		if r.Context().Err() != nil {
			return nil, &apiError{Status: 499, Type: "invalid_request_error", Code: "client_closed_request", Message: "the client closed the request"}
		}
		l.logger.Error("quota admission failed", "request_id", x.id, "account", x.key.AccountID, "err", err)
		return nil, &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: codeQuotaUnavailable, RetryAfter: 1,
			Message: "the account's limits could not be checked; retry shortly"}
	}
	setRateHeaders(x.w, d.Burst, l.now())
	if d.Admitted {
		return &admission{reservation: d.Reservation, paid: d.Paid, account: x.key.AccountID, plan: plan}, nil
	}
	if d.Refused == quota.LimitKeyBudget {
		return nil, errKeyBudget(d, x.key.Limits)
	}
	return nil, refusal(d, l.now())
}

// reservationSlack is how much longer than the longest allowed call an admission reserves
// for: the settle's own wait (up to 10 s in a cluster) and clocks that differ a little.
const reservationSlack = time.Minute

// errPlanNotFound refuses a key whose account is on a plan the catalog no longer defines.
func errPlanNotFound(plan string) *apiError {
	return &apiError{Status: http.StatusForbidden, Type: "permission_error", Code: "plan_not_found",
		Message: "this account's plan " + strconv.Quote(plan) + " is not offered any more; ask the operator to move it to another plan"}
}

// cannotRecordRetry is the Retry-After of a call refused because it cannot be recorded: the
// store looks for space again every second, an operator needs a moment to free some.
const cannotRecordRetry = 10

// errCannotRecord is the answer to a call the gateway cannot record (its store refuses writes:
// the data directory's disk is full). It is refused before any upstream is called while the
// store says so, so nothing is served that could not be charged and logged; a call whose
// record fails once the upstream answered gets it in place of that answer (settle.go).
func errCannotRecord() *apiError {
	return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Code: "cannot_record", RetryAfter: cannotRecordRetry,
		Message: "the gateway cannot record calls right now (its storage refuses writes), so it answers none; nothing was charged. Retry in " +
			strconv.Itoa(cannotRecordRetry) + " s"}
}

// errRecordFailed is the answer to a call whose settle or log entry failed with err: the
// account's shard not answering in a cluster (quota.ErrUnavailable) is a 503 to retry in a
// second, anything else is the store refusing writes (errCannotRecord).
func errRecordFailed(err error) *apiError {
	if errors.Is(err, quota.ErrUnavailable) {
		return &apiError{Status: http.StatusServiceUnavailable, Type: "overloaded_error", Code: codeQuotaUnavailable, RetryAfter: 1,
			Message: "the call could not be recorded: the account's limits are unavailable right now; nothing was charged. Retry shortly"}
	}
	return errCannotRecord()
}

// admitModel resolves the requested model for an endpoint of kind, records it, announces a
// deprecation, checks the request against the model (fits; nil: nothing to check) and admits
// the call at its estimated cost. False means the error was answered.
func (l *ledger) admitModel(r *http.Request, x *exchange, name, kind string,
	fits func(*catalog.Model) *apiError, cost func(*catalog.Model) money.Amount) (*catalog.Model, bool) {
	m, e := resolveModel(x, name, kind)
	if e == nil {
		x.resolved(m)
		setDeprecation(x.w, m)
		if fits != nil {
			e = fits(m)
		}
	}
	if e == nil {
		x.adm, e = l.admit(r, x, m, cost(m))
	}
	if e != nil {
		l.fail(x, e)
		return nil, false
	}
	return m, true
}

// setRateHeaders publishes the burst budget: X-RateLimit-Reset is the seconds until the
// sliding 60-second window next frees a call.
func setRateHeaders(w http.ResponseWriter, b quota.Budget, now time.Time) {
	if b.Limit == 0 {
		return // no per-minute cap on this plan
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.FormatInt(b.Limit, 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(b.Remaining, 10))
	h.Set("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(b.Reset.Sub(now))))
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// refusal turns a quota refusal into the client's error: 429 with Retry-After for the burst
// limit and the throttle, 402 with resets_at when the allowance is gone and no credits remain.
func refusal(d quota.Decision, now time.Time) *apiError {
	e := &apiError{Status: d.Refused.Status(), Code: string(d.Refused)}
	switch d.Refused {
	case quota.LimitBurst:
		e.Code, e.Message = "burst_limit_exceeded", "per-minute burst limit reached"
	case quota.LimitThrottle:
		e.Code, e.Message = "key_throttled", "this key is temporarily limited to a lower per-minute rate after sustained heavy load"
	case quota.LimitWindow:
		e.Code, e.Message = "window_allowance_exhausted", "the plan's request allowance for this window is used up and the account has no credits"
	case quota.LimitWeekly:
		e.Code, e.Message = "weekly_cap_exhausted", "the plan's weekly request cap is used up and the account has no credits"
	case quota.LimitCredits:
		e.Code, e.Message = "insufficient_credits", "the plan's allowance is used up and the account's credits do not cover this call"
	case quota.LimitKeyRPM:
		e.Message = "this API key's own per-minute limit reached"
	case quota.LimitKeyExpired:
		return errKeyExpired(d.ResetsAt.Unix())
	default:
		e.Message = "limit reached"
	}
	if e.Status == http.StatusTooManyRequests {
		e.Type = "rate_limit_error"
		e.RetryAfter = max(ceilSeconds(d.RetryAfter), 1)
		e.Message += "; retry in " + strconv.Itoa(e.RetryAfter) + " s"
		e.Extra = map[string]any{"retry_after_seconds": e.RetryAfter, "max_rpm": d.MaxRPM}
		return e
	}
	e.Type = "insufficient_quota"
	resets := d.ResetsAt.UTC().Format(time.RFC3339)
	e.Message += "; it returns at " + resets
	e.Extra = map[string]any{"resets_at": resets}
	return e
}

// extraFields renders an error's extra members for splicing into its error object.
func extraFields(extra map[string]any) []byte {
	if len(extra) == 0 {
		return nil
	}
	b, _ := json.Marshal(extra)
	return b[1 : len(b)-1] // without the braces
}

// codeQuotaUnavailable is the code of a call refused because the account's quota owner did
// not answer in time (503 with Retry-After).
const codeQuotaUnavailable = "quota_unavailable"

// budgetWait bounds the read of the burst budget for an answer that admitted nothing: such
// an answer (a model list, a gateway-side 4xx) is never held back longer for its headers.
const budgetWait = 2 * time.Second

// publishRates sets the X-RateLimit headers of an answer to a known key that admission did
// not set: a model list, a token count, a video poll, a refusal before admission (unknown
// model, invalid body, key restriction). It reads the account's burst budget from its
// quota owner, which keeps it in memory, without taking a call from it. It runs once per
// call, before the status is written.
func (l *ledger) publishRates(x *exchange) {
	if x.rated || x.key.ID == "" || l.quota == nil {
		return
	}
	x.rated = true
	name, err := l.accounts.AccountPlan(x.key.AccountID)
	if err != nil {
		return // the answer goes out without them; admission reports this failure where it matters
	}
	if plan, ok := x.catalog.Plan(name); ok {
		l.publishBudget(x, plan)
	}
}

// publishBudget reads the burst budget of the calling key under plan and sets the headers.
func (l *ledger) publishBudget(x *exchange, plan *catalog.Plan) {
	if plan.BurstRPM == 0 && !plan.Throttle.Enabled() {
		return // no per-minute cap: nothing to publish (and nothing to ask)
	}
	ctx := x.ratesCtx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, budgetWait)
	defer cancel()
	st, err := l.quota.State(ctx, x.key.AccountID, plan)
	if err != nil {
		return
	}
	setRateHeaders(x.w, keyBudget(st, x.key.ID, plan, l.now()), l.now())
}

// keyBudget is the per-minute budget in force for one key, as admission computes it: the
// throttle's when the key is throttled, else the key's own (burst_scope key) or the
// account's. A key with no call in the window has its whole budget.
func keyBudget(st quota.QuotaState, keyID string, plan *catalog.Plan, now time.Time) quota.Budget {
	for _, k := range st.Keys {
		if k.KeyID == keyID && k.Burst.Limit > 0 {
			return k.Burst
		}
	}
	if st.Burst.Limit > 0 {
		return st.Burst
	}
	return quota.Budget{Limit: plan.BurstRPM, Remaining: plan.BurstRPM, Reset: now}
}

// answer writes a successful JSON answer to an authenticated call that was not admitted
// (lists, counts, polls), with its rate headers.
func (l *ledger) answer(x *exchange, v any) {
	l.publishRates(x)
	respond.JSON(x.w, http.StatusOK, v)
}

// render answers a known key's call with the gateway's own error, with its rate headers,
// without recording it (an endpoint that records nothing; settle.go's fail records first).
func (l *ledger) render(x *exchange, e *apiError) {
	l.publishRates(x)
	writeError(x.w, x, e)
}
