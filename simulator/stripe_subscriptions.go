package simulator

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// Subscriptions: created by paying a subscription-mode Checkout Session, then changed by a
// test (or the billing portal) the way Stripe changes them over their life, each change
// delivered as the event Stripe sends for it.

type stripeSubscription struct {
	obj subscriptionObject
}

// newSubscription creates an active subscription to price whose first period starts now.
// The lock is held.
func (s *Server) newSubscription(customer string, price priceObject, quantity int64, md map[string]string, now time.Time) *stripeSubscription {
	id := s.newID("sub_")
	item := subscriptionItemObject{ID: s.newID("si_"), Object: "subscription_item", Created: now.Unix(),
		CurrentPeriodStart: now.Unix(), CurrentPeriodEnd: periodEnd(price, now).Unix(), Metadata: map[string]string{},
		Price: price, Quantity: quantity, Subscription: id}
	sub := &stripeSubscription{obj: subscriptionObject{ID: id, Object: "subscription", BillingCycleAnchor: now.Unix(),
		CollectionMethod: stripe.SubscriptionCollectionMethodChargeAutomatically, Created: now.Unix(),
		Currency: price.Currency, Customer: customer, Items: newList("/v1/subscription_items?subscription="+id, item),
		Metadata: copyMetadata(md), StartDate: now.Unix(), Status: stripe.SubscriptionStatusActive}}
	s.stripe.subscriptions.put(id, sub)
	if cust, ok := s.stripe.customers.get(customer); ok {
		cust.subscriptions = append(cust.subscriptions, id)
	}
	return sub
}

// newInvoice creates the subscription's invoice for one period of its first item, which
// becomes its latest invoice. As Stripe does, the line's period is the service period paid
// for, while the invoice's own period_start/period_end is the one before it (both now for the
// first invoice), so a gateway must read what it sells from the line. The lock is held.
func (s *Server) newInvoice(sub *stripeSubscription, reason stripe.InvoiceBillingReason, status stripe.InvoiceStatus,
	now time.Time, invoicePeriod, linePeriod periodObject) invoiceObject {
	o := &sub.obj
	item := o.Items.Data[0]
	amount := item.Price.UnitAmount * item.Quantity
	id := s.newID("in_")
	email := ""
	if cust, ok := s.stripe.customers.get(o.Customer); ok {
		email = deref(cust.obj.Email)
	}
	line := invoiceLineObject{ID: s.newID("il_"), Object: "line_item", Amount: amount, Currency: o.Currency,
		Description: fmt.Sprintf("%d × %s (at %s / %s)", item.Quantity, item.Price.Product,
			formatAmount(item.Price.UnitAmount, item.Price.Currency), item.Price.Recurring.Interval),
		Invoice: id, Metadata: map[string]string{},
		Parent: invoiceLineParent{Type: stripe.InvoiceLineItemParentTypeSubscriptionItemDetails,
			SubscriptionItemDetails: subscriptionItemDetails{Subscription: o.ID, SubscriptionItem: item.ID}},
		Period: linePeriod,
		Pricing: linePricing{Type: stripe.InvoiceLineItemPricingTypePriceDetails, UnitAmountDecimal: item.Price.UnitAmountDecimal,
			PriceDetails: priceDetails{Price: item.Price.ID, Product: item.Price.Product}},
		Quantity: item.Quantity}
	inv := invoiceObject{ID: id, Object: "invoice", AmountDue: amount, AmountRemaining: amount, AttemptCount: 1,
		Attempted: true, BillingReason: reason, CollectionMethod: stripe.InvoiceCollectionMethodChargeAutomatically,
		Created: now.Unix(), Currency: o.Currency, Customer: o.Customer, CustomerEmail: optional(email),
		Lines: newList("/v1/invoices/"+id+"/lines", line), Metadata: map[string]string{},
		Parent: invoiceParent{Type: stripe.InvoiceParentTypeSubscriptionDetails,
			SubscriptionDetails: invoiceSubscriptionDetails{Metadata: copyMetadata(o.Metadata), Subscription: o.ID}},
		PeriodStart: invoicePeriod.Start, PeriodEnd: invoicePeriod.End, Status: status, Subtotal: amount, Total: amount}
	if status == stripe.InvoiceStatusPaid {
		inv.AmountPaid, inv.AmountRemaining = amount, 0
	}
	o.LatestInvoice = ptr(id)
	return inv
}

