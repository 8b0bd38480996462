package billing

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v82"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Plans sold as Stripe subscriptions. Each subscription event (customer.subscription.created,
// .updated, .deleted; invoice.paid, .payment_failed) updates the gateway's copy of the
// subscription, then the account's plan is decided again from that state (decidePlan): an
// upgrade at once, a downgrade or an end when the period paid for ends. The subscription,
// the plan and the event's record are one metadata write (persistence.ApplySubscription),
// once per event id; an event older than the newest applied is not applied.

// kindPlan marks the subscriptions the gateway made (their metadata, and its records').
const kindPlan = persistence.PaymentPlan

// subscriptionObject is what the gateway reads of a Subscription (the basil API version
// keeps the periods on its items; earlier versions on the subscription itself).
type subscriptionObject struct {
	ID                 string            `json:"id"`
	Customer           json.RawMessage   `json:"customer"`
	Status             string            `json:"status"`
	CancelAtPeriodEnd  bool              `json:"cancel_at_period_end"`
	CurrentPeriodStart int64             `json:"current_period_start"`
	CurrentPeriodEnd   int64             `json:"current_period_end"`
	EndedAt            int64             `json:"ended_at"`
	Metadata           map[string]string `json:"metadata"`
	Items              struct {
		Data []struct {
			ID                 string `json:"id"`
			CurrentPeriodStart int64  `json:"current_period_start"`
			CurrentPeriodEnd   int64  `json:"current_period_end"`
			Price              struct {
				ID string `json:"id"`
			} `json:"price"`
		} `json:"data"`
	} `json:"items"`
}

// invoiceObject is what the gateway reads of an Invoice: its subscription (basil: under
// parent.subscription_details; before: at the top) and the period its line pays for.
type invoiceObject struct {
	ID            string          `json:"id"`
	Customer      json.RawMessage `json:"customer"`
	BillingReason string          `json:"billing_reason"`
	Subscription  json.RawMessage `json:"subscription"`
	Parent        struct {
		SubscriptionDetails struct {
			Subscription json.RawMessage   `json:"subscription"`
			Metadata     map[string]string `json:"metadata"`
		} `json:"subscription_details"`
	} `json:"parent"`
	Lines struct {
		Data []struct {
			Period struct {
				Start int64 `json:"start"`
				End   int64 `json:"end"`
			} `json:"period"`
			Price *struct {
				ID string `json:"id"`
			} `json:"price"`
			Pricing struct {
				PriceDetails struct {
					Price string `json:"price"`
				} `json:"price_details"`
			} `json:"pricing"`
		} `json:"data"`
	} `json:"lines"`
}

// subscriptionEvent is one event as the decision reads it: the subscription's new state
// and the moment Stripe's clock has at least reached (the start of the period the event
// shows, or the subscription's end), which a change scheduled for that moment has reached
// too, whatever this node's clock says.
type subscriptionEvent struct {
	sub       persistence.Subscription
	stripeNow int64
}

// subscriptionChanged applies customer.subscription.created, .updated and .deleted.
func (s *Service) subscriptionChanged(ev *stripe.Event) int {
	var o subscriptionObject
	if err := json.Unmarshal(ev.Data.Raw, &o); err != nil || o.ID == "" || len(o.Items.Data) == 0 {
		s.d.Count(kindPlan, "refused")
		s.d.Logger.Warn("stripe subscription unreadable", "event", ev.ID, "err", err)
		return http.StatusOK // a retry holds the same bytes
	}
	item := o.Items.Data[0]
	start, end := cmp.Or(item.CurrentPeriodStart, o.CurrentPeriodStart), cmp.Or(item.CurrentPeriodEnd, o.CurrentPeriodEnd)
	sub := persistence.Subscription{Account: o.Metadata["account_id"], ID: o.ID, Customer: objectID(o.Customer),
		Price: item.Price.ID, Item: item.ID, Status: o.Status, PeriodEnd: end, CancelAtPeriodEnd: o.CancelAtPeriodEnd, EventAt: ev.Created}
	if o.Metadata["modelgate_kind"] != kindPlan {
		s.d.Count("ignored", "ignored") // not a subscription this gateway sold
		return http.StatusOK
	}
	stripeNow := start
	if o.EndedAt > 0 {
		stripeNow = o.EndedAt
	}
	return s.applySubscription(ev, sub.Account, func(stored *persistence.Subscription) subscriptionEvent {
		se := subscriptionEvent{sub: sub, stripeNow: stripeNow}
		if stored != nil && stored.ID == sub.ID {
			se.sub.PaidThrough = stored.PaidThrough
		}
		return se
	})
}

