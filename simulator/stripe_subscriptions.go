package simulator

import (
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// Subscriptions: created by paying a subscription-mode Checkout Session, then changed by the
// gateway (POST /v1/subscriptions/{id}), the billing portal or a test the way Stripe changes
// them over their life, each change delivered as the event Stripe sends for it.

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
// currency; the period is unchanged and nothing is prorated or invoiced). atPeriodEnd is the
// new cancel_at_period_end: true schedules the end at the current period's end (cancel_at,
// canceled_at and cancellation_details are set as Stripe sets them), false resumes. It returns
// the event's id, once its deliveries are done. Unlike the API, it refuses a change that
// changes nothing. POST /v1/subscriptions/{id} makes the same changes, and more.
func (s *Server) UpdateSubscription(subID, priceID string, atPeriodEnd bool) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		sub, ok := s.stripe.subscriptions.get(subID)
		if !ok {
			return nil, fmt.Errorf("simulator: Stripe subscription %q: %w", subID, errStripeUnknown)
		}
		events, e := s.updateSubscription(sub, subscriptionChange{price: priceID, atPeriodEnd: &atPeriodEnd}, time.Now())
		switch {
		case e != nil:
			return nil, fmt.Errorf("simulator: Stripe subscription %s: %s", subID, e.Message)
		case len(events) == 0:
			return nil, fmt.Errorf("simulator: subscription %s already has price %s and cancel_at_period_end %t",
				subID, sub.obj.Items.Data[0].Price.ID, atPeriodEnd)
		}
		return events[0], nil // the only one: nothing is invoiced without always_invoice
	})
}

// The proration_behavior values of a subscription update.
const (
	prorationCreate        = "create_prorations"
	prorationNone          = "none"
	prorationAlwaysInvoice = "always_invoice"
)

// subscriptionChange is one update of a subscription: the parameters of POST
// /v1/subscriptions/{id}, or what UpdateSubscription or the billing portal asks for. The zero
// value changes nothing.
type subscriptionChange struct {
	items       bool   // items[0][…] sent
	item        string // items[0][id]: must name the subscription's item; "" names none
	price       string // the item's new price id; "" (or the current one) keeps it
	atPeriodEnd *bool  // the new cancel_at_period_end; nil keeps it
	// proration is proration_behavior, "" when not sent. The fake prorates nothing whatever
	// it says: a new price takes effect at once for the rest of the period, with neither a
	// credit for the old price nor a charge for the new one, except that always_invoice bills
	// a dearer price at once (a whole period of it, not the prorated difference) with a paid
	// invoice. A cheaper price is never credited.
	proration string
	// metadata is metadata[key] as sent, merged into the subscription's: a "" value unsets
	// the key. clearMetadata (metadata sent empty) unsets every key first.
	metadata      map[string]string
	clearMetadata bool
}

// onlyMetadata reports whether ch asks for nothing but a metadata change, the one change (with
// cancellation_details) Stripe makes to a canceled subscription.
func (ch subscriptionChange) onlyMetadata() bool {
	return !ch.items && ch.price == "" && ch.atPeriodEnd == nil && ch.proration == ""
}