// getSubscription answers GET /v1/subscriptions/{id}.
func (s *Server) getSubscription(c *stripeCall) (any, *apiError) {
	id := c.r.PathValue("id")
	sub, ok := s.stripe.subscriptions.get(id)
	if !ok {
		return nil, stripeNoSuch(http.StatusNotFound, "id", "subscription", id)
	}
	return sub.obj, nil
}

// liveSubscription finds a subscription that has not ended. The lock is held.
func (s *Server) liveSubscription(id string) (*stripeSubscription, error) {
	sub, ok := s.stripe.subscriptions.get(id)
	switch {
	case !ok:
		return nil, fmt.Errorf("simulator: Stripe subscription %q: %w", id, errStripeUnknown)
	case sub.obj.Status == stripe.SubscriptionStatusCanceled:
		return nil, fmt.Errorf("simulator: Stripe subscription %s has ended", id)
	}
	return sub, nil
}

// UpdateSubscription changes subscription subID as a plan change or the billing portal
// would, and sends customer.subscription.updated with previous_attributes naming what
// changed. priceID, unless "" or the current price, replaces the price of its item (same
// currency; the period is unchanged and nothing is prorated). atPeriodEnd is the new
// cancel_at_period_end: true schedules the end at the current period's end (cancel_at,
// canceled_at and cancellation_details are set as Stripe sets them), false resumes. It returns
// the event's id, once its deliveries are done.
func (s *Server) UpdateSubscription(subID, priceID string, atPeriodEnd bool) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) { return s.updateSubscription(subID, priceID, atPeriodEnd) })
}

func (s *Server) updateSubscription(subID, priceID string, atPeriodEnd bool) (*stripeEvent, error) {
	s.stripe.mu.Lock()
	defer s.stripe.mu.Unlock()
	sub, err := s.liveSubscription(subID)
	if err != nil {
		return nil, err
	}
	o := &sub.obj
	item := o.Items.Data[0]
	prev := map[string]any{}
	if priceID != "" && priceID != item.Price.ID {
		if !strings.HasPrefix(priceID, "price_") {
			return nil, fmt.Errorf("simulator: price id %q must start with price_", priceID)
		}
		price := s.price(priceID)
		if price.Currency != o.Currency {
			return nil, fmt.Errorf("simulator: price %s is in %s, subscription %s in %s: Stripe does not change a subscription's currency",
				priceID, price.Currency, subID, o.Currency)
		}
		prev["items"] = mustJSON(o.Items) // Stripe sends the whole previous array
		item.Price = price
		o.Items = newList(o.Items.URL, item) // a new slice: the rendered previous one stays as it was
	}
	if atPeriodEnd != o.CancelAtPeriodEnd {
		prev["cancel_at"], prev["cancel_at_period_end"] = o.CancelAt, o.CancelAtPeriodEnd
		prev["canceled_at"], prev["cancellation_details"] = o.CanceledAt, mustJSON(o.CancellationDetails)
		o.CancelAtPeriodEnd = atPeriodEnd
		o.CancelAt, o.CanceledAt, o.CancellationDetails = nil, nil, cancellationDetails{}
		if atPeriodEnd {
			o.CancelAt, o.CanceledAt = ptr(item.CurrentPeriodEnd), ptr(time.Now().Unix())
			o.CancellationDetails.Reason = ptr(stripe.SubscriptionCancellationDetailsReasonCancellationRequested)
		}
	}
	if len(prev) == 0 {
		return nil, fmt.Errorf("simulator: subscription %s already has price %s and cancel_at_period_end %t", subID, item.Price.ID, atPeriodEnd)
	}
	return s.newEvent(stripe.EventTypeCustomerSubscriptionUpdated, *o, prev), nil
}

