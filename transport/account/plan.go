package account

import (
	"errors"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/peer"
	"github.com/modelgate/modelgate/transport/respond"
)

// plan answers GET /account/v1/plan: the account's plan, a move scheduled for the end of its
// paid period, its Stripe subscription and the plans on sale.
func (s *Server) plan(w http.ResponseWriter, _ *http.Request, acct persistence.Account) {
	if s.Payments == nil {
		respond.JSON(w, http.StatusOK, billing.PlanView{Plan: acct.PlanAt(time.Now().Unix()), Plans: []billing.PlanOffer{}})
		return
	}
	v, err := s.Payments.PlanState(acct)
	if admin.StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, v)
}

// planCheckout answers POST /account/v1/plan/checkout {"plan": "pro"}: a Checkout Session to
// subscribe (session_id, url), or, for a subscriber, the change of its subscription
// (subscription), which Stripe's webhook confirms. A session only: a change of a live
// subscription charges its card at once, which a leaked API key must not do.
func (s *Server) planCheckout(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if s.paymentsOff(w) {
		return
	}
	var in struct {
		Plan string `json:"plan"`
	}
	if !admin.Decode(w, r, &in) {
		return
	}
	change, err := s.Payments.PlanCheckout(r.Context(), acct, in.Plan, peer.PublicBase(r, s.PublicURL()))
	var planErr *billing.PlanError
	switch {
	case errors.As(err, &planErr):
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_plan", "plan", planErr.Msg)
	case err != nil:
		s.providerFailed(w, acct, "plan change", err)
	default:
		respond.JSON(w, http.StatusOK, change)
	}
}

// portal answers POST /account/v1/billing/portal: the address of Stripe's billing portal for
// the account's customer (payment methods, invoices, cancellation).
func (s *Server) portal(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if s.paymentsOff(w) {
		return
	}
	url, err := s.Payments.Portal(r.Context(), acct, peer.PublicBase(r, s.PublicURL()))
	switch {
	case errors.Is(err, billing.ErrNoCustomer):
		respond.Error(w, http.StatusNotFound, "invalid_request_error", "no_subscription", "", "the account has never subscribed to a plan")
	case err != nil:
		s.providerFailed(w, acct, "billing portal", err)
	default:
		respond.JSON(w, http.StatusOK, map[string]string{"url": url})
	}
}