// updateSubscription applies ch to sub as Stripe's subscription update does and returns the
// events it makes, in delivery order: none when nothing changed (Stripe sends none), else
// customer.subscription.updated whose previous_attributes hold what changed, as it was, then,
// when proration_behavior=always_invoice moves the item to a dearer price (unit_amount),
// invoice.paid for a subscription_update invoice of the new price. The period is unchanged.
// Nothing is changed when it answers an error. The lock is held.
func (s *Server) updateSubscription(sub *stripeSubscription, ch subscriptionChange, now time.Time) ([]*stripeEvent, *apiError) {
	o := &sub.obj
	if o.Status == stripe.SubscriptionStatusCanceled && !ch.onlyMetadata() {
		return nil, &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
			Code: "invalid_canceled_subscription_fields", Message: "A canceled subscription can only update its cancellation_details and metadata."}
	}
	item := o.Items.Data[0]
	if ch.item != "" && ch.item != item.ID {
		return nil, stripeInvalid("items[0][id]", "", "Invalid subscription_item id: "+ch.item)
	}
	var price *priceObject
	if ch.price != "" && ch.price != item.Price.ID {
		if !strings.HasPrefix(ch.price, "price_") || len(ch.price) > maxStripeString {
			return nil, stripeNoSuch(http.StatusBadRequest, "items[0][price]", "price", ch.price)
		}
		p := s.price(ch.price)
		if p.Currency != o.Currency {
			return nil, stripeInvalid("items[0][price]", "", fmt.Sprintf("The price %s is in %s but subscription %s is in %s: "+
				"a subscription's currency cannot change.", ch.price, p.Currency, o.ID, o.Currency))
		}
		price = &p
	}
	md := o.Metadata
	if ch.clearMetadata || len(ch.metadata) > 0 {
		md = map[string]string{}
		if !ch.clearMetadata {
			maps.Copy(md, o.Metadata)
		}
		for k, v := range ch.metadata {
			if v == "" {
				delete(md, k)
			} else {
				md[k] = v
			}
		}
		if e := metadataCount("metadata", md); e != nil {
			return nil, e
		}
	}

	prev := map[string]any{}
	invoice := false
	if price != nil {
		invoice = ch.proration == prorationAlwaysInvoice && price.UnitAmount > item.Price.UnitAmount
		prev["items"] = mustJSON(o.Items) // Stripe sends the whole previous array
		item.Price = *price
		o.Items = newList(o.Items.URL, item) // a new slice: the rendered previous one stays as it was
	}
	if ch.atPeriodEnd != nil && *ch.atPeriodEnd != o.CancelAtPeriodEnd {
		prev["cancel_at"], prev["cancel_at_period_end"] = o.CancelAt, o.CancelAtPeriodEnd
		prev["canceled_at"], prev["cancellation_details"] = o.CanceledAt, mustJSON(o.CancellationDetails)
		o.CancelAtPeriodEnd = *ch.atPeriodEnd
		o.CancelAt, o.CanceledAt, o.CancellationDetails = nil, nil, cancellationDetails{}
		if o.CancelAtPeriodEnd {
			o.CancelAt, o.CanceledAt = ptr(item.CurrentPeriodEnd), ptr(now.Unix())
			o.CancellationDetails.Reason = ptr(stripe.SubscriptionCancellationDetailsReasonCancellationRequested)
		}
	}
	if changed := metadataChanges(o.Metadata, md); len(changed) > 0 {
		prev["metadata"] = changed
		o.Metadata = md
	}
	if len(prev) == 0 {
		return nil, nil
	}
	var inv invoiceObject
	if invoice {
		prev["latest_invoice"] = copyPtr(o.LatestInvoice)
		inv = s.newInvoice(sub, stripe.InvoiceBillingReasonSubscriptionUpdate, stripe.InvoiceStatusPaid, now,
			periodObject{Start: now.Unix(), End: now.Unix()}, periodObject{Start: now.Unix(), End: item.CurrentPeriodEnd})
	}
	events := []*stripeEvent{s.newEvent(stripe.EventTypeCustomerSubscriptionUpdated, *o, prev)}
	if invoice {
		events = append(events, s.newEvent(stripe.EventTypeInvoicePaid, inv, nil))
	}
	return events, nil
}

// metadataChanges is the previous_attributes of a metadata change from before to after: as
// Stripe renders a changed hash, only the keys that changed, each with its value before (null
// for a key that was not set).
func metadataChanges(before, after map[string]string) map[string]any {
	changed := map[string]any{}
	for k, v := range before {
		if w, ok := after[k]; !ok || w != v {
			changed[k] = v
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			changed[k] = nil
		}
	}
	return changed
}