// invoiceSettled applies invoice.paid and invoice.payment_failed to the subscription the
// invoice bills: a paid invoice pays its line's period; a failed one leaves the subscription
// past due (incomplete, for its first invoice), paid only as far as before.
func (s *Service) invoiceSettled(ev *stripe.Event, paid bool) int {
	var o invoiceObject
	if err := json.Unmarshal(ev.Data.Raw, &o); err != nil || o.ID == "" {
		s.d.Count(kindPlan, "refused")
		s.d.Logger.Warn("stripe invoice unreadable", "event", ev.ID, "err", err)
		return http.StatusOK
	}
	details := o.Parent.SubscriptionDetails
	subID := cmp.Or(objectID(details.Subscription), objectID(o.Subscription))
	if subID == "" || details.Metadata["modelgate_kind"] != kindPlan || len(o.Lines.Data) == 0 {
		s.d.Count("ignored", "ignored") // not an invoice of a subscription this gateway sold
		return http.StatusOK
	}
	line := o.Lines.Data[len(o.Lines.Data)-1] // the period sold; proration lines come first
	price := line.Pricing.PriceDetails.Price
	if line.Price != nil {
		price = cmp.Or(price, line.Price.ID)
	}
	accountID := details.Metadata["account_id"]
	return s.applySubscription(ev, accountID, func(stored *persistence.Subscription) subscriptionEvent {
		var sub persistence.Subscription
		if stored != nil && stored.ID == subID {
			sub = *stored // an invoice says nothing of the subscription's status or schedule
		} else {
			// The subscription's own event has not come yet (Stripe does not promise the order).
			sub = persistence.Subscription{ID: subID, Customer: objectID(o.Customer), Price: price, EventAt: ev.Created}
		}
		sub.Account = accountID
		switch {
		case paid:
			sub.Status = string(stripe.SubscriptionStatusActive)
			sub.PaidThrough = max(sub.PaidThrough, line.Period.End)
			sub.PeriodEnd = max(sub.PeriodEnd, line.Period.End)
		case o.BillingReason == string(stripe.InvoiceBillingReasonSubscriptionCreate):
			sub.Status = string(stripe.SubscriptionStatusIncomplete)
		default:
			sub.Status = string(stripe.SubscriptionStatusPastDue)
		}
		return subscriptionEvent{sub: sub, stripeNow: line.Period.Start}
	})
}

// decideAttempts bounds how often an event is decided again because another event of the
// account was applied between its read and its write.
const decideAttempts = 5

// applySubscription decides and applies one subscription event of account accountID: build
// makes its state from the stored subscription (nil when the account has none).
func (s *Service) applySubscription(ev *stripe.Event, accountID string, build func(*persistence.Subscription) subscriptionEvent) int {
	for range decideAttempts {
		status, retry := s.applyOnce(ev, accountID, build)
		if !retry {
			return status
		}
	}
	s.d.Count(kindPlan, "failed")
	s.d.Logger.Error("stripe subscription event not applied: the account's subscription kept changing; Stripe retries", "event", ev.ID)
	return http.StatusInternalServerError
}

