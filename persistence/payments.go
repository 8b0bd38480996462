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
// checkout session for a credit purchase, a refund, a dispute) or per subscription event
// that moved an account between plans, for the operator's view.
// payment/<stripe id> holds a Payment. The money itself moves through the account's credit
// grants (the quota owner); a payment record is written after its grant is durable, and
// again on a retried webhook, which finds the grant already made and writes the same record:
// recording is idempotent by the Stripe id. The records are metadata (metaspace.go): a
// cluster replicates them to every node, so a refund finds its purchase whichever node
// received either webhook.
const (
	nsPayment   = "payment/"
	nsPaymentPI = "paypi/" // paypi/<payment intent id> → the purchase's Stripe id, for refunds and disputes
)

// Payment kinds and outcomes.
const (
	PaymentCredits  = "credits"  // a credit purchase (checkout.session.completed, paid)
	PaymentRefund   = "refund"   // a refund or dispute taking credits back
	PaymentPlan     = "plan"     // a subscription event applied to the account's plan
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
	// A plan record's subscription (sub_…), and the plan it left the account on: Plan now,
	// NextPlan from NextPlanAt.
	Subscription string `msgpack:"sub,omitempty"`
	Plan         string `msgpack:"plan,omitempty"`
	NextPlan     string `msgpack:"next,omitempty"`
	NextPlanAt   int64  `msgpack:"next_at,omitempty"`
}

// maxStripeID bounds a Stripe object id (they are about 30 to 70 characters).
const maxStripeID = 255

func validatePayment(p *Payment) error {
	switch {
	case p.StripeID == "" || len(p.StripeID) > maxStripeID || strings.ContainsAny(p.StripeID, "/\x00"):
		return invalidf("stripe_id", "%q is not a Stripe object id", p.StripeID)
	case p.Kind != PaymentCredits && p.Kind != PaymentRefund && p.Kind != PaymentPlan:
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
	err = s.UpdateMeta(func(b *MetaBatch) (err error) {
		recorded, err = b.RecordPayment(p)
		return err
	})
	return recorded, err
}

// RecordPayment is RecordPayment's apply half (the cluster's metadata shard applies it).
func (m *MetaBatch) RecordPayment(p Payment) (recorded bool, err error) {
	if err := validatePayment(&p); err != nil {
		return false, fmt.Errorf("persistence: record payment: %w", err)
	}
	key := dbKey(nsPayment, p.StripeID)
	if ok, err := hasIn(m.b, key); err != nil || ok {
		return false, err
	}
	if err := putMsgpack(m.b, key, &p); err != nil {
		return false, fmt.Errorf("persistence: record payment %s: %w", p.StripeID, err)
	}
	if p.PaymentIntent != "" && p.Kind == PaymentCredits {
		if err := m.b.Set(dbKey(nsPaymentPI, p.PaymentIntent), []byte(p.StripeID), nil); err != nil {
			return false, fmt.Errorf("persistence: record payment %s: %w", p.StripeID, err)
		}
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