// postSubscription answers POST /v1/subscriptions/{id}, Stripe's "Update a subscription", for
// what the fake's one-item subscriptions have: items[0][id] (naming the item) with
// items[0][price], cancel_at_period_end, proration_behavior and metadata[…]. The events the
// update makes (updateSubscription) are delivered before the answer, the subscription as it
// now is.
func (s *Server) postSubscription(c *stripeCall) (any, *apiError) {
	ch, e := subscriptionChangeParams(c.form)
	if e != nil {
		return nil, e
	}
	id := c.r.PathValue("id")
	sub, ok := s.stripe.subscriptions.get(id)
	if !ok {
		return nil, stripeNoSuch(http.StatusNotFound, "id", "subscription", id)
	}
	if c.events, e = s.updateSubscription(sub, ch, time.Now()); e != nil {
		return nil, e
	}
	return sub.obj, nil
}

// subscriptionChangeParams reads the parameters of a subscription update. A parameter
// stripe-go can send that the fake does not serve is refused as such; any other it does not
// take is Stripe's parameter_unknown.
func subscriptionChangeParams(f url.Values) (subscriptionChange, *apiError) {
	var ch subscriptionChange
	for _, k := range slices.Sorted(maps.Keys(f)) { // the same error for the same request
		v := f[k][len(f[k])-1]
		switch {
		case k == "cancel_at_period_end":
			if v != "true" && v != "false" {
				return ch, stripeInvalid(k, "", "Invalid boolean: "+v)
			}
			ch.atPeriodEnd = ptr(v == "true")
		case k == "proration_behavior":
			if v != prorationCreate && v != prorationNone && v != prorationAlwaysInvoice {
				return ch, stripeInvalid(k, "", "Invalid proration_behavior: must be one of create_prorations, none, or always_invoice")
			}
			ch.proration = v
		case k == "metadata":
			if v != "" {
				return ch, stripeInvalid(k, "", "Invalid object")
			}
			ch.clearMetadata = true
		case k == "items[0][id]" || k == "items[0][price]":
			if v == "" {
				return ch, stripeInvalid(k, "parameter_invalid_empty", fmt.Sprintf("You passed an empty string for '%[1]s'. "+
					"We assume empty values are an attempt to unset a parameter; however '%[1]s' cannot be unset. "+
					"You should remove '%[1]s' from your request or supply a non-empty value.", k))
			}
			ch.items = true
			if k == "items[0][id]" {
				ch.item = v
			} else {
				ch.price = v
			}
		default:
			if _, ok := metadataKey(k, "metadata"); !ok {
				return ch, refuseSubscriptionParam(k)
			}
		}
	}
	if ch.price != "" && ch.item == "" {
		// Stripe would add the price as a second item.
		return ch, stripeInvalid("items[0][id]", "", "The simulator's subscriptions have one item: "+
			"change its price with items[0][id] naming it and items[0][price].")
	}
	var e *apiError
	ch.metadata, e = metadataParams(f, "metadata")
	return ch, e
}

// The parameters stripe-go's SubscriptionUpdateParams, and each of its items, can send.
var (
	subscriptionUpdateParams     = stripeGoParams(reflect.TypeFor[stripe.SubscriptionUpdateParams]())
	subscriptionUpdateItemParams = stripeGoParams(reflect.TypeFor[stripe.SubscriptionUpdateItemParams]())
)

// refuseSubscriptionParam refuses parameter k of a subscription update: as not served by the
// fake when Stripe takes it (stripe-go can send it), else as Stripe's parameter_unknown.
func refuseSubscriptionParam(k string) *apiError {
	top, rest, _ := strings.Cut(k, "[")
	known := subscriptionUpdateParams[top]
	if top == "items" {
		index, inner, _ := strings.Cut(rest, "]")
		if index != "0" {
			return stripeInvalid(k, "", "The simulator's subscriptions have one item: only items[0] can be sent.")
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(inner, "["), "]")
		known = subscriptionUpdateItemParams[name]
	}
	if !known {
		return stripeUnknown(k)
	}
	return stripeInvalid(k, "", fmt.Sprintf("The simulator does not serve %s in a subscription update: it takes items[0][id] "+
		"with items[0][price], cancel_at_period_end, proration_behavior and metadata.", k))
}

