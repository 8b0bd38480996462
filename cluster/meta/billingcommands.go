package meta

import (
	"fmt"

	"github.com/modelgate/modelgate/persistence"
)

// The Stripe writes: a payment's record, and a subscription event (the subscription, the
// account's plan and its record in one write). Replicated like the accounts they name, so
// the operator's payments list, a refund's search for its purchase and the plan an account
// is on are the same on every node, whichever node Stripe's webhook reached.
const (
	KindRecordPayment Kind = "record_payment" // Payment
	KindSubscription  Kind = "subscription"   // Subscription
)

// RecordPayment proposes a payment's record; recorded is false when one of its Stripe id
// was there already.
func (s *Store) RecordPayment(p persistence.Payment) (recorded bool, err error) {
	res, err := s.propose(Command{Kind: KindRecordPayment, Payment: &p})
	return res.Recorded, err
}

// ApplySubscription proposes a decided subscription event; applied is false when the
// event was applied before.
func (s *Store) ApplySubscription(c persistence.SubscriptionChange) (persistence.Account, bool, error) {
	res, err := s.propose(Command{Kind: KindSubscription, Subscription: &c})
	a, err := account(res, err)
	return a, res.Recorded, err
}

// Payments reads this node's replica.
func (s *Store) Payments() ([]persistence.Payment, error) { return s.local.Payments() }

// PaymentByIntent reads this node's replica (fresh): a refund received here a moment
// after its purchase was recorded on another node still finds it.
func (s *Store) PaymentByIntent(pi string) (persistence.Payment, error) {
	return fresh(s, func() (persistence.Payment, error) { return s.local.PaymentByIntent(pi) })
}

// Subscription reads this node's replica once it has applied what the shard committed
// before the call (current): an event is decided on the subscription as it is.
func (s *Store) Subscription(accountID string) (persistence.Subscription, error) {
	return current(s, func() (persistence.Subscription, error) { return s.local.Subscription(accountID) })
}

// applyBilling runs the apply half of a Stripe write.
func applyBilling(b *persistence.MetaBatch, cmd Command) (Result, error) {
	var res Result
	var err error
	switch {
	case cmd.Kind == KindRecordPayment && cmd.Payment != nil:
		res.Recorded, err = b.RecordPayment(*cmd.Payment)
	case cmd.Kind == KindSubscription && cmd.Subscription != nil:
		var a persistence.Account
		a, res.Recorded, err = b.ApplySubscription(*cmd.Subscription)
		res.Account = &a
	default:
		return res, &persistence.Error{Kind: persistence.ErrInvalid, Field: "command",
			Msg: fmt.Sprintf("command of kind %q without its payload", cmd.Kind)}
	}
	return res, err
}

func isBillingKind(k Kind) bool { return k == KindRecordPayment || k == KindSubscription }
