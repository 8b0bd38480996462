package simulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// setStripePrices sets each price id to its amount in currency, a month each.
func setStripePrices(t *testing.T, s *Server, currency string, amounts map[string]int64) {
	t.Helper()
	for id, amount := range amounts {
		if err := s.SetStripePrice(id, StripePrice{UnitAmount: amount, Currency: currency}); err != nil {
			t.Fatal(err)
		}
	}
}

// itemsJSON is the items list of subscription sub (one item, quantity 1, as created) with its
// price set to a monthly price of amount in currency, as the API renders it.
func itemsJSON(sub stripe.Subscription, price string, amount int64, currency string) string {
	item := sub.Items.Data[0]
	return fmt.Sprintf(`{"object":"list","data":[{"id":%q,"object":"subscription_item","created":%d,
		"current_period_end":%d,"current_period_start":%d,"metadata":{},"price":{"id":%q,"object":"price","active":true,
		"currency":%q,"livemode":false,"metadata":{},"product":%q,"recurring":{"interval":"month","interval_count":1,
		"usage_type":"licensed"},"type":"recurring","unit_amount":%d,"unit_amount_decimal":"%d"},"quantity":1,
		"subscription":%q}],"has_more":false,"total_count":1,"url":"/v1/subscription_items?subscription=%s"}`,
		item.ID, item.Created, item.CurrentPeriodEnd, item.CurrentPeriodStart, price, currency,
		"prod_"+strings.TrimPrefix(price, "price_"), amount, amount, sub.ID, sub.ID)
}

// subUpdate is a subscription update with stripe-go: items[0] set to price when price is not
// "", proration_behavior when proration is not "", then whatever change does.
func subUpdate(item, price, proration string, change func(p *stripe.SubscriptionUpdateParams)) *stripe.SubscriptionUpdateParams {
	p := &stripe.SubscriptionUpdateParams{}
	if price != "" {
		p.Items = []*stripe.SubscriptionUpdateItemParams{{ID: stripe.String(item), Price: stripe.String(price)}}
	}
	if proration != "" {
		p.ProrationBehavior = stripe.String(proration)
	}
	if change != nil {
		change(p)
	}
	return p
}

