package api

import (
	"context"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/respond"
)

// budgetWait bounds the read of the burst budget for an answer that admitted nothing: such
// an answer (a model list, a gateway-side 4xx) is never held back longer for its headers.
const budgetWait = 2 * time.Second

// publishRates sets the X-RateLimit headers of an answer to a known key that admission did
// not set: a model list, a token count, a video poll, a refusal before admission (unknown
// model, invalid body, key restriction). It reads the account's burst budget from its
// quota owner, which keeps it in memory, without taking a call from it. It runs once per
// call, before the status is written.
func (c *call) publishRates(w http.ResponseWriter) {
	if c.rated || c.key.ID == "" || c.srv == nil || c.srv.Quota == nil {
		return
	}
	c.rated = true
	name, err := c.srv.Accounts.AccountPlan(c.key.AccountID)
	if err != nil {
		return // the answer goes out without them; admission reports this failure where it matters
	}
	if plan, ok := c.catalog.Plan(name); ok {
		c.srv.publishBudget(w, c, c.key.AccountID, plan)
	}
}

// publishBudget reads the burst budget of the calling key under plan and sets the headers.
func (s *Server) publishBudget(w http.ResponseWriter, c *call, account string, plan *catalog.Plan) {
	if plan.BurstRPM == 0 && !plan.Throttle.Enabled() {
		return // no per-minute cap: nothing to publish (and nothing to ask)
	}
	ctx := c.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, budgetWait)
	defer cancel()
	st, err := s.Quota.State(ctx, account, plan)
	if err != nil {
		return
	}
	setRateHeaders(w, keyBudget(st, c.key.ID, plan, s.now()), s.now())
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
func (c *call) answer(w http.ResponseWriter, v any) {
	c.publishRates(w)
	respond.JSON(w, http.StatusOK, v)
}
