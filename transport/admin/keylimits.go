package admin

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
)

// keyPatch is the body of PATCH /admin/v1/keys/{id} (and of the account API's key update):
// each member given replaces the key's, null or absent leaves it. limits replaces all the
// key's limits: {} removes them.
type keyPatch struct {
	Name   *string                    `json:"name"`
	Models *[]string                  `json:"models"`
	ZDR    *bool                      `json:"zdr"`
	Limits *persistence.KeyLimitsJSON `json:"limits"`
}

// updateKey answers PATCH /admin/v1/keys/{id}: the key as stored after the change.
func (s *Server) updateKey(w http.ResponseWriter, r *http.Request) {
	s.ServeUpdateKey(w, r, mux.Vars(r)["id"])
}

// ServeUpdateKey applies the request's keyPatch to the key and answers it as stored.
func (s *Server) ServeUpdateKey(w http.ResponseWriter, r *http.Request, id string) {
	var in keyPatch
	if !Decode(w, r, &in) {
		return
	}
	u := persistence.KeyUpdate{Name: in.Name, Models: in.Models, ZDR: in.ZDR}
	if in.Models != nil && !s.modelsExist(w, *in.Models) {
		return
	}
	if in.Limits != nil {
		l, err := in.Limits.Limits()
		if StoreFailed(w, err) {
			return
		}
		u.Limits = &l
	}
	k, err := s.store.UpdateKey(id, u)
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, k)
}

// keyLimits reads a new key's limits member (nil: none).
func keyLimits(w http.ResponseWriter, j *persistence.KeyLimitsJSON) (persistence.KeyLimits, bool) {
	if j == nil {
		return persistence.KeyLimits{}, true
	}
	l, err := j.Limits()
	return l, !StoreFailed(w, err)
}

// keyBudgetView is one key's budget in the admin quota view.
type keyBudgetView struct {
	KeyID        string `json:"key_id"`
	BudgetUSD    string `json:"budget_usd"`
	Period       string `json:"period"`
	SpentUSD     string `json:"spent_usd"`
	HeldUSD      string `json:"held_usd"`
	RemainingUSD string `json:"remaining_usd"`
	PeriodStart  string `json:"period_start,omitempty"`
	ResetsAt     string `json:"resets_at,omitempty"` // absent for a total budget
}

// keyBudgets are the budgets of the account's active keys that have one, with their spend in
// the current period (quota.Service.KeyState).
func (s *Server) keyBudgets(ctx context.Context, acct string, plan *catalog.Plan) ([]keyBudgetView, error) {
	keys, err := s.store.ListKeys(acct)
	if err != nil {
		return nil, err
	}
	out := []keyBudgetView{}
	for _, k := range keys {
		if k.RevokedAt != 0 || k.Limits.Budget == 0 {
			continue
		}
		st, err := s.quota.KeyState(ctx, acct, k.ID, plan, k.Limits)
		if err != nil {
			return nil, err
		}
		out = append(out, keyBudgetView{KeyID: k.ID, BudgetUSD: k.Limits.Budget.String(), Period: k.Limits.Period,
			SpentUSD: st.Spent.String(), HeldUSD: st.Held.String(), RemainingUSD: st.Remaining.String(),
			PeriodStart: stamp(st.PeriodStart), ResetsAt: stamp(st.ResetsAt)})
	}
	return out, nil
}