func TestStripeSubscriptionUpdateAPI(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	setStripePrices(t, s, "eur", map[string]int64{"price_lite": 900, "price_pro": 2900, "price_team": 9900})
	sc := stripeClient(base, testStripeKey)
	cust := newStripeCustomer(t, sc)
	sub := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	item := sub.Items.Data[0]
	firstInvoice := sub.LatestInvoice.ID
	end := item.CurrentPeriodEnd
	const notCancelling = `"cancel_at":null,"cancel_at_period_end":false,"canceled_at":null,
		"cancellation_details":{"comment":null,"feedback":null,"reason":null}`

	for _, step := range []struct {
		name   string
		params *stripe.SubscriptionUpdateParams
		types  []stripe.EventType // the events delivered before the answer, in order
		check  func(t *testing.T, got *stripe.Subscription, events []stripe.Event)
	}{
		{"change the price", subUpdate(item.ID, "price_lite", "create_prorations", nil),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				if got.Items.Data[0].Price.ID != "price_lite" || got.Items.Data[0].Price.UnitAmount != 900 || got.LatestInvoice.ID != firstInvoice {
					t.Errorf("answer: price %s %d, latest invoice %s", got.Items.Data[0].Price.ID, got.Items.Data[0].Price.UnitAmount, got.LatestInvoice.ID)
				}
				assertJSON(t, decodeAs[map[string]json.RawMessage](t, events[0].Data.Raw)["items"], itemsJSON(sub, "price_lite", 900, "eur"))
				assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), `{"items":`+itemsJSON(sub, "price_pro", 2900, "eur")+`}`)
			}},
		{"cancel at period end", subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) { p.CancelAtPeriodEnd = stripe.Bool(true) }),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				if !got.CancelAtPeriodEnd || got.CancelAt != end || time.Since(time.Unix(got.CanceledAt, 0)) > time.Minute ||
					got.CancellationDetails.Reason != stripe.SubscriptionCancellationDetailsReasonCancellationRequested ||
					got.Status != stripe.SubscriptionStatusActive {
					t.Errorf("answer %+v", got)
				}
				assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), `{`+notCancelling+`}`)
			}},
		{"resume", subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) { p.CancelAtPeriodEnd = stripe.Bool(false) }),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				if got.CancelAtPeriodEnd || got.CancelAt != 0 || got.CanceledAt != 0 || got.CancellationDetails.Reason != "" {
					t.Errorf("answer %+v", got)
				}
				assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), fmt.Sprintf(`{"cancel_at":%d,"cancel_at_period_end":true,
					"canceled_at":%s,"cancellation_details":{"comment":null,"feedback":null,"reason":"cancellation_requested"}}`,
					end, events[0].GetPreviousValue("canceled_at")))
			}},
		{"add metadata", subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Metadata = map[string]string{"plan": "lite", "account_id": "acct_42"}
		}), []stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
			if !reflect.DeepEqual(got.Metadata, map[string]string{"plan": "lite", "account_id": "acct_42"}) {
				t.Errorf("metadata %v", got.Metadata)
			}
			assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), `{"metadata":{"plan":null,"account_id":null}}`)
		}},
		{"merge metadata", subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Metadata = map[string]string{"plan": "team", "account_id": "", "seats": "3"}
		}), []stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
			if !reflect.DeepEqual(got.Metadata, map[string]string{"plan": "team", "seats": "3"}) {
				t.Errorf("metadata %v", got.Metadata)
			}
			assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), `{"metadata":{"plan":"lite","account_id":"acct_42","seats":null}}`)
		}},
		{"change nothing", subUpdate(item.ID, "price_lite", "always_invoice", func(p *stripe.SubscriptionUpdateParams) {
			p.CancelAtPeriodEnd, p.Metadata = stripe.Bool(false), map[string]string{"plan": "team", "gone": ""}
		}), nil, func(t *testing.T, got *stripe.Subscription, _ []stripe.Event) {
			if got.Items.Data[0].Price.ID != "price_lite" || got.CancelAtPeriodEnd || len(got.Metadata) != 2 {
				t.Errorf("answer %+v", got)
			}
		}},
		{"upgrade, invoiced at once", subUpdate(item.ID, "price_team", "always_invoice", nil),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated, stripe.EventTypeInvoicePaid},
			func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				var inv stripe.Invoice
				objectOf(t, events[1], &inv)
				assertJSON(t, mustJSON(events[0].Data.PreviousAttributes),
					fmt.Sprintf(`{"items":%s,"latest_invoice":%q}`, itemsJSON(sub, "price_lite", 900, "eur"), firstInvoice))
				if events[0].GetObjectValue("latest_invoice") != inv.ID || got.LatestInvoice.ID != inv.ID {
					t.Errorf("latest_invoice: event %s, answer %s, want %s", events[0].GetObjectValue("latest_invoice"), got.LatestInvoice.ID, inv.ID)
				}
				if got.Items.Data[0].CurrentPeriodStart != item.CurrentPeriodStart || got.Items.Data[0].CurrentPeriodEnd != end {
					t.Errorf("period %d-%d, want %d-%d unchanged", got.Items.Data[0].CurrentPeriodStart, got.Items.Data[0].CurrentPeriodEnd,
						item.CurrentPeriodStart, end)
				}
				line := inv.Lines.Data[0]
				if inv.Status != stripe.InvoiceStatusPaid || inv.BillingReason != stripe.InvoiceBillingReasonSubscriptionUpdate ||
					inv.AmountDue != 9900 || inv.AmountPaid != 9900 || inv.AmountRemaining != 0 || inv.Currency != "eur" ||
					inv.Customer.ID != cust.ID || inv.Parent.SubscriptionDetails.Subscription.ID != sub.ID ||
					inv.PeriodStart != inv.Created || inv.PeriodEnd != inv.Created ||
					len(inv.Lines.Data) != 1 || line.Pricing.PriceDetails.Price != "price_team" || line.Amount != 9900 ||
					line.Parent.SubscriptionItemDetails.SubscriptionItem != item.ID ||
					line.Period.Start != inv.Created || line.Period.End != end {
					t.Errorf("invoice %s", events[1].Data.Raw)
				}
			}},
		{"downgrade, not invoiced", subUpdate(item.ID, "price_pro", "always_invoice", nil),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), `{"items":`+itemsJSON(sub, "price_team", 9900, "eur")+`}`)
				if got.Items.Data[0].Price.ID != "price_pro" {
					t.Errorf("price %s", got.Items.Data[0].Price.ID)
				}
			}},
		{"upgrade without always_invoice", subUpdate(item.ID, "price_team", "none", nil),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				if _, ok := events[0].Data.PreviousAttributes["latest_invoice"]; ok || got.Items.Data[0].Price.ID != "price_team" {
					t.Errorf("previous %v, price %s", events[0].Data.PreviousAttributes, got.Items.Data[0].Price.ID)
				}
			}},
		{"clear metadata", subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) { p.AddExtra("metadata", "") }),
			[]stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated}, func(t *testing.T, got *stripe.Subscription, events []stripe.Event) {
				if len(got.Metadata) != 0 {
					t.Errorf("metadata %v", got.Metadata)
				}
				assertJSON(t, mustJSON(events[0].Data.PreviousAttributes), `{"metadata":{"plan":"team","seats":"3"}}`)
			}},
	} {
		t.Run(step.name, func(t *testing.T) {
			before := len(recv.accepted())
			got, err := sc.V1Subscriptions.Update(context.Background(), sub.ID, step.params)
			if err != nil {
				t.Fatal(err)
			}
			events := recv.accepted()[before:]
			if types := eventTypes(events); !reflect.DeepEqual(types, eventTypes(typed(step.types))) {
				t.Fatalf("events %v, want %v", types, step.types)
			}
			for _, e := range events {
				if e.Type == stripe.EventTypeCustomerSubscriptionUpdated && e.GetObjectValue("id") != sub.ID {
					t.Errorf("%s is about %s", e.Type, e.GetObjectValue("id"))
				}
			}
			if got.ID != sub.ID {
				t.Fatalf("answered %s", got.ID)
			}
			// The answer is the subscription as the API now renders it, and as the last update event carried it.
			now, err := sc.V1Subscriptions.Retrieve(context.Background(), sub.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			now.LastResponse, got.LastResponse = nil, nil // the request ids differ
			if !reflect.DeepEqual(now, got) {
				t.Errorf("retrieved %+v (%v),\nanswered %+v", now, err, got)
			}
			if len(events) > 0 {
				assertJSON(t, events[0].Data.Raw, string(mustJSON(s.subscriptionObject(t, sub.ID))))
			}
			step.check(t, got, events)
		})
	}

	// A retry with the same Idempotency-Key is answered the first answer, and delivers nothing again.
	before := len(recv.deliveries())
	var answers []*stripe.Subscription
	for range 2 {
		p := &stripe.SubscriptionUpdateParams{CancelAtPeriodEnd: stripe.Bool(true)}
		p.SetIdempotencyKey("cancel-once")
		got, err := sc.V1Subscriptions.Update(context.Background(), sub.ID, p)
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, got)
	}
	if n := len(recv.deliveries()); n != before+1 {
		t.Errorf("an update and its retry made %d deliveries, want 1", n-before)
	}
	if a, b := answers[0].LastResponse, answers[1].LastResponse; a.Header.Get("Idempotent-Replayed") != "" ||
		b.Header.Get("Idempotent-Replayed") != "true" || !reflect.DeepEqual(a.RawJSON, b.RawJSON) {
		t.Errorf("the retry: replayed %q, %s, want the first answer %s", b.Header.Get("Idempotent-Replayed"), b.RawJSON, a.RawJSON)
	}
}

