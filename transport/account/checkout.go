package account

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/billing"
	"github.com/modelgate/modelgate/transport/peer"
	"github.com/modelgate/modelgate/transport/respond"
)

// Payments makes Stripe checkouts (transport/billing's Service).
type Payments interface {
	Enabled() bool
	CreditOffer() *billing.Offer
	CreditCheckout(ctx context.Context, acct persistence.Account, cents int64, returnBase string) (billing.Checkout, error)
	PlanState(acct persistence.Account) (billing.PlanView, error)
	PlanCheckout(ctx context.Context, acct persistence.Account, plan, returnBase string) (billing.PlanChange, error)
	Portal(ctx context.Context, acct persistence.Account, returnBase string) (string, error)
}

// paymentsOff answers a payment call on a gateway that takes none; false when it takes them.
func (s *Server) paymentsOff(w http.ResponseWriter) bool {
	if s.Payments != nil && s.Payments.Enabled() {
		return false
	}
	respond.Error(w, http.StatusNotFound, "invalid_request_error", "payments_disabled", "",
		"this gateway takes no payments (its catalog has no billing.stripe); ask the operator")
	return true
}

// providerFailed answers a call Stripe did not answer.
func (s *Server) providerFailed(w http.ResponseWriter, acct persistence.Account, what string, err error) {
	s.Logger.Error("stripe "+what+" failed", "account", acct.ID, "err", err)
	respond.Error(w, http.StatusBadGateway, "api_error", "payment_provider_error", "",
		"the payment provider could not be reached; try again shortly")
}

// creditCheckout answers POST /account/v1/credits/checkout {"amount_usd": "25.00"}: a Stripe
// Checkout Session for that top-up and its URL, where the buyer pays. The credits come with
// Stripe's signed webhook once it is paid, never from this call or the buyer's way back.
func (s *Server) creditCheckout(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if s.paymentsOff(w) {
		return
	}
	var in struct {
		AmountUSD string `json:"amount_usd"`
	}
	if !admin.Decode(w, r, &in) {
		return
	}
	a, err := money.Parse(in.AmountUSD)
	cents, whole := catalog.WholeCents(a)
	if err != nil || !whole {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_amount", "amount_usd",
			"amount_usd must be a USD amount in whole cents, such as \"25.00\"")
		return
	}
	co, err := s.Payments.CreditCheckout(r.Context(), acct, cents, peer.PublicBase(r, s.PublicURL()))
	var amountErr *billing.AmountError
	switch {
	case errors.As(err, &amountErr):
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_amount", "amount_usd", amountErr.Msg)
	case err != nil:
		s.providerFailed(w, acct, "checkout", err)
	default:
		respond.JSON(w, http.StatusOK, co)
	}
}