// stripeGoParams is the names of the top-level parameters a stripe-go params struct of type t
// sends: its fields' form tags, and those of the structs it embeds whole (Params: expand,
// metadata).
func stripeGoParams(t reflect.Type) map[string]bool {
	names := map[string]bool{}
	for f := range t.Fields() {
		switch name, _, _ := strings.Cut(f.Tag.Get("form"), ","); name {
		case "", "-":
		case "*":
			if f.Type.Kind() == reflect.Struct {
				maps.Copy(names, stripeGoParams(f.Type))
			}
		default:
			names[name] = true
		}
	}
	return names
}

// CancelSubscription ends subscription subID now and sends customer.subscription.deleted
// (status canceled, ended_at now). It returns the event's id once its deliveries are done.
func (s *Server) CancelSubscription(subID string) (string, error) {
	return s.changeLive(subID, func(sub *stripeSubscription) *stripeEvent {
		return s.endSubscription(sub, time.Now())
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
	return s.changeLive(subID, func(sub *stripeSubscription) *stripeEvent {
		item := sub.obj.Items.Data[0]
		next := periodObject{Start: item.CurrentPeriodEnd, End: periodEnd(item.Price, time.Unix(item.CurrentPeriodEnd, 0)).Unix()}
		inv := s.newInvoice(sub, stripe.InvoiceBillingReasonSubscriptionCycle, stripe.InvoiceStatusOpen, time.Now(),
			periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd}, next)
		return s.newEvent(stripe.EventTypeInvoicePaymentFailed, inv, nil)
	})
}

// RenewSubscription ends subscription subID's current period now, as the clock reaching its
// end would: the next period starts where the current one ends and is paid, sending
// invoice.paid; a subscription set to cancel at period end ends instead, sending
// customer.subscription.deleted. It returns the event's id once its deliveries are done.
func (s *Server) RenewSubscription(subID string) (string, error) {
	return s.changeLive(subID, func(sub *stripeSubscription) *stripeEvent {
		now := time.Now()
		o := &sub.obj
		item := o.Items.Data[0]
		if o.CancelAtPeriodEnd {
			// It ends when its period does (Stripe's ended_at is the period's end), not now.
			return s.endSubscription(sub, time.Unix(item.CurrentPeriodEnd, 0))
		}
		prev := periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd}
		item.CurrentPeriodStart = item.CurrentPeriodEnd
		item.CurrentPeriodEnd = periodEnd(item.Price, time.Unix(item.CurrentPeriodStart, 0)).Unix()
		o.Items = newList(o.Items.URL, item)
		o.Status = stripe.SubscriptionStatusActive
		inv := s.newInvoice(sub, stripe.InvoiceBillingReasonSubscriptionCycle, stripe.InvoiceStatusPaid, now, prev,
			periodObject{Start: item.CurrentPeriodStart, End: item.CurrentPeriodEnd})
		return s.newEvent(stripe.EventTypeInvoicePaid, inv, nil)
	})
}

// changeLive runs change on live subscription subID under the account's lock, then delivers
// the event it made with the lock released, and returns the event's id.
func (s *Server) changeLive(subID string, change func(*stripeSubscription) *stripeEvent) (string, error) {
	return s.sendAfter(func() (*stripeEvent, error) {
		s.stripe.mu.Lock()
		defer s.stripe.mu.Unlock()
		sub, err := s.liveSubscription(subID)
		if err != nil {
			return nil, err
		}
		return change(sub), nil
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
