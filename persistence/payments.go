package persistence

import (
	"cmp"
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
const nsPayment = "payment/"

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
	At       int64  `msgpack:"at"`
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
	if err := s.commit(b); err != nil {
		return false, fmt.Errorf("persistence: record payment %s: %w", p.StripeID, err)
	}
	return true, nil
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
