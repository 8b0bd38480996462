package billing

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Refunds and disputes take a purchase's credits back: a negative entry through the
// account's quota owner, once per Stripe change, exactly to the cent. The balance may go
// below zero (what was already spent stays spent); paid calls are then refused with 402 until
// the account is topped up again.

// Reverser is the quota service's reversal, once per idempotency key and durable.
type Reverser interface {
	ReverseCredits(ctx context.Context, account string, amount money.Amount, idempotencyKey string) (money.Amount, bool, error)
}

// charge is what the gateway reads of a Charge.
type charge struct {
	ID             string            `json:"id"`
	PaymentIntent  string            `json:"payment_intent"`
	AmountRefunded int64             `json:"amount_refunded"` // every refund so far
	Currency       string            `json:"currency"`
	Metadata       map[string]string `json:"metadata"`
}

// dispute is what the gateway reads of a Dispute.
type dispute struct {
	ID            string `json:"id"`
	PaymentIntent string `json:"payment_intent"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
}

// refunded reverses what one charge.refunded event adds to the charge's refunds: the event
// says the charge's refunds before it (previous_attributes.amount_refunded) and after, so each
// event takes back its own refund, keyed by the total it brings the charge to.
func (s *Service) refunded(r *http.Request, ev *stripe.Event) int {
	var ch charge
	if err := json.Unmarshal(ev.Data.Raw, &ch); err != nil || ch.ID == "" {
		s.d.Count(persistence.PaymentRefund, "refused")
		return http.StatusOK
	}
	before, ok := ev.Data.PreviousAttributes["amount_refunded"].(float64)
	if !ok || before < 0 || int64(before) >= ch.AmountRefunded {
		s.d.Count(persistence.PaymentRefund, "ignored") // no new refund in this event
		return http.StatusOK
	}
	cents := ch.AmountRefunded - int64(before)
	key := refundKeyPrefix + ch.ID + ":" + strconv.FormatInt(ch.AmountRefunded, 10)
	return s.reverse(r, ev.ID, ch.PaymentIntent, ch.Currency, cents, key, ch.ID+"@"+strconv.FormatInt(ch.AmountRefunded, 10))
}

// disputed reverses a disputed payment's amount (a chargeback takes the money back at once).
func (s *Service) disputed(r *http.Request, ev *stripe.Event) int {
	var d dispute
	if err := json.Unmarshal(ev.Data.Raw, &d); err != nil || d.ID == "" || d.Amount <= 0 {
		s.d.Count(persistence.PaymentRefund, "refused")
		return http.StatusOK
	}
	return s.reverse(r, ev.ID, d.PaymentIntent, d.Currency, d.Amount, disputeKeyPrefix+d.ID, d.ID)
}

// reverse takes cents back from the account whose purchase pi paid.
func (s *Service) reverse(r *http.Request, eventID, pi, currency string, cents int64, key, stripeID string) int {
	purchase, err := s.d.Store.PaymentByIntent(pi)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		s.d.Count(persistence.PaymentRefund, "ignored") // not a purchase of credits made here
		return http.StatusOK
	case err != nil:
		s.d.Count(persistence.PaymentRefund, "failed")
		return http.StatusInternalServerError
	case currency != "usd" || cents <= 0:
		s.d.Count(persistence.PaymentRefund, "refused")
		s.d.Logger.Error("stripe reversal not in US cents; not applied", "event", eventID, "currency", currency)
		return http.StatusOK
	}
	amount := catalog.CentsToCredits(cents)
	_, reversed, err := s.d.Reverser.ReverseCredits(r.Context(), purchase.Account, amount, key)
	switch {
	case errors.Is(err, quota.ErrIdempotencyConflict):
		s.d.Count(persistence.PaymentRefund, "refused")
		s.d.Logger.Error("stripe reversal made before with another amount", "event", eventID, "key", key)
		return http.StatusOK
	case err != nil:
		s.d.Count(persistence.PaymentRefund, "failed")
		s.d.Logger.Error("stripe reversal not applied yet; Stripe retries", "event", eventID, "err", err)
		return http.StatusInternalServerError
	}
	if _, err := s.d.Store.RecordPayment(persistence.Payment{StripeID: stripeID, EventID: eventID, Kind: persistence.PaymentRefund,
		Outcome: persistence.ReversedOutcome, Account: purchase.Account, Amount: -int64(amount), Cents: cents,
		Customer: purchase.Customer, PaymentIntent: pi, At: time.Now().Unix()}); err != nil {
		s.d.Count(persistence.PaymentRefund, "failed")
		return http.StatusInternalServerError
	}
	if reversed {
		s.d.Count(persistence.PaymentRefund, "reversed")
	} else {
		s.d.Count(persistence.PaymentRefund, "repeated")
	}
	return http.StatusOK
}