// typed makes events of types, to compare their types with eventTypes.
func typed(types []stripe.EventType) []stripe.Event {
	out := make([]stripe.Event, 0, len(types))
	for _, typ := range types {
		out = append(out, stripe.Event{Type: typ})
	}
	return out
}

// subscriptionObject is subscription id as the fake holds it now.
func (s *Server) subscriptionObject(t *testing.T, id string) subscriptionObject {
	t.Helper()
	s.stripe.mu.Lock()
	defer s.stripe.mu.Unlock()
	sub, ok := s.stripe.subscriptions.get(id)
	if !ok {
		t.Fatalf("no subscription %s", id)
	}
	return sub.obj
}

func TestStripeSubscriptionUpdateErrors(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	setStripePrices(t, s, "eur", map[string]int64{"price_pro": 2900, "price_team": 9900})
	setStripePrices(t, s, "usd", map[string]int64{"price_dollars": 500})
	sc := stripeClient(base, testStripeKey)
	cust := newStripeCustomer(t, sc)
	sub := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	other := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	ended := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	if _, err := s.CancelSubscription(ended.ID); err != nil {
		t.Fatal(err)
	}
	item := sub.Items.Data[0].ID
	extra := func(k, v string) func(p *stripe.SubscriptionUpdateParams) {
		return func(p *stripe.SubscriptionUpdateParams) { p.AddExtra(k, v) }
	}
	const oneItem = "The simulator's subscriptions have one item: "
	for _, tc := range []struct {
		name   string
		sub    string
		params *stripe.SubscriptionUpdateParams
		status int
		code   stripe.ErrorCode
		param  string
		msg    string
	}{
		{"unknown item", sub.ID, subUpdate("si_nope", "price_team", "", nil),
			400, "", "items[0][id]", "Invalid subscription_item id: si_nope"},
		{"another subscription's item", sub.ID, subUpdate(other.Items.Data[0].ID, "price_team", "", nil),
			400, "", "items[0][id]", "Invalid subscription_item id: " + other.Items.Data[0].ID},
		{"unknown parameter", sub.ID, subUpdate(item, "price_team", "", extra("colour", "blue")),
			400, "parameter_unknown", "colour", "Received unknown parameter: colour"},
		{"unknown item parameter", sub.ID, subUpdate(item, "price_team", "", extra("items[0][colour]", "blue")),
			400, "parameter_unknown", "items[0][colour]", "Received unknown parameter: items[0][colour]"},
		{"a parameter the simulator does not serve", sub.ID, subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Description = stripe.String("Pro plan")
		}), 400, "", "description", "The simulator does not serve description in a subscription update: it takes " +
			"items[0][id] with items[0][price], cancel_at_period_end, proration_behavior and metadata."},
		{"an item parameter the simulator does not serve", sub.ID, subUpdate(item, "price_team", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Items[0].Quantity = stripe.Int64(2)
		}), 400, "", "items[0][quantity]", "The simulator does not serve items[0][quantity] in a subscription update: it takes " +
			"items[0][id] with items[0][price], cancel_at_period_end, proration_behavior and metadata."},
		{"a second item", sub.ID, subUpdate(item, "price_team", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Items = append(p.Items, &stripe.SubscriptionUpdateItemParams{Price: stripe.String("price_pro")})
		}), 400, "", "items[1][price]", oneItem + "only items[0] can be sent."},
		{"a price without its item", sub.ID, subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Items = []*stripe.SubscriptionUpdateItemParams{{Price: stripe.String("price_team")}}
		}), 400, "", "items[0][id]", oneItem + "change its price with items[0][id] naming it and items[0][price]."},
		{"bad proration_behavior", sub.ID, subUpdate(item, "price_team", "sometimes", nil),
			400, "", "proration_behavior", "Invalid proration_behavior: must be one of create_prorations, none, or always_invoice"},
		{"bad boolean", sub.ID, subUpdate("", "", "", extra("cancel_at_period_end", "yes")),
			400, "", "cancel_at_period_end", "Invalid boolean: yes"},
		{"not a price id", sub.ID, subUpdate(item, "plan_team", "", nil),
			400, "resource_missing", "items[0][price]", "No such price: 'plan_team'"},
		{"another currency", sub.ID, subUpdate(item, "price_dollars", "", nil),
			400, "", "items[0][price]", "The price price_dollars is in usd but subscription " + sub.ID + " is in eur: " +
				"a subscription's currency cannot change."},
		{"too much metadata", sub.ID, subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.Metadata = map[string]string{}
			for i := range 51 {
				p.Metadata[fmt.Sprintf("k%d", i)] = "v"
			}
		}), 400, "", "metadata", "Invalid metadata: metadata can have up to 50 keys, but you passed in 51 keys."},
		{"unknown subscription", "sub_nope", subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.CancelAtPeriodEnd = stripe.Bool(true)
		}), 404, "resource_missing", "id", "No such subscription: 'sub_nope'"},
		{"a canceled subscription", ended.ID, subUpdate("", "", "", func(p *stripe.SubscriptionUpdateParams) {
			p.CancelAtPeriodEnd = stripe.Bool(true)
		}), 400, "invalid_canceled_subscription_fields", "", "A canceled subscription can only update its cancellation_details and metadata."},
		{"a canceled subscription's price", ended.ID, subUpdate(ended.Items.Data[0].ID, "price_team", "", nil),
			400, "invalid_canceled_subscription_fields", "", "A canceled subscription can only update its cancellation_details and metadata."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(recv.deliveries())
			_, err := sc.V1Subscriptions.Update(context.Background(), tc.sub, tc.params)
			se := stripeErr(t, err)
			if se.HTTPStatusCode != tc.status || se.Type != stripe.ErrorTypeInvalidRequest ||
				se.Code != tc.code || se.Param != tc.param || se.Msg != tc.msg {
				t.Errorf("got %d %s code %q param %q %q,\nwant %d invalid_request_error code %q param %q %q",
					se.HTTPStatusCode, se.Type, se.Code, se.Param, se.Msg, tc.status, tc.code, tc.param, tc.msg)
			}
			if n := len(recv.deliveries()); n != before {
				t.Errorf("a refused update made %d deliveries", n-before)
			}
		})
	}
	if got := s.subscriptionObject(t, sub.ID); got.Items.Data[0].Price.ID != "price_pro" || got.CancelAtPeriodEnd || len(got.Metadata) != 0 {
		t.Errorf("refused updates changed the subscription: %s", mustJSON(got))
	}

	// A canceled subscription still takes metadata, as Stripe's does.
	before := len(recv.accepted())
	got, err := sc.V1Subscriptions.Update(context.Background(), ended.ID, &stripe.SubscriptionUpdateParams{
		Metadata: map[string]string{"note": "churned"}})
	if err != nil || got.Status != stripe.SubscriptionStatusCanceled || got.Metadata["note"] != "churned" {
		t.Fatalf("metadata on a canceled subscription: %+v, %v", got, err)
	}
	if events := recv.accepted()[before:]; len(events) != 1 || events[0].Type != stripe.EventTypeCustomerSubscriptionUpdated {
		t.Errorf("events %v", eventTypes(events))
	}
}