// CancelSubscription ends subscription subID now and sends customer.subscription.deleted
// (status canceled, ended_at now). It returns the event's id once its deliveries are done.
func (s *Server) CancelSubscription(subID string) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		sub, err := s.liveSubscription(subID)
		if err != nil {
			return nil, err
		}
		return s.endSubscription(sub, time.Now()), nil
	})
}

// endSubscription ends sub and returns its customer.subscription.deleted. The lock is held.
func (s *Server) endSubscription(sub *stripeSubscription, now time.Time) *stripeEvent {
	o := &sub.obj
	o.Status, o.EndedAt = stripe.SubscriptionStatusCanceled, ptr(now.Unix())
	if o.CanceledAt == nil {
		o.CanceledAt = ptr(now.Unix())
	}
	if o.CancellationDetails.Reason == nil {
		o.CancellationDetails.Reason = ptr(stripe.SubscriptionCancellationDetailsReasonCancellationRequested)
	}
	return s.newEvent(stripe.EventTypeCustomerSubscriptionDeleted, *o, nil)
}

// FailInvoice sends invoice.payment_failed for the renewal of subscription subID: an open
// invoice for the next period, nothing paid. The subscription itself is left as it is (Stripe
// would also move it to past_due with a customer.subscription.updated; a test wanting that
// sends it with UpdateSubscription or ends it with CancelSubscription). It returns the
// event's id once its deliveries are done.
func (s *Server) FailInvoice(subID string) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		sub, err := s.liveSubscription(subID)
		if err != nil {
			return nil, err
		}
		item := sub.obj.Items.Data[0]
		next := periodObject{Start: item.CurrentPeriodEnd, End: periodEnd(item.Price, time.Unix(item.CurrentPeriodEnd, 0)).Unix()}
		inv := s.newInvoice(sub, stripe.InvoiceBillingReasonSubscriptionCycle, stripe.InvoiceStatusOpen, time.Now(),
			periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd}, next)
		return s.newEvent(stripe.EventTypeInvoicePaymentFailed, inv, nil), nil
	})
}

// RenewSubscription ends subscription subID's current period now, as the clock reaching its
// end would: the next period starts where the current one ends and is paid, sending
// invoice.paid; a subscription set to cancel at period end ends instead, sending
// customer.subscription.deleted. It returns the event's id once its deliveries are done.
func (s *Server) RenewSubscription(subID string) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		sub, err := s.liveSubscription(subID)
		if err != nil {
			return nil, err
		}
		now := time.Now()
		o := &sub.obj
		if o.CancelAtPeriodEnd {
			return s.endSubscription(sub, now), nil
		}
		item := o.Items.Data[0]
		prev := periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd}
		item.CurrentPeriodStart = item.CurrentPeriodEnd
		item.CurrentPeriodEnd = periodEnd(item.Price, time.Unix(item.CurrentPeriodStart, 0)).Unix()
		o.Items = newList(o.Items.URL, item)
		o.Status = stripe.SubscriptionStatusActive
		inv := s.newInvoice(sub, stripe.InvoiceBillingReasonSubscriptionCycle, stripe.InvoiceStatusPaid, now, prev,
			periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd})
		return s.newEvent(stripe.EventTypeInvoicePaid, inv, nil), nil
	})
}

// sendAfter runs change (which locks the account), then delivers the event it made with the
// lock released, and returns the event's id.
func (s *Server) sendAfter(change func() (*stripeEvent, error)) (string, error) {
	ev, err := change()
	if err != nil {
		return "", err
	}
	s.deliver(ev)
	return ev.id, nil
}