// applyOnce reads, decides and writes; retry is true when another event was applied to the
// record in between.
func (s *Service) applyOnce(ev *stripe.Event, accountID string, build func(*persistence.Subscription) subscriptionEvent) (status int, retry bool) {
	cat := s.d.Catalog.Load()
	if cat.Billing.Stripe == nil { // payments turned off by a reload since the webhook began
		return http.StatusServiceUnavailable, false
	}
	var stored *persistence.Subscription
	switch sub, err := s.d.Store.Subscription(accountID); {
	case err == nil:
		stored = &sub
	case !errors.Is(err, persistence.ErrNotFound):
		s.d.Count(kindPlan, "failed")
		return http.StatusInternalServerError, false
	}
	se := build(stored)
	if stored != nil && stored.EventAt > se.sub.EventAt {
		// An older event arriving late: of this subscription, a newer state was applied; of
		// another, a newer subscription is the account's.
		s.d.Count(kindPlan, "stale")
		return http.StatusOK, false
	}
	plan, ok := cat.PlanByPrice(se.sub.Price)
	if !ok {
		s.d.Count(kindPlan, "refused")
		s.d.Logger.Error("stripe subscription to a price no plan sells; not applied", "event", ev.ID, "price", se.sub.Price)
		return http.StatusOK, false
	}
	se.sub.Plan = plan.Name
	se.sub.Rev = 1
	if stored != nil {
		se.sub.Customer = cmp.Or(se.sub.Customer, stored.Customer)
		se.sub.Rev = stored.Rev + 1
	}
	if inGoodStanding(se.sub.Status) {
		se.sub.PaidThrough = max(se.sub.PaidThrough, se.sub.PeriodEnd) // Stripe says the period is paid
	}
	acct, err := s.d.Store.GetAccount(accountID)
	if err != nil {
		if errors.Is(err, persistence.ErrNotFound) {
			s.d.Count(kindPlan, "refused")
			s.d.Logger.Error("stripe subscription for an unknown account; not applied", "event", ev.ID, "account", accountID)
			return http.StatusOK, false
		}
		s.d.Count(kindPlan, "failed")
		return http.StatusInternalServerError, false
	}
	now := time.Now().Unix()
	d := decidePlan(cat, acct, se, cat.Billing.Stripe.DefaultPlan, now)
	c := persistence.SubscriptionChange{Sub: se.sub, Plan: d.plan, NextPlan: d.next, NextPlanAt: d.at,
		Record: persistence.Payment{StripeID: ev.ID, EventID: ev.ID, Kind: kindPlan, Outcome: d.outcome, Account: accountID,
			Customer: se.sub.Customer, Subscription: se.sub.ID, Plan: d.plan, NextPlan: d.next, NextPlanAt: d.at, At: now}}
	_, applied, err := s.d.Store.ApplySubscription(c)
	switch {
	case errors.Is(err, persistence.ErrConflict):
		return 0, true
	case err != nil:
		s.d.Count(kindPlan, "failed")
		s.d.Logger.Error("stripe subscription event not applied yet; Stripe retries", "event", ev.ID, "err", err)
		return http.StatusInternalServerError, false
	case applied:
		s.d.Count(kindPlan, d.outcome)
	default:
		s.d.Count(kindPlan, "repeated")
	}
	return http.StatusOK, false
}

// planDecision is the plan an account takes: plan now, next from at ("" and 0: none).
type planDecision struct {
	plan, next string
	at         int64
	outcome    string // upgraded, downgraded, scheduled, ended, unchanged
}

// decidePlan is the plan acct takes after event se, decided from the subscription's state
// alone (so a redelivered or reordered event decides the same):
//   - the subscription is paid through PaidThrough; once Stripe's clock or this node's is
//     past it, the account is on the default plan;
//   - before that, a plan allowing at least as much as the one held is taken at once (a
//     purchase, an upgrade, a renewal); one allowing less waits for the period's end;
//   - a subscription that will not renew (set to cancel, or past due) leaves for the default
//     plan when its paid period ends.
func decidePlan(cat *catalog.Catalog, acct persistence.Account, se subscriptionEvent, defaultPlan string, now int64) planDecision {
	clock := max(now, se.stripeNow)
	held, was := acct.PlanAt(clock), acct.PlanAt(now)
	sub := &se.sub
	if clock >= sub.PaidThrough {
		return planDecision{plan: defaultPlan, outcome: outcome(cat, was, defaultPlan, "ended")}
	}
	d := planDecision{plan: held}
	if atLeast(cat, sub.Plan, held) {
		d.plan = sub.Plan
	} else {
		d.next, d.at = sub.Plan, sub.PeriodEnd // the plan held is paid to the period's end
	}
	renews := !sub.CancelAtPeriodEnd && inGoodStanding(sub.Status)
	if !renews {
		d.next, d.at = defaultPlan, sub.PaidThrough
	}
	if d.next == d.plan {
		d.next, d.at = "", 0
	}
	d.outcome = outcome(cat, was, d.plan, "unchanged")
	if d.outcome == "unchanged" && d.next != "" {
		d.outcome = "scheduled"
	}
	return d
}

// inGoodStanding reports whether Stripe says a subscription of status is paid for its
// current period (active) or needs no payment yet (trialing).
func inGoodStanding(status string) bool {
	return status == string(stripe.SubscriptionStatusActive) || status == string(stripe.SubscriptionStatusTrialing)
}

// atLeast reports whether plan a allows at least what plan b does (a plan no longer in the
// catalog allows nothing).
func atLeast(cat *catalog.Catalog, a, b string) bool {
	pa, okA := cat.Plan(a)
	pb, okB := cat.Plan(b)
	return !okB || (okA && catalog.ComparePlans(pa, pb) >= 0)
}

// outcome names a move from plan held to plan now; same is the name when they are the same.
func outcome(cat *catalog.Catalog, held, now, same string) string {
	switch {
	case held == now:
		return same
	case same == "ended":
		return "ended"
	case atLeast(cat, now, held):
		return "upgraded"
	}
	return "downgraded"
}
