package simulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// Paying through the hosted page, and the webhooks that tells the gateway about.

func TestStripePayPaymentSession(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	sc := stripeClient(base, testStripeKey)
	sess := paymentSession(t, sc, "")

	resp, page := hosted(t, http.MethodGet, sess.URL, "")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("GET %s: %d %s", sess.URL, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`<li>1,500 credits × 1: 15.00 USD</li>`,
		`Total: <strong id="amount">15.00 USD</strong>`,
		`<form method="post" action="/stripe/pay/` + sess.ID + `"><button id="pay" type="submit">Pay</button></form>`,
		`<a id="cancel" href="https://gw.example/billing">Cancel</a>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the pay page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "<script") || strings.Contains(page, "<link") {
		t.Errorf("the pay page loads something:\n%s", page)
	}

	loc := payHosted(t, sess.URL)
	if want := "https://gw.example/billing/done?session=" + sess.ID; loc != want {
		t.Errorf("Location %q, want %q", loc, want)
	}
	// The webhooks were delivered before the redirect was answered.
	got := recv.deliveries()
	if len(got) != 1 || got[0].err != nil || got[0].contentType != "application/json; charset=utf-8" {
		t.Fatalf("deliveries %+v, want one verified checkout.session.completed", got)
	}
	ev := got[0].event
	paid, err := sc.V1CheckoutSessions.Retrieve(context.Background(), sess.ID, &stripe.CheckoutSessionRetrieveParams{})
	if err != nil {
		t.Fatal(err)
	}
	if paid.PaymentIntent == nil || !strings.HasPrefix(paid.PaymentIntent.ID, "pi_") {
		t.Fatalf("paid session's payment_intent %+v, want pi_…", paid.PaymentIntent)
	}
	wantPaid := fmt.Sprintf(`{"id":%q,"object":"checkout.session","amount_subtotal":1500,"amount_total":1500,
		"cancel_url":"https://gw.example/billing","client_reference_id":"acct_42","created":%d,"currency":"usd",
		"customer":null,"customer_details":{"email":null,"name":null},"customer_email":null,"expires_at":%d,"invoice":null,
		"livemode":false,"metadata":{"account_id":"acct_42","credits":"1500"},"mode":"payment","payment_intent":%q,
		"payment_status":"paid","status":"complete","subscription":null,
		"success_url":"https://gw.example/billing/done?session={CHECKOUT_SESSION_ID}","ui_mode":"hosted","url":null}`,
		sess.ID, sess.Created, sess.Created+86400, paid.PaymentIntent.ID)
	assertJSON(t, paid.LastResponse.RawJSON, wantPaid)
	assertJSON(t, got[0].body, fmt.Sprintf(`{"id":%q,"object":"event","api_version":%q,"created":%d,
		"data":{"object":%s},"livemode":false,"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},
		"type":"checkout.session.completed"}`, ev.ID, stripe.APIVersion, ev.Created, wantPaid))
	if !strings.HasPrefix(ev.ID, "evt_") {
		t.Errorf("event id %q, want evt_…", ev.ID)
	}

	// A wrong secret does not verify what was sent.
	if _, err := webhook.ConstructEvent(got[0].body, got[0].signature, "whsec_other"); !errors.Is(err, webhook.ErrNoValidSignature) {
		t.Errorf("verifying with another secret: %v, want ErrNoValidSignature", err)
	}

	// Paying again only redirects; the page says it is paid.
	if loc2 := payHosted(t, sess.URL); loc2 != loc {
		t.Errorf("second payment sent the payer to %q, want %q", loc2, loc)
	}
	if n := len(recv.deliveries()); n != 1 {
		t.Errorf("paying twice made %d deliveries, want 1", n)
	}
	_, page = hosted(t, http.MethodGet, sess.URL, "")
	if !strings.Contains(page, `<p id="paid">This payment is complete.</p>`) || strings.Contains(page, `id="pay"`) {
		t.Errorf("the page of a paid session:\n%s", page)
	}

	recs := s.StripeEvents()
	if len(recs) != 1 || recs[0].ID != ev.ID || recs[0].Type != "checkout.session.completed" ||
		string(recs[0].Payload) != string(got[0].body) || len(recs[0].Deliveries) != 1 {
		t.Fatalf("StripeEvents() = %+v", recs)
	}
	if d := recs[0].Deliveries[0]; d.URL != recv.URL || d.Attempt != 1 || d.Status != http.StatusOK || d.Error != "" {
		t.Errorf("delivery %+v", d)
	}

	for _, path := range []string{"/stripe/pay/cs_test_nope"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			if resp, _ := hosted(t, method, base+path, ""); resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s: %d, want 404", method, path, resp.StatusCode)
			}
		}
	}
}

func TestStripePaySubscriptionSession(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	if err := s.SetStripePrice("price_pro", StripePrice{UnitAmount: 2900, Currency: "eur", Interval: "month"}); err != nil {
		t.Fatal(err)
	}
	sc := stripeClient(base, testStripeKey)
	ctx := context.Background()
	cust := newStripeCustomer(t, sc)
	sess := subscriptionSession(t, sc, cust.ID, "price_pro")

	_, page := hosted(t, http.MethodGet, sess.URL, "")
	if want := `Total: <strong id="amount">29.00 EUR</strong> per month`; !strings.Contains(page, want) {
		t.Errorf("the pay page lacks %s:\n%s", want, page)
	}
	payHosted(t, sess.URL)

	events := recv.accepted()
	if got, want := eventTypes(events), []string{"customer.subscription.created", "invoice.paid", "checkout.session.completed"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var sub stripe.Subscription
	objectOf(t, events[0], &sub)
	var inv stripe.Invoice
	objectOf(t, events[1], &inv)
	var done stripe.CheckoutSession
	objectOf(t, events[2], &done)

	item := sub.Items.Data[0]
	start := item.CurrentPeriodStart
	assertJSON(t, events[0].Data.Raw, fmt.Sprintf(`{"id":%q,"object":"subscription","billing_cycle_anchor":%d,
		"cancel_at":null,"cancel_at_period_end":false,"canceled_at":null,
		"cancellation_details":{"comment":null,"feedback":null,"reason":null},"collection_method":"charge_automatically",
		"created":%d,"currency":"eur","customer":%q,"ended_at":null,
		"items":{"object":"list","data":[{"id":%q,"object":"subscription_item","created":%d,"current_period_end":%d,
			"current_period_start":%d,"metadata":{},"price":{"id":"price_pro","object":"price","active":true,"currency":"eur",
			"livemode":false,"metadata":{},"product":"prod_pro","recurring":{"interval":"month","interval_count":1,"usage_type":"licensed"},
			"type":"recurring","unit_amount":2900,"unit_amount_decimal":"2900"},"quantity":1,"subscription":%q}],
			"has_more":false,"total_count":1,"url":"/v1/subscription_items?subscription=%s"},
		"latest_invoice":%q,"livemode":false,"metadata":{},"start_date":%d,"status":"active"}`,
		sub.ID, start, start, cust.ID, item.ID, start, start+30*86400, start, sub.ID, sub.ID, inv.ID, start))
	assertJSON(t, events[1].Data.Raw, fmt.Sprintf(`{"id":%q,"object":"invoice","amount_due":2900,"amount_paid":2900,
		"amount_remaining":0,"attempt_count":1,"attempted":true,"billing_reason":"subscription_create",
		"collection_method":"charge_automatically","created":%d,"currency":"eur","customer":%q,"customer_email":"ada@example.com",
		"lines":{"object":"list","data":[{"id":%q,"object":"line_item","amount":2900,"currency":"eur",
			"description":"1 × prod_pro (at 29.00 EUR / month)","invoice":%q,"livemode":false,"metadata":{},
			"parent":{"invoice_item_details":null,"subscription_item_details":{"invoice_item":null,"proration":false,
				"subscription":%q,"subscription_item":%q},"type":"subscription_item_details"},
			"period":{"end":%d,"start":%d},
			"pricing":{"price_details":{"price":"price_pro","product":"prod_pro"},"type":"price_details","unit_amount_decimal":"2900"},
			"quantity":1}],"has_more":false,"total_count":1,"url":"/v1/invoices/%s/lines"},
		"livemode":false,"metadata":{},"parent":{"quote_details":null,"subscription_details":{"metadata":{},"subscription":%q},
			"type":"subscription_details"},"period_end":%d,"period_start":%d,"status":"paid","subtotal":2900,"total":2900}`,
		inv.ID, start, cust.ID, inv.Lines.Data[0].ID, inv.ID, sub.ID, item.ID, start+30*86400, start, inv.ID, sub.ID, start, start))
	// stripe-go reads the references where this API version puts them.
	if inv.Parent.SubscriptionDetails.Subscription.ID != sub.ID || inv.Lines.Data[0].Pricing.PriceDetails.Price != "price_pro" ||
		inv.Lines.Data[0].Period.End != item.CurrentPeriodEnd || inv.Customer.ID != cust.ID {
		t.Errorf("stripe-go parsed the invoice as %+v", inv)
	}
	if done.Subscription == nil || done.Subscription.ID != sub.ID || done.Invoice == nil || done.Invoice.ID != inv.ID ||
		done.PaymentIntent != nil || done.Customer.ID != cust.ID || done.PaymentStatus != stripe.CheckoutSessionPaymentStatusPaid ||
		done.Status != stripe.CheckoutSessionStatusComplete || done.ClientReferenceID != "acct_42" {
		t.Errorf("checkout.session.completed object %+v", done)
	}
	got, err := sc.V1Subscriptions.Retrieve(ctx, sub.ID, &stripe.SubscriptionRetrieveParams{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got.LastResponse.RawJSON, string(events[0].Data.Raw))
}

func TestStripePaySubscriptionMakesCustomer(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	sc := stripeClient(base, testStripeKey)
	ctx := context.Background()
	sess, err := sc.V1CheckoutSessions.Create(ctx, &stripe.CheckoutSessionCreateParams{Mode: stripe.String("subscription"),
		LineItems:     []*stripe.CheckoutSessionCreateLineItemParams{{Price: stripe.String("price_basic"), Quantity: stripe.Int64(1)}},
		CustomerEmail: stripe.String("grace@example.com"), SuccessURL: stripe.String("https://gw.example/ok"),
		SubscriptionData: &stripe.CheckoutSessionCreateSubscriptionDataParams{Metadata: map[string]string{"account_id": "acct_7"}}})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Customer != nil {
		t.Errorf("an open session with customer_email has customer %+v, want null", sess.Customer)
	}
	payHosted(t, sess.URL)
	events := recv.accepted()
	if len(events) != 3 {
		t.Fatalf("events %v", eventTypes(events))
	}
	var sub stripe.Subscription
	objectOf(t, events[0], &sub)
	var done stripe.CheckoutSession
	objectOf(t, events[2], &done)
	if done.Customer == nil || sub.Customer.ID != done.Customer.ID || done.CustomerDetails.Email != "grace@example.com" {
		t.Fatalf("session customer %+v details %+v, subscription customer %+v", done.Customer, done.CustomerDetails, sub.Customer)
	}
	// subscription_data[metadata] is the subscription's, as in Stripe; the session's is not copied.
	if !reflect.DeepEqual(sub.Metadata, map[string]string{"account_id": "acct_7"}) || sub.Items.Data[0].Price.UnitAmount != 1000 {
		t.Errorf("subscription metadata %v, unit amount %d", sub.Metadata, sub.Items.Data[0].Price.UnitAmount)
	}
	cust, err := sc.V1Customers.Retrieve(ctx, done.Customer.ID, &stripe.CustomerRetrieveParams{})
	if err != nil || cust.Email != "grace@example.com" {
		t.Errorf("the customer made at payment: %+v, %v", cust, err)
	}
}

func TestStripeConcurrentPayments(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	sc := stripeClient(base, testStripeKey)
	sessions := []*stripe.CheckoutSession{paymentSession(t, sc, ""), paymentSession(t, sc, "")}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			sess := sessions[i%2]
			if resp, body := hosted(t, http.MethodPost, sess.URL, ""); resp.StatusCode != http.StatusSeeOther {
				t.Errorf("POST %s: %d %s", sess.URL, resp.StatusCode, body)
			}
			if _, err := sc.V1CheckoutSessions.Retrieve(context.Background(), sess.ID, &stripe.CheckoutSessionRetrieveParams{}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	completed := map[string]int{}
	for _, e := range recv.accepted() {
		completed[e.GetObjectValue("id")]++
	}
	if want := map[string]int{sessions[0].ID: 1, sessions[1].ID: 1}; !reflect.DeepEqual(completed, want) {
		t.Errorf("checkout.session.completed per session %v, want %v", completed, want)
	}
}
