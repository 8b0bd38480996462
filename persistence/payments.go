package persistence

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// Payments: what account holders paid through Stripe, one record per Stripe object (a
// checkout session for a credit purchase, a refund, a dispute), for the operator's view.
// payment/<stripe object id> holds a Payment. The money itself moves through the account's
// credit grants (the quota owner); a payment record is written after its grant is durable,
// and again on a retried webhook, which finds the grant already made and writes the same
// record: recording is idempotent by the Stripe id.
const (
	nsPayment   = "payment/"
	nsPaymentPI = "paypi/" // paypi/<payment intent id> → the purchase's Stripe id, for refunds and disputes
)

// Payment kinds and outcomes.
const (
	PaymentCredits  = "credits"  // a credit purchase (checkout.session.completed, paid)
	PaymentRefund   = "refund"   // a refund or dispute taking credits back
	GrantedOutcome  = "granted"  // credits added
	ReversedOutcome = "reversed" // credits taken back
)

// Payment is one record. Money is pico-USD; At is unix seconds UTC.
type Payment struct {
	StripeID string `msgpack:"id"`   // cs_…, re_…, dp_…
	EventID  string `msgpack:"evt"`  // the first webhook event that applied it
	Kind     string `msgpack:"kind"` // PaymentCredits, PaymentRefund
	Outcome  string `msgpack:"out"`
	Account  string `msgpack:"acct"`
	Amount   int64  `msgpack:"amt"`           // credits added (negative: taken back)
	Cents    int64  `msgpack:"cents"`         // what Stripe charged or refunded
	Customer string `msgpack:"cus,omitempty"` // cus_…
	// PaymentIntent is a purchase's pi_…: what its refunds and disputes name.
	PaymentIntent string `msgpack:"pi,omitempty"`
	At            int64  `msgpack:"at"`
}

// maxStripeID bounds a Stripe object id (they are about 30 to 70 characters).
const maxStripeID = 255

func validatePayment(p *Payment) error {
	switch {
	case p.StripeID == "" || len(p.StripeID) > maxStripeID || strings.ContainsAny(p.StripeID, "/\x00"):
		return invalidf("stripe_id", "%q is not a Stripe object id", p.StripeID)
	case p.Kind != PaymentCredits && p.Kind != PaymentRefund:
		return invalidf("kind", "%q is not a payment kind", p.Kind)
	case p.Account == "":
		return invalidf("account", "a payment needs its account")
	case len(p.PaymentIntent) > maxStripeID || strings.ContainsAny(p.PaymentIntent, "/\x00"):
		return invalidf("payment_intent", "%q is not a Stripe object id", p.PaymentIntent)
	}
	return nil
}

// RecordPayment durably stores p unless a record of its Stripe id exists (then recorded is
// false and the first record stays).
func (s *Store) RecordPayment(p Payment) (recorded bool, err error) {
	if err := validatePayment(&p); err != nil {
		return false, fmt.Errorf("persistence: record payment: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := dbKey(nsPayment, p.StripeID)
	if ok, err := s.has(key); err != nil || ok {
		return false, err
	}
	b := s.db.NewBatch()
	if err := putMsgpack(b, key, &p); err != nil {
		b.Close()
		return false, fmt.Errorf("persistence: record payment %s: %w", p.StripeID, err)
	}
	if p.PaymentIntent != "" && p.Kind == PaymentCredits {
		if err := b.Set(dbKey(nsPaymentPI, p.PaymentIntent), []byte(p.StripeID), nil); err != nil {
			b.Close()
			return false, fmt.Errorf("persistence: record payment %s: %w", p.StripeID, err)
		}
	}
	if err := s.commit(b); err != nil {
		return false, fmt.Errorf("persistence: record payment %s: %w", p.StripeID, err)
	}
	return true, nil
}

// PaymentByIntent returns the purchase paid by the payment intent pi; ErrNotFound when none.
func (s *Store) PaymentByIntent(pi string) (Payment, error) {
	var p Payment
	if pi == "" || len(pi) > maxStripeID || strings.ContainsAny(pi, "/\x00") {
		return p, notFound("payment intent", pi)
	}
	v, closer, err := s.db.Get(dbKey(nsPaymentPI, pi))
	if err != nil {
		if errors.Is(mapNotFound(err), ErrNotFound) {
			return p, notFound("payment intent", pi)
		}
		return p, fmt.Errorf("persistence: payment intent %s: %w", pi, err)
	}
	id := string(v)
	closer.Close()
	if err := s.getMsgpack(dbKey(nsPayment, id), &p); err != nil {
		return p, fmt.Errorf("persistence: payment %s: %w", id, err)
	}
	return p, nil
}

// Payments returns every record, newest first.
func (s *Store) Payments() ([]Payment, error) {
	var out []Payment
	err := s.scanPrefix([]byte(nsPayment), func(_, v []byte) (bool, error) {
		var p Payment
		if err := msgpack.Unmarshal(v, &p); err != nil {
			return false, err
		}
		out = append(out, p)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: list payments: %w", err)
	}
	slices.SortStableFunc(out, func(a, b Payment) int { return cmp.Compare(b.At, a.At) })
	return out, nil
}
