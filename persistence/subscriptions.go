package persistence

import (
	"errors"
	"fmt"
	"strings"
)

// Subscriptions: an account's Stripe subscription as the gateway last learned it from
// Stripe's events, under subscription/<account id>: what the dashboard shows (plan, renewal,
// status), the customer Stripe's billing portal opens for, and how recent the newest event
// applied was. The plan itself is the account's (Plan, NextPlan, NextPlanAt); a subscription
// event changes both in one metadata write (ApplySubscription), so a cluster replicates them
// together.
const nsSubscription = "subscription/"

// Subscription is an account's subscription. Times are unix seconds UTC.
type Subscription struct {
	Account  string `msgpack:"acct" json:"account_id"`
	ID       string `msgpack:"id" json:"id"`            // sub_…
	Customer string `msgpack:"cus" json:"customer"`     // cus_…
	Plan     string `msgpack:"plan" json:"plan"`        // the plan its price sells
	Price    string `msgpack:"price" json:"price"`      // price_…
	Item     string `msgpack:"item,omitempty" json:"-"` // si_…: what a plan change updates
	Status   string `msgpack:"status" json:"status"`    // Stripe's: active, past_due, canceled…
	// PeriodEnd is the end of its current billing period: the next renewal.
	PeriodEnd int64 `msgpack:"end" json:"current_period_end"`
	// PaidThrough is the end of the last period Stripe said was paid.
	PaidThrough       int64 `msgpack:"paid" json:"paid_through"`
	CancelAtPeriodEnd bool  `msgpack:"cancel,omitempty" json:"cancel_at_period_end"`
	// EventAt is the creation time of the newest subscription event applied: an older one
	// arriving late (Stripe does not promise the order) is not applied over it.
	EventAt int64 `msgpack:"evt_at" json:"-"`
	// Rev counts the changes applied to the account's record (1 for the first): a change
	// names the one it was decided on (Rev+1), so two events decided at once on the same
	// record cannot both apply (ApplySubscription).
	Rev int64 `msgpack:"rev" json:"-"`
}

// SubscriptionChange is a decided subscription event: the subscription's new state, the
// plan the account takes (Plan now, NextPlan from NextPlanAt; "" for none), and the record
// that says so (Record.StripeID is the event's id, which makes the change apply once).
type SubscriptionChange struct {
	Sub        Subscription `msgpack:"sub"`
	Plan       string       `msgpack:"plan"`
	NextPlan   string       `msgpack:"next,omitempty"`
	NextPlanAt int64        `msgpack:"next_at,omitempty"`
	Record     Payment      `msgpack:"record"`
}

// Subscription returns account id's subscription; ErrNotFound when it never had one.
func (s *Store) Subscription(id string) (Subscription, error) {
	var sub Subscription
	if err := s.getMsgpack(dbKey(nsSubscription, id), &sub); err != nil {
		if errors.Is(err, ErrNotFound) {
			return sub, notFound("subscription", id)
		}
		return sub, fmt.Errorf("persistence: subscription of %s: %w", id, err)
	}
	return sub, nil
}

// ApplySubscription durably applies c: the subscription, the account's plan and the record,
// once per event (a redelivered event finds its record: applied is false, nothing changes).
func (s *Store) ApplySubscription(c SubscriptionChange) (a Account, applied bool, err error) {
	err = s.UpdateMeta(func(b *MetaBatch) (err error) {
		a, applied, err = b.ApplySubscription(c)
		return err
	})
	return a, applied, err
}

// ApplySubscription is ApplySubscription's apply half. A change decided on another record
// than the one stored (another event applied meanwhile: Rev is not the stored one's + 1) is
// refused with ErrConflict, and is decided again on the record as it is now.
func (m *MetaBatch) ApplySubscription(c SubscriptionChange) (Account, bool, error) {
	if err := validateSubscription(&c); err != nil {
		return Account{}, false, err
	}
	a, err := getAccountIn(m.b, c.Sub.Account)
	if err != nil {
		return Account{}, false, err
	}
	if done, err := hasIn(m.b, dbKey(nsPayment, c.Record.StripeID)); err != nil || done {
		return a, false, err
	}
	key := dbKey(nsSubscription, c.Sub.Account)
	var stored Subscription
	switch err := getMsgpackIn(m.b, key, &stored); {
	case err != nil && !errors.Is(err, ErrNotFound):
		return Account{}, false, fmt.Errorf("persistence: subscription of %s: %w", c.Sub.Account, err)
	case c.Sub.Rev != stored.Rev+1: // stored is zero when there is none
		return a, false, conflictf("rev", "the subscription changed meanwhile (revision %d, not %d)", stored.Rev, c.Sub.Rev-1)
	}
	if err := putMsgpack(m.b, key, &c.Sub); err != nil {
		return Account{}, false, fmt.Errorf("persistence: subscription of %s: %w", c.Sub.Account, err)
	}
	if _, err := m.RecordPayment(c.Record); err != nil {
		return Account{}, false, err
	}
	if a.Plan != c.Plan || a.NextPlan != c.NextPlan || a.NextPlanAt != c.NextPlanAt {
		a.Plan, a.NextPlan, a.NextPlanAt = c.Plan, c.NextPlan, c.NextPlanAt
		if err := m.putAccount(a, 0); err != nil {
			return Account{}, false, fmt.Errorf("persistence: set plan of %s: %w", a.ID, err)
		}
	}
	return a, true, nil
}

// validateSubscription checks all of c, its record included, before anything is written: a
// refusal leaves the batch as it was.
func validateSubscription(c *SubscriptionChange) error {
	if err := validatePayment(&c.Record); err != nil {
		return err
	}
	s := &c.Sub
	for field, id := range map[string]string{"id": s.ID, "customer": s.Customer, "price": s.Price} {
		if id == "" || len(id) > maxStripeID || strings.ContainsAny(id, "/\x00") {
			return invalidf(field, "%q is not a Stripe object id", id)
		}
	}
	switch {
	case s.Account == "":
		return invalidf("account", "a subscription needs its account")
	case c.Record.Kind != PaymentPlan || c.Record.Account != s.Account:
		return invalidf("record", "a subscription change records a plan payment of its own account")
	case (c.NextPlan == "") != (c.NextPlanAt == 0):
		return invalidf("next_plan", "a scheduled plan needs its time, and a time its plan")
	}
	for _, p := range []string{s.Plan, c.Plan} {
		if err := validatePlan(p); err != nil {
			return err
		}
	}
	if c.NextPlan != "" {
		return validatePlan(c.NextPlan)
	}
	return nil
}
