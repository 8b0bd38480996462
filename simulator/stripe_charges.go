package simulator

import (
	"fmt"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// What can happen to a payment after the fact: refunds and disputes, sent as the charge
// events Stripe sends. A paid session has one charge; for a subscription it is the first
// invoice's payment, whose PaymentIntent the session does not name (Stripe's does not either).

// Refund refunds amountCents of session sessionID's payment (0: all that is not yet
// refunded) and sends charge.refunded: the charge with amount_refunded counting every refund
// so far, refunded true once it reaches the amount, metadata as the charge was created with
// (payment_intent_data[metadata] if the session was created with it, else the session's
// metadata), and previous_attributes. It returns the event's id once its deliveries are done.
func (s *Server) Refund(sessionID string, amountCents int64) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		ch, err := s.paidCharge(sessionID)
		if err != nil {
			return nil, err
		}
		left := ch.Amount - ch.AmountRefunded
		if amountCents == 0 {
			amountCents = left
		}
		if left == 0 || amountCents < 0 || amountCents > left {
			return nil, fmt.Errorf("simulator: cannot refund %d of session %s's payment: %d of %d is left to refund",
				amountCents, sessionID, left, ch.Amount)
		}
		prev := map[string]any{"amount_refunded": ch.AmountRefunded}
		ch.AmountRefunded += amountCents
		if ch.AmountRefunded == ch.Amount {
			prev["refunded"] = false
			ch.Refunded = true
		}
		return s.newEvent(stripe.EventTypeChargeRefunded, *ch, prev), nil
	})
}

// Dispute opens a dispute (chargeback) of session sessionID's whole payment and sends
// charge.dispute.created: a Dispute naming the charge and its payment_intent, status
// needs_response. A payment is disputed at most once. It returns the event's id once its
// deliveries are done.
func (s *Server) Dispute(sessionID string) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		ch, err := s.paidCharge(sessionID)
		if err != nil {
			return nil, err
		}
		if ch.Disputed {
			return nil, fmt.Errorf("simulator: session %s's payment is already disputed", sessionID)
		}
		ch.Disputed = true
		d := disputeObject{ID: s.newID("dp_"), Object: "dispute", Amount: ch.Amount, Charge: ch.ID,
			Created: time.Now().Unix(), Currency: ch.Currency, Metadata: map[string]string{},
			PaymentIntent: ch.PaymentIntent, Reason: stripe.DisputeReasonGeneral, Status: stripe.DisputeStatusNeedsResponse}
		return s.newEvent(stripe.EventTypeChargeDisputeCreated, d, nil), nil
	})
}

// paidCharge is the charge of a paid session. The lock is held.
func (s *Server) paidCharge(sessionID string) (*chargeObject, error) {
	sess, ok := s.stripe.sessions.get(sessionID)
	switch {
	case !ok:
		return nil, fmt.Errorf("simulator: Stripe Checkout Session %q: %w", sessionID, errStripeUnknown)
	case sess.charge == nil:
		return nil, fmt.Errorf("simulator: Checkout Session %s is not paid", sessionID)
	}
	return sess.charge, nil
}