func TestStripePortalSwitch(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	setStripePrices(t, s, "eur", map[string]int64{"price_lite": 900, "price_pro": 2900, "price_team": 9900})
	setStripePrices(t, s, "usd", map[string]int64{"price_dollars": 500})
	if err := s.SetPortalPrices("price_lite", "price_pro", "price_team", "price_dollars", "price_lite"); err != nil {
		t.Fatal(err)
	}
	sc := stripeClient(base, testStripeKey)
	cust := newStripeCustomer(t, sc)
	sub := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	ps, err := sc.V1BillingPortalSessions.Create(context.Background(), &stripe.BillingPortalSessionCreateParams{
		Customer: stripe.String(cust.ID), ReturnURL: stripe.String("https://gw.example/account")})
	if err != nil {
		t.Fatal(err)
	}
	switchForm := func(price, label string) string {
		return `<form method="post" action="/stripe/portal/` + ps.ID + `/switch"><input type="hidden" name="subscription" value="` +
			sub.ID + `"><input type="hidden" name="price" value="` + price + `">` + "\n" +
			`<button id="switch-` + sub.ID + `-` + price + `" type="submit">Switch to ` + price + `, ` + label + ` per month</button></form>`
	}
	page := func(t *testing.T) string {
		t.Helper()
		resp, page := hosted(t, http.MethodGet, ps.URL, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", ps.URL, resp.StatusCode)
		}
		return page
	}
	// offers checks that the page offers exactly the switches to want, in order (their labels).
	offers := func(t *testing.T, want ...[2]string) {
		t.Helper()
		p := page(t)
		if n := strings.Count(p, `id="switch-`); n != len(want) {
			t.Errorf("%d switches, want %d:\n%s", n, len(want), p)
		}
		at := 0
		for _, w := range want {
			i := strings.Index(p[at:], switchForm(w[0], w[1]))
			if i < 0 {
				t.Errorf("the portal page lacks, after what came before,\n%s\nin:\n%s", switchForm(w[0], w[1]), p)
				return
			}
			at += i
		}
	}
	// Neither the subscription's own price nor one in another currency is offered; a price
	// set twice is offered once.
	offers(t, [2]string{"price_lite", "9.00 EUR"}, [2]string{"price_team", "99.00 EUR"})

	for _, step := range []struct {
		name, price string
		types       []stripe.EventType
		offered     [][2]string
	}{
		{"upgrade", "price_team", []stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated, stripe.EventTypeInvoicePaid},
			[][2]string{{"price_lite", "9.00 EUR"}, {"price_pro", "29.00 EUR"}}},
		{"downgrade", "price_lite", []stripe.EventType{stripe.EventTypeCustomerSubscriptionUpdated},
			[][2]string{{"price_pro", "29.00 EUR"}, {"price_team", "99.00 EUR"}}},
		{"to the price it has", "price_lite", nil, [][2]string{{"price_pro", "29.00 EUR"}, {"price_team", "99.00 EUR"}}},
	} {
		t.Run(step.name, func(t *testing.T) {
			before := len(recv.accepted())
			resp, body := hosted(t, http.MethodPost, ps.URL+"/switch", "subscription="+sub.ID+"&price="+step.price)
			if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/stripe/portal/"+ps.ID {
				t.Fatalf("switch: %d to %q: %s", resp.StatusCode, resp.Header.Get("Location"), body)
			}
			events := recv.accepted()[before:]
			if types := eventTypes(events); !reflect.DeepEqual(types, eventTypes(typed(step.types))) {
				t.Fatalf("events %v, want %v", types, step.types)
			}
			if len(events) > 0 && events[0].GetObjectValue("items", "data", "0", "price", "id") != step.price {
				t.Errorf("updated to %s", events[0].GetObjectValue("items", "data", "0", "price", "id"))
			}
			if len(events) == 2 {
				var inv stripe.Invoice
				objectOf(t, events[1], &inv)
				if inv.BillingReason != stripe.InvoiceBillingReasonSubscriptionUpdate || inv.Status != stripe.InvoiceStatusPaid ||
					inv.AmountPaid != 9900 || inv.Lines.Data[0].Pricing.PriceDetails.Price != "price_team" {
					t.Errorf("invoice %s", events[1].Data.Raw)
				}
			}
			offers(t, step.offered...)
		})
	}

	stranger := paidSubscription(t, sc, recv, newStripeCustomer(t, sc).ID, "price_pro")
	before := len(recv.deliveries())
	for _, tc := range []struct {
		url, form string
		status    int
	}{
		{ps.URL + "/switch", "subscription=" + stranger.ID + "&price=price_team", http.StatusNotFound},
		{ps.URL + "/switch", "subscription=sub_nope&price=price_team", http.StatusNotFound},
		{base + "/stripe/portal/bps_nope/switch", "subscription=" + sub.ID + "&price=price_team", http.StatusNotFound},
		{ps.URL + "/switch", "subscription=" + sub.ID + "&price=price_nope", http.StatusBadRequest},    // not offered
		{ps.URL + "/switch", "subscription=" + sub.ID + "&price=price_dollars", http.StatusBadRequest}, // another currency
	} {
		if resp, body := hosted(t, http.MethodPost, tc.url, tc.form); resp.StatusCode != tc.status {
			t.Errorf("POST %s %s: %d %s, want %d", tc.url, tc.form, resp.StatusCode, body, tc.status)
		}
	}
	if n := len(recv.deliveries()); n != before {
		t.Errorf("refused switches made %d deliveries", n-before)
	}

	// A cancelling subscription is offered no switch, and a switch posted anyway changes nothing.
	hosted(t, http.MethodPost, ps.URL+"/cancel", "subscription="+sub.ID)
	offers(t)
	before = len(recv.deliveries())
	if resp, _ := hosted(t, http.MethodPost, ps.URL+"/switch", "subscription="+sub.ID+"&price=price_team"); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("switching a cancelling subscription: %d", resp.StatusCode)
	}
	if n := len(recv.deliveries()); n != before || s.subscriptionObject(t, sub.ID).Items.Data[0].Price.ID != "price_lite" {
		t.Errorf("switching a cancelling subscription made %d deliveries", n-before)
	}

	// No prices: no switch, ever.
	if err := s.SetPortalPrices(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSubscription(sub.ID, "", false); err != nil {
		t.Fatal(err)
	}
	offers(t)
	for _, ids := range [][]string{{"plan_team"}, {"price_a", "price_b", "price_c", "price_d", "price_e", "price_f",
		"price_g", "price_h", "price_i", "price_j", "price_k"}} {
		if err := s.SetPortalPrices(ids...); err == nil {
			t.Errorf("SetPortalPrices(%v) took them", ids)
		}
	}
}

func TestStripePortalPricesControl(t *testing.T) {
	_, base := startSim(t)
	url := base + "/_sim/stripe/portal/prices"
	for _, tc := range []struct {
		body   string
		status int
		want   string
	}{
		{`{"prices":["price_team","price_lite","price_team"]}`, 200, `{"prices":["price_team","price_lite"]}`},
		{`{"prices":[]}`, 200, `{"prices":[]}`},
		{`{"prices":["price_team"]}`, 200, `{"prices":["price_team"]}`},
		{`{"prices":["plan_team"]}`, 400, ""},
		{`{"price":["price_team"]}`, 400, ""},
	} {
		resp, data := call(t, http.MethodPut, url, tc.body, "-")
		if resp.StatusCode != tc.status {
			t.Errorf("PUT %s: %d %s, want %d", tc.body, resp.StatusCode, data, tc.status)
			continue
		}
		if tc.want != "" {
			assertJSON(t, data, tc.want)
		}
	}
}
