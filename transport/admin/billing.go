package admin

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/respond"
)

// planExists answers 400 naming the plans on offer when name is not one of them.
func (s *Server) planExists(w http.ResponseWriter, name string) bool {
	if _, ok := s.catalog.Load().Plan(name); ok {
		return true
	}
	var names []string
	for _, p := range s.catalog.Load().Plans() {
		names = append(names, p.Name)
	}
	respond.Error(w, http.StatusBadRequest, "invalid_request_error", "unknown_plan", "plan",
		"plan "+name+" is not in the catalog; plans: "+strings.Join(names, ", "))
	return false
}

func (s *Server) setPlan(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Plan string `json:"plan"`
	}
	if !Decode(w, r, &in) || !s.planExists(w, in.Plan) {
		return
	}
	acct, err := s.store.SetAccountPlan(mux.Vars(r)["id"], in.Plan)
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, acct)
}

// addCredits adds a top-up once per idempotency key; the answer comes after it is durable.
func (s *Server) addCredits(w http.ResponseWriter, r *http.Request) {
	var in struct {
		AmountUSD      string `json:"amount_usd"`
		IdempotencyKey string `json:"idempotency_key"`
	}
	if !Decode(w, r, &in) {
		return
	}
	if in.IdempotencyKey == "" {
		in.IdempotencyKey = r.Header.Get("Idempotency-Key")
	}
	if in.IdempotencyKey == "" {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "missing_idempotency_key", "idempotency_key",
			"idempotency_key is required (in the body or the Idempotency-Key header): the same key twice adds once")
		return
	}
	if err := persistence.CheckIdempotencyKey(in.IdempotencyKey); StoreFailed(w, err) {
		return // before the account's write, which it would fail with the calls settling beside it
	}
	amount, err := money.Parse(in.AmountUSD)
	if err != nil || amount <= 0 {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_amount", "amount_usd",
			"amount_usd must be a positive decimal string such as \"25.00\"")
		return
	}
	id := mux.Vars(r)["id"]
	if _, err := s.store.GetAccount(id); StoreFailed(w, err) {
		return
	}
	balance, added, err := s.quota.AddCredits(r.Context(), id, amount, in.IdempotencyKey)
	switch {
	case errors.Is(err, quota.ErrIdempotencyConflict):
		respond.Error(w, http.StatusConflict, "invalid_request_error", "idempotency_conflict", "idempotency_key",
			"this idempotency key was used for a different amount")
		return
	case errors.Is(err, quota.ErrInvalid): // amount and key are checked above: only an overflow is left
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_amount", "amount_usd", "the balance cannot take this top-up: it would overflow")
		return
	case persistence.IsDiskFull(err):
		diskFull(w)
		return
	case err != nil:
		StoreFailed(w, err)
		return
	}
	respond.JSON(w, http.StatusOK, map[string]any{"account_id": id, "balance_usd": balance.String(), "added": added})
}

// QuotaView is the account's limits as an operator reads them (and, with its e-mail, as
// the account API's GET /account/v1/me shows them).
type QuotaView struct {
	AccountID  string          `json:"account_id"`
	Plan       string          `json:"plan"`
	BalanceUSD string          `json:"balance_usd"`
	SpentUSD   string          `json:"spent_usd"`
	HeldUSD    string          `json:"held_usd"`
	Window     allowanceView   `json:"window"`
	Weekly     allowanceView   `json:"weekly"`
	Burst      budgetView      `json:"burst"`
	Keys       []keyView       `json:"keys"`
	KeyBudgets []keyBudgetView `json:"key_budgets"` // the account's keys with a budget
	Images     dailyView       `json:"images"`
	Video      dailyView       `json:"video_seconds"`
	InFlight   int             `json:"in_flight"`
}

type allowanceView struct {
	Used     float64 `json:"used"`
	Reserved float64 `json:"reserved"`
	Limit    int64   `json:"limit"` // 0 = unlimited
	ResetsAt string  `json:"resets_at,omitempty"`
}

type budgetView struct {
	Limit     int64  `json:"limit"`
	Remaining int64  `json:"remaining"`
	ResetsAt  string `json:"resets_at,omitempty"`
}

type keyView struct {
	KeyID          string     `json:"key_id"`
	Burst          budgetView `json:"burst"`
	RecentCalls    int64      `json:"recent_calls"`
	ThrottledUntil string     `json:"throttled_until,omitempty"`
}

type dailyView struct {
	Used     int64  `json:"used"`
	Reserved int64  `json:"reserved"`
	Limit    int64  `json:"limit"`
	ResetsAt string `json:"resets_at"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func (s *Server) quotaState(w http.ResponseWriter, r *http.Request) {
	acct, err := s.store.GetAccount(mux.Vars(r)["id"])
	if StoreFailed(w, err) {
		return
	}
	if v, ok := s.Quota(w, r, acct); ok {
		respond.JSON(w, http.StatusOK, v)
	}
}

// Quota reads the account's quota view, or answers why it cannot (false).
func (s *Server) Quota(w http.ResponseWriter, r *http.Request, acct persistence.Account) (QuotaView, bool) {
	name := acct.PlanAt(time.Now().Unix())
	plan, ok := s.catalog.Load().Plan(name)
	if !ok {
		respond.Error(w, http.StatusConflict, "invalid_request_error", "unknown_plan", "plan", "the account's plan "+name+" is not in the catalog")
		return QuotaView{}, false
	}
	st, err := s.quota.State(r.Context(), acct.ID, plan)
	if StoreFailed(w, err) {
		return QuotaView{}, false
	}
	allowance := func(a quota.Allowance) allowanceView {
		return allowanceView{Used: float64(a.Used) / 1000, Reserved: float64(a.Reserved) / 1000, Limit: a.Limit / 1000, ResetsAt: stamp(a.ResetsAt)}
	}
	budget := func(b quota.Budget) budgetView {
		return budgetView{Limit: b.Limit, Remaining: b.Remaining, ResetsAt: stamp(b.Reset)}
	}
	daily := func(d quota.Daily) dailyView {
		return dailyView{Used: d.Used, Reserved: d.Reserved, Limit: d.Limit, ResetsAt: stamp(d.ResetsAt)}
	}
	v := QuotaView{AccountID: acct.ID, Plan: name, BalanceUSD: st.Balance.String(), SpentUSD: st.Spent.String(),
		HeldUSD: st.Held.String(), Window: allowance(st.Window), Weekly: allowance(st.Weekly), Burst: budget(st.Burst),
		Images: daily(st.Images), Video: daily(st.Video), InFlight: st.InFlight, Keys: []keyView{}}
	for _, k := range st.Keys {
		v.Keys = append(v.Keys, keyView{KeyID: k.KeyID, Burst: budget(k.Burst), RecentCalls: k.RecentCalls, ThrottledUntil: stamp(k.ThrottledUntil)})
	}
	if v.KeyBudgets, err = s.keyBudgets(r.Context(), acct.ID, plan); StoreFailed(w, err) {
		return QuotaView{}, false
	}
	return v, true
}
