package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82"
)

// paidSubscription pays a subscription session to price and returns the subscription as
// its customer.subscription.created event (the newest for that customer and price) carried it.
func paidSubscription(t *testing.T, sc *stripe.Client, recv *hookReceiver, customer, price string) stripe.Subscription {
	t.Helper()
	payHosted(t, subscriptionSession(t, sc, customer, price).URL)
	events := recv.accepted()
	for i := len(events) - 1; i >= 0; i-- {
		if e := events[i]; e.Type == stripe.EventTypeCustomerSubscriptionCreated {
			var sub stripe.Subscription
			objectOf(t, e, &sub)
			if sub.Items.Data[0].Price.ID == price && sub.Customer.ID == customer {
				return sub
			}
		}
	}
	t.Fatal("no customer.subscription.created")
	return stripe.Subscription{}
}

func TestStripeSubscriptionLifecycle(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	for id, amount := range map[string]int64{"price_pro": 2900, "price_team": 9900} {
		if err := s.SetStripePrice(id, StripePrice{UnitAmount: amount, Currency: "eur"}); err != nil {
			t.Fatal(err)
		}
	}
	sc := stripeClient(base, testStripeKey)
	cust := newStripeCustomer(t, sc)
	sub := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	start := sub.Items.Data[0].CurrentPeriodStart
	end := start + 30*86400
	const day = 86400

	items := func(price string, amount int64) string {
		return fmt.Sprintf(`{"object":"list","data":[{"id":%q,"object":"subscription_item","created":%d,
			"current_period_end":%d,"current_period_start":%d,"metadata":{},"price":{"id":%q,"object":"price","active":true,
			"currency":"eur","livemode":false,"metadata":{},"product":%q,"recurring":{"interval":"month","interval_count":1,
			"usage_type":"licensed"},"type":"recurring","unit_amount":%d,"unit_amount_decimal":"%d"},"quantity":1,
			"subscription":%q}],"has_more":false,"total_count":1,"url":"/v1/subscription_items?subscription=%s"}`,
			sub.Items.Data[0].ID, start, end, start, price, "prod_"+strings.TrimPrefix(price, "price_"), amount, amount, sub.ID, sub.ID)
	}
	const notCancelling = `{"cancel_at":null,"cancel_at_period_end":false,"canceled_at":null,
		"cancellation_details":{"comment":null,"feedback":null,"reason":null}}`
	for _, step := range []struct {
		name  string
		op    func() (string, error)
		typ   stripe.EventType
		check func(t *testing.T, e stripe.Event)
	}{
		{"change the price", func() (string, error) { return s.UpdateSubscription(sub.ID, "price_team", false) },
			stripe.EventTypeCustomerSubscriptionUpdated, func(t *testing.T, e stripe.Event) {
				assertJSON(t, decodeAs[map[string]json.RawMessage](t, e.Data.Raw)["items"], items("price_team", 9900))
				assertJSON(t, mustJSON(e.Data.PreviousAttributes), `{"items":`+items("price_pro", 2900)+`}`)
				if e.GetObjectValue("items", "data", "0", "price", "id") != "price_team" {
					t.Errorf("items.data[0].price.id = %q", e.GetObjectValue("items", "data", "0", "price", "id"))
				}
			}},
		{"cancel at period end", func() (string, error) { return s.UpdateSubscription(sub.ID, "", true) },
			stripe.EventTypeCustomerSubscriptionUpdated, func(t *testing.T, e stripe.Event) {
				var got stripe.Subscription
				objectOf(t, e, &got)
				if !got.CancelAtPeriodEnd || got.CancelAt != end || time.Since(time.Unix(got.CanceledAt, 0)) > time.Minute ||
					got.CancellationDetails.Reason != stripe.SubscriptionCancellationDetailsReasonCancellationRequested ||
					got.Status != stripe.SubscriptionStatusActive {
					t.Errorf("subscription %+v", got)
				}
				assertJSON(t, mustJSON(e.Data.PreviousAttributes), notCancelling)
			}},
		{"resume", func() (string, error) { return s.UpdateSubscription(sub.ID, "", false) },
			stripe.EventTypeCustomerSubscriptionUpdated, func(t *testing.T, e stripe.Event) {
				assertJSON(t, mustJSON(e.Data.PreviousAttributes), fmt.Sprintf(`{"cancel_at":%d,"cancel_at_period_end":true,
					"canceled_at":%s,"cancellation_details":{"comment":null,"feedback":null,"reason":"cancellation_requested"}}`,
					end, e.GetPreviousValue("canceled_at")))
				got := decodeAs[map[string]any](t, e.Data.Raw)
				for k, want := range map[string]any{"cancel_at": nil, "cancel_at_period_end": false, "canceled_at": nil} {
					if got[k] != want {
						t.Errorf("%s = %v, want %v", k, got[k], want)
					}
				}
			}},
		{"fail the renewal", func() (string, error) { return s.FailInvoice(sub.ID) },
			stripe.EventTypeInvoicePaymentFailed, func(t *testing.T, e stripe.Event) {
				var inv stripe.Invoice
				objectOf(t, e, &inv)
				line := inv.Lines.Data[0]
				if inv.Status != stripe.InvoiceStatusOpen || inv.AmountDue != 9900 || inv.AmountPaid != 0 || inv.AmountRemaining != 9900 ||
					inv.BillingReason != stripe.InvoiceBillingReasonSubscriptionCycle || inv.Parent.SubscriptionDetails.Subscription.ID != sub.ID ||
					line.Period.Start != end || line.Period.End != end+30*day || line.Pricing.PriceDetails.Price != "price_team" ||
					inv.PeriodStart != start || inv.PeriodEnd != end {
					t.Errorf("invoice %s", e.Data.Raw)
				}
			}},
		{"renew", func() (string, error) { return s.RenewSubscription(sub.ID) },
			stripe.EventTypeInvoicePaid, func(t *testing.T, e stripe.Event) {
				var inv stripe.Invoice
				objectOf(t, e, &inv)
				line := inv.Lines.Data[0]
				if inv.Status != stripe.InvoiceStatusPaid || inv.AmountPaid != 9900 || inv.BillingReason != stripe.InvoiceBillingReasonSubscriptionCycle ||
					line.Period.Start != end || line.Period.End != end+30*day {
					t.Errorf("invoice %s", e.Data.Raw)
				}
				got, err := sc.V1Subscriptions.Retrieve(context.Background(), sub.ID, &stripe.SubscriptionRetrieveParams{})
				if err != nil || got.Items.Data[0].CurrentPeriodStart != end || got.Items.Data[0].CurrentPeriodEnd != end+30*day ||
					got.LatestInvoice.ID != inv.ID {
					t.Errorf("after renewal: %+v, %v", got, err)
				}
			}},
		{"cancel now", func() (string, error) { return s.CancelSubscription(sub.ID) },
			stripe.EventTypeCustomerSubscriptionDeleted, func(t *testing.T, e stripe.Event) {
				var got stripe.Subscription
				objectOf(t, e, &got)
				if got.Status != stripe.SubscriptionStatusCanceled || got.EndedAt == 0 || got.CanceledAt != got.EndedAt ||
					got.CancellationDetails.Reason != stripe.SubscriptionCancellationDetailsReasonCancellationRequested ||
					e.Data.PreviousAttributes != nil {
					t.Errorf("deleted subscription %s", e.Data.Raw)
				}
			}},
	} {
		t.Run(step.name, func(t *testing.T) {
			id, err := step.op()
			if err != nil {
				t.Fatal(err)
			}
			events := recv.accepted()
			e := events[len(events)-1]
			if e.ID != id || e.Type != step.typ {
				t.Fatalf("last event %s %s, want %s %s", e.ID, e.Type, id, step.typ)
			}
			step.check(t, e)
		})
	}

	if err := s.SetStripePrice("price_dollars", StripePrice{UnitAmount: 500, Currency: "usd"}); err != nil {
		t.Fatal(err)
	}
	other := paidSubscription(t, sc, recv, cust.ID, "price_pro")
	before := len(recv.deliveries())
	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"update an ended subscription", second(s.UpdateSubscription(sub.ID, "price_pro", false)), false},
		{"cancel an ended subscription", second(s.CancelSubscription(sub.ID)), false},
		{"fail an ended subscription", second(s.FailInvoice(sub.ID)), false},
		{"renew an ended subscription", second(s.RenewSubscription(sub.ID)), false},
		{"nothing to change", second(s.UpdateSubscription(other.ID, "price_pro", false)), false},
		{"another currency", second(s.UpdateSubscription(other.ID, "price_dollars", false)), false},
		{"not a price id", second(s.UpdateSubscription(other.ID, "plan_x", false)), false},
		{"unknown subscription", second(s.CancelSubscription("sub_nope")), true},
	} {
		if tc.err == nil || errors.Is(tc.err, errStripeUnknown) != tc.unknown {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
	if n := len(recv.deliveries()); n != before {
		t.Errorf("refused operations made %d deliveries", n-before)
	}

	// At the end of a period a subscription set to cancel ends instead of renewing.
	if _, err := s.UpdateSubscription(other.ID, "", true); err != nil {
		t.Fatal(err)
	}
	id, err := s.RenewSubscription(other.ID)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := s.StripeEvent(id)
	var ended stripe.Event
	if err := json.Unmarshal(rec.Payload, &ended); err != nil {
		t.Fatal(err)
	}
	var got stripe.Subscription
	objectOf(t, ended, &got)
	if rec.Type != "customer.subscription.deleted" || got.EndedAt != got.Items.Data[0].CurrentPeriodEnd {
		t.Errorf("renewing a cancelling subscription sent %s, ended at %d (its period ends at %d)", rec.Type, got.EndedAt, got.Items.Data[0].CurrentPeriodEnd)
	}
}

func second(_ string, err error) error { return err }

// decodeAs decodes JSON into a T, failing the test on error.
func decodeAs[T any](t *testing.T, data []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return v
}

func TestStripePortalPage(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	sc := stripeClient(base, testStripeKey)
	cust := newStripeCustomer(t, sc)
	sub := paidSubscription(t, sc, recv, cust.ID, "price_basic")
	ps, err := sc.V1BillingPortalSessions.Create(context.Background(), &stripe.BillingPortalSessionCreateParams{
		Customer: stripe.String(cust.ID), ReturnURL: stripe.String("https://gw.example/account")})
	if err != nil {
		t.Fatal(err)
	}
	end := time.Unix(sub.Items.Data[0].CurrentPeriodEnd, 0).UTC().Format(time.DateOnly)

	resp, page := hosted(t, http.MethodGet, ps.URL, "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", ps.URL, resp.StatusCode)
	}
	for _, want := range []string{
		`<p id="customer">` + cust.ID + ` (ada@example.com)</p>`,
		`<p>` + sub.ID + `: price_basic, 10.00 USD per month, <span class="status">active</span></p>`,
		`<p class="renews">Renews on ` + end + `.</p>`,
		`<form method="post" action="/stripe/portal/` + ps.ID + `/cancel"><input type="hidden" name="subscription" value="` + sub.ID + `">`,
		`<button id="cancel-` + sub.ID + `" type="submit">Cancel subscription</button></form>`,
		`<a id="return" href="https://gw.example/account">Return</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the portal page lacks %s:\n%s", want, page)
		}
	}

	before := len(recv.accepted())
	resp, _ = hosted(t, http.MethodPost, ps.URL+"/cancel", "subscription="+sub.ID)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/stripe/portal/"+ps.ID {
		t.Fatalf("cancel: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	events := recv.accepted()
	if len(events) != before+1 || events[before].Type != stripe.EventTypeCustomerSubscriptionUpdated ||
		events[before].GetObjectValue("cancel_at_period_end") != "true" || events[before].GetObjectValue("id") != sub.ID {
		t.Fatalf("events after cancel: %v", eventTypes(events[before:]))
	}
	_, page = hosted(t, http.MethodGet, ps.URL, "")
	if !strings.Contains(page, `<p class="cancels">Cancels on `+end+`.</p>`) || strings.Contains(page, "Cancel subscription") {
		t.Errorf("the portal page after cancel:\n%s", page)
	}
	// Cancelling again changes nothing; another customer's subscription is not found.
	hosted(t, http.MethodPost, ps.URL+"/cancel", "subscription="+sub.ID)
	if n := len(recv.accepted()); n != before+1 {
		t.Errorf("cancelling twice sent %d events", n-before)
	}
	stranger := paidSubscription(t, sc, recv, newStripeCustomer(t, sc).ID, "price_basic")
	for _, tc := range []struct{ url, form string }{
		{ps.URL + "/cancel", "subscription=" + stranger.ID},
		{ps.URL + "/cancel", "subscription=sub_nope"},
		{base + "/stripe/portal/bps_nope/cancel", "subscription=" + sub.ID},
		{base + "/stripe/portal/bps_nope", ""},
	} {
		method := http.MethodPost
		if tc.form == "" {
			method = http.MethodGet
		}
		if resp, _ := hosted(t, method, tc.url, tc.form); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s %s %s: %d, want 404", method, tc.url, tc.form, resp.StatusCode)
		}
	}
}
