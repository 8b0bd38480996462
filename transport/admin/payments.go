package admin

import (
	"net/http"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/transport/respond"
)

// paymentView is one Stripe payment as the operator reads it.
type paymentView struct {
	StripeID  string `json:"stripe_id"`
	EventID   string `json:"stripe_event_id"`
	Customer  string `json:"stripe_customer,omitempty"`
	Kind      string `json:"kind"`
	Outcome   string `json:"outcome"`
	Account   string `json:"account_id"`
	AmountUSD string `json:"amount_usd"` // credits added, negative when taken back
	Cents     int64  `json:"charged_cents"`
	At        string `json:"at"`
	// A plan event's subscription, and the plan it left the account on (then next_plan from
	// next_plan_at).
	Subscription string `json:"stripe_subscription,omitempty"`
	Plan         string `json:"plan,omitempty"`
	NextPlan     string `json:"next_plan,omitempty"`
	NextPlanAt   string `json:"next_plan_at,omitempty"`
}

// listPayments answers GET /admin/v1/payments: every credit purchase and reversal made
// through Stripe, and every subscription event applied to a plan, newest first.
func (s *Server) listPayments(w http.ResponseWriter, _ *http.Request) {
	out := []paymentView{}
	if s.payments != nil {
		ps, err := s.payments.Payments()
		if StoreFailed(w, err) {
			return
		}
		for _, p := range ps {
			v := paymentView{StripeID: p.StripeID, EventID: p.EventID, Customer: p.Customer, Kind: p.Kind, Outcome: p.Outcome,
				Account: p.Account, AmountUSD: money.Amount(p.Amount).String(), Cents: p.Cents, At: stamp(time.Unix(p.At, 0)),
				Subscription: p.Subscription, Plan: p.Plan, NextPlan: p.NextPlan}
			if p.NextPlanAt != 0 {
				v.NextPlanAt = stamp(time.Unix(p.NextPlanAt, 0))
			}
			out = append(out, v)
		}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"object": "list", "data": out})
}
