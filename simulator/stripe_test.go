package simulator

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v82"
)

// The fake Stripe API, driven by stripe-go's own client: what it sends (form bodies,
// Stripe-Version, Idempotency-Key) must be understood, and what the fake answers must be
// parsed by stripe-go and be exactly Stripe's shape.

func TestStripeCustomerAndPaymentSession(t *testing.T) {
	_, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	ctx := context.Background()

	cust := newStripeCustomer(t, sc)
	if !strings.HasPrefix(cust.ID, "cus_") {
		t.Errorf("customer id %q, want cus_…", cust.ID)
	}
	wantCustomer := fmt.Sprintf(`{"id":%q,"object":"customer","created":%d,"email":"ada@example.com","livemode":false,
		"metadata":{"account_id":"acct_42"},"name":null}`, cust.ID, cust.Created)
	assertJSON(t, cust.LastResponse.RawJSON, wantCustomer)
	gotCust, err := sc.V1Customers.Retrieve(ctx, cust.ID, &stripe.CustomerRetrieveParams{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, gotCust.LastResponse.RawJSON, wantCustomer)

	sess := paymentSession(t, sc, cust.ID)
	if !strings.HasPrefix(sess.ID, "cs_test_") {
		t.Errorf("session id %q, want cs_test_…", sess.ID)
	}
	wantSession := fmt.Sprintf(`{"id":%q,"object":"checkout.session","amount_subtotal":1500,"amount_total":1500,
		"cancel_url":"https://gw.example/billing","client_reference_id":"acct_42","created":%d,"currency":"usd",
		"customer":%q,"customer_details":null,"customer_email":null,"expires_at":%d,"invoice":null,"livemode":false,
		"metadata":{"account_id":"acct_42","credits":"1500"},"mode":"payment","payment_intent":null,
		"payment_status":"unpaid","status":"open","subscription":null,
		"success_url":"https://gw.example/billing/done?session={CHECKOUT_SESSION_ID}","ui_mode":"hosted","url":%q}`,
		sess.ID, sess.Created, cust.ID, sess.Created+86400, base+"/stripe/pay/"+sess.ID)
	assertJSON(t, sess.LastResponse.RawJSON, wantSession)
	// stripe-go parses it: an unexpanded customer is an id, unset references are nil.
	if sess.Customer == nil || sess.Customer.ID != cust.ID || sess.PaymentIntent != nil || sess.Subscription != nil ||
		sess.Status != stripe.CheckoutSessionStatusOpen || sess.Mode != stripe.CheckoutSessionModePayment {
		t.Errorf("stripe-go parsed %+v", sess)
	}
	if got := sess.LastResponse.Header.Get("Stripe-Version"); got != stripe.APIVersion {
		t.Errorf("Stripe-Version %q, want %q", got, stripe.APIVersion)
	}
	if !strings.HasPrefix(sess.LastResponse.RequestID, "req_") {
		t.Errorf("Request-Id %q, want req_…", sess.LastResponse.RequestID)
	}

	got, err := sc.V1CheckoutSessions.Retrieve(ctx, sess.ID, &stripe.CheckoutSessionRetrieveParams{})
	if err != nil {
		t.Fatal(err)
	}
	assertJSON(t, got.LastResponse.RawJSON, wantSession)

	_, err = sc.V1CheckoutSessions.Retrieve(ctx, "cs_test_nope", &stripe.CheckoutSessionRetrieveParams{})
	if se := stripeErr(t, err); se.HTTPStatusCode != http.StatusNotFound || se.Code != stripe.ErrorCodeResourceMissing ||
		se.Msg != "No such checkout.session: 'cs_test_nope'" {
		t.Errorf("unknown session: %v", se)
	}
}

func TestStripeSubscriptionSessionPrices(t *testing.T) {
	s, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	if err := s.SetStripePrice("price_pro", StripePrice{UnitAmount: 2900, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	cust := newStripeCustomer(t, sc)
	for _, tc := range []struct {
		price    string
		amount   int64
		currency string
	}{
		{"price_pro", 2900, "eur"},
		{"price_unknown", 1000, "usd"}, // any price id is accepted, at the default price
	} {
		sess := subscriptionSession(t, sc, cust.ID, tc.price)
		assertJSON(t, sess.LastResponse.RawJSON, fmt.Sprintf(`{"id":%q,"object":"checkout.session","amount_subtotal":%d,
			"amount_total":%d,"cancel_url":null,"client_reference_id":"acct_42","created":%d,"currency":%q,"customer":%q,
			"customer_details":null,"customer_email":null,"expires_at":%d,"invoice":null,"livemode":false,
			"metadata":{"account_id":"acct_42"},"mode":"subscription","payment_intent":null,"payment_status":"unpaid",
			"status":"open","subscription":null,"success_url":"https://gw.example/billing/done","ui_mode":"hosted","url":%q}`,
			sess.ID, tc.amount, tc.amount, sess.Created, tc.currency, cust.ID, sess.Created+86400, base+"/stripe/pay/"+sess.ID))
	}

	for _, bad := range []struct {
		id string
		p  StripePrice
	}{
		{"plan_pro", StripePrice{UnitAmount: 100, Currency: "usd"}},
		{"price_x", StripePrice{UnitAmount: 0, Currency: "usd"}},
		{"price_x", StripePrice{UnitAmount: 100, Currency: "dollars"}},
		{"price_x", StripePrice{UnitAmount: 100, Currency: "usd", Interval: "week"}},
	} {
		if err := s.SetStripePrice(bad.id, bad.p); err == nil {
			t.Errorf("SetStripePrice(%q, %+v) = nil, want an error", bad.id, bad.p)
		}
	}
}

func TestStripeIdempotencyKey(t *testing.T) {
	_, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	ctx := context.Background()
	params := func(amount int64) *stripe.CheckoutSessionCreateParams {
		p := &stripe.CheckoutSessionCreateParams{Mode: stripe.String("payment"), SuccessURL: stripe.String("https://gw.example/ok"),
			LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{Quantity: stripe.Int64(1),
				PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{Currency: stripe.String("usd"), UnitAmount: stripe.Int64(amount),
					ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("credits")}}}}}
		p.SetIdempotencyKey("buy-acct_42-1")
		return p
	}
	first, err := sc.V1CheckoutSessions.Create(ctx, params(500))
	if err != nil {
		t.Fatal(err)
	}
	again, err := sc.V1CheckoutSessions.Create(ctx, params(500))
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || string(again.LastResponse.RawJSON) != string(first.LastResponse.RawJSON) {
		t.Errorf("retry with the same key made %s, want the first answer (%s)", again.ID, first.ID)
	}
	if got := again.LastResponse.Header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("Idempotent-Replayed %q, want true", got)
	}
	if got := first.LastResponse.Header.Get("Idempotent-Replayed"); got != "" {
		t.Errorf("first answer Idempotent-Replayed %q, want none", got)
	}
	_, err = sc.V1CheckoutSessions.Create(ctx, params(700))
	se := stripeErr(t, err)
	if se.HTTPStatusCode != http.StatusBadRequest || se.Type != stripe.ErrorTypeIdempotency ||
		se.Msg != "Keys for idempotent requests can only be used with the same parameters they were first used with. "+
			"Try using a key other than 'buy-acct_42-1' if you meant to execute a different request." {
		t.Errorf("same key, other params: %v", se)
	}
	// Without a key of its own, stripe-go sends a fresh one per call: two sessions.
	p := params(500)
	p.IdempotencyKey = nil
	a, errA := sc.V1CheckoutSessions.Create(ctx, p)
	b, errB := sc.V1CheckoutSessions.Create(ctx, p)
	if errA != nil || errB != nil || a.ID == b.ID {
		t.Errorf("two calls without a key: %v %v, ids %s %s", errA, errB, a.ID, b.ID)
	}
}

func TestStripeCheckoutErrors(t *testing.T) {
	_, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	cust := newStripeCustomer(t, sc)
	valid := func() *stripe.CheckoutSessionCreateParams {
		return &stripe.CheckoutSessionCreateParams{Mode: stripe.String("payment"), SuccessURL: stripe.String("https://gw.example/ok"),
			LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{Quantity: stripe.Int64(1),
				PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{Currency: stripe.String("usd"), UnitAmount: stripe.Int64(500),
					ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("credits")}}}}}
	}
	const amount = "line_items[0][price_data][unit_amount]"
	for _, tc := range []struct {
		name   string
		change func(p *stripe.CheckoutSessionCreateParams)
		code   stripe.ErrorCode
		param  string
		msg    string
	}{
		{"no mode", func(p *stripe.CheckoutSessionCreateParams) { p.Mode = nil },
			"parameter_missing", "mode", "Missing required param: mode."},
		{"bad mode", func(p *stripe.CheckoutSessionCreateParams) { p.Mode = stripe.String("rent") },
			"", "mode", "Invalid mode: must be one of payment, setup, or subscription"},
		{"no success_url", func(p *stripe.CheckoutSessionCreateParams) { p.SuccessURL = nil },
			"parameter_missing", "success_url", "Missing required param: success_url."},
		{"success_url not a URL", func(p *stripe.CheckoutSessionCreateParams) { p.SuccessURL = stripe.String("/billing/ok") },
			"url_invalid", "success_url", "Not a valid URL"},
		{"zero amount", func(p *stripe.CheckoutSessionCreateParams) { p.LineItems[0].PriceData.UnitAmount = stripe.Int64(0) },
			"parameter_invalid_integer", amount, "This value must be greater than or equal to 1."},
		{"negative amount", func(p *stripe.CheckoutSessionCreateParams) { p.LineItems[0].PriceData.UnitAmount = stripe.Int64(-500) },
			"parameter_invalid_integer", amount, "This value must be greater than or equal to 1."},
		{"no amount", func(p *stripe.CheckoutSessionCreateParams) { p.LineItems[0].PriceData.UnitAmount = nil },
			"parameter_missing", amount, "Missing required param: " + amount + "."},
		{"bad currency", func(p *stripe.CheckoutSessionCreateParams) {
			p.LineItems[0].PriceData.Currency = stripe.String("dollars")
		}, "", "line_items[0][price_data][currency]", "Invalid currency: dollars."},
		{"no product name", func(p *stripe.CheckoutSessionCreateParams) { p.LineItems[0].PriceData.ProductData = nil },
			"parameter_missing", "line_items[0][price_data][product_data][name]",
			"Missing required param: line_items[0][price_data][product_data][name]."},
		{"no quantity", func(p *stripe.CheckoutSessionCreateParams) { p.LineItems[0].Quantity = nil },
			"parameter_missing", "line_items[0][quantity]", "Missing required param: line_items[0][quantity]."},
		{"no line items", func(p *stripe.CheckoutSessionCreateParams) { p.LineItems = nil },
			"parameter_missing", "line_items", "Missing required param: line_items."},
		{"recurring price in payment mode", func(p *stripe.CheckoutSessionCreateParams) {
			p.LineItems[0] = &stripe.CheckoutSessionCreateLineItemParams{Price: stripe.String("price_pro"), Quantity: stripe.Int64(1)}
		}, "", "line_items[0][price]", "You specified `payment` mode but passed a recurring price. " +
			"Either switch to `subscription` mode or use only one-time prices."},
		{"not a price id", func(p *stripe.CheckoutSessionCreateParams) {
			p.Mode = stripe.String("subscription")
			p.LineItems[0] = &stripe.CheckoutSessionCreateLineItemParams{Price: stripe.String("plan_pro"), Quantity: stripe.Int64(1)}
		}, "resource_missing", "line_items[0][price]", "No such price: 'plan_pro'"},
		{"price_data in subscription mode", func(p *stripe.CheckoutSessionCreateParams) { p.Mode = stripe.String("subscription") },
			"", "line_items[0][price_data]", "The simulator's subscription mode takes a line item's `price`, not `price_data`."},
		{"unknown customer", func(p *stripe.CheckoutSessionCreateParams) { p.Customer = stripe.String("cus_nope") },
			"resource_missing", "customer", "No such customer: 'cus_nope'"},
		{"customer and customer_email", func(p *stripe.CheckoutSessionCreateParams) {
			p.Customer, p.CustomerEmail = stripe.String(cust.ID), stripe.String("ada@example.com")
		}, "", "customer", "You may only specify one of these parameters: customer, customer_email."},
		{"subscription_data in payment mode", func(p *stripe.CheckoutSessionCreateParams) {
			p.SubscriptionData = &stripe.CheckoutSessionCreateSubscriptionDataParams{Metadata: map[string]string{"a": "b"}}
		}, "", "subscription_data", "You can not pass `subscription_data` in `payment` mode."},
		{"client_reference_id too long", func(p *stripe.CheckoutSessionCreateParams) {
			p.ClientReferenceID = stripe.String(strings.Repeat("a", 201))
		}, "", "client_reference_id", "Invalid string: aaaaaaaaaaaaaaaaaaaa...; must be at most 200 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := valid()
			tc.change(p)
			_, err := sc.V1CheckoutSessions.Create(context.Background(), p)
			se := stripeErr(t, err)
			if se.HTTPStatusCode != http.StatusBadRequest || se.Type != stripe.ErrorTypeInvalidRequest ||
				se.Code != tc.code || se.Param != tc.param || se.Msg != tc.msg {
				t.Errorf("got %d %s code %q param %q %q,\nwant 400 invalid_request_error code %q param %q %q",
					se.HTTPStatusCode, se.Type, se.Code, se.Param, se.Msg, tc.code, tc.param, tc.msg)
			}
		})
	}
}

func TestStripeAuth(t *testing.T) {
	_, base := startSim(t)
	ctx := context.Background()
	for _, tc := range []struct{ key, msg string }{
		{"sk_live_0123456789abcdef", "Invalid API Key provided: sk_live_************cdef"},
		{"pk_test_abc", "Invalid API Key provided: ***********"},
		{"rk_test_0123456789abcdef", "Invalid API Key provided: rk_test_************cdef"},
	} {
		_, err := stripeClient(base, tc.key).V1Customers.Create(ctx, &stripe.CustomerCreateParams{Email: stripe.String("a@b.c")})
		if se := stripeErr(t, err); se.HTTPStatusCode != http.StatusUnauthorized || se.Type != stripe.ErrorTypeInvalidRequest || se.Msg != tc.msg {
			t.Errorf("key %s: %d %s %q, want 401 invalid_request_error %q", tc.key, se.HTTPStatusCode, se.Type, se.Msg, tc.msg)
		}
	}

	resp, data := callHeaders(t, http.MethodPost, base+"/v1/customers", "email=a%40b.c", map[string]string{})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: status %d", resp.StatusCode)
	}
	assertJSON(t, data, `{"error":{"type":"invalid_request_error","message":"You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/."}}`)

	// Stripe also takes the key as the Basic auth user.
	req, _ := http.NewRequest(http.MethodPost, base+"/v1/customers", strings.NewReader("email=a%40b.c"))
	req.SetBasicAuth(testStripeKey, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("Basic auth: status %d, want 200", resp.StatusCode)
	}
}

func TestStripePortalSession(t *testing.T) {
	_, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	ctx := context.Background()
	cust := newStripeCustomer(t, sc)
	ps, err := sc.V1BillingPortalSessions.Create(ctx, &stripe.BillingPortalSessionCreateParams{
		Customer: stripe.String(cust.ID), ReturnURL: stripe.String("https://gw.example/account")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ps.ID, "bps_") || ps.Configuration == nil || !strings.HasPrefix(ps.Configuration.ID, "bpc_") {
		t.Errorf("portal session %s, configuration %+v", ps.ID, ps.Configuration)
	}
	assertJSON(t, ps.LastResponse.RawJSON, fmt.Sprintf(`{"id":%q,"object":"billing_portal.session","configuration":%q,
		"created":%d,"customer":%q,"flow":null,"livemode":false,"locale":null,"on_behalf_of":null,
		"return_url":"https://gw.example/account","url":%q}`, ps.ID, ps.Configuration.ID, ps.Created, cust.ID, base+"/stripe/portal/"+ps.ID))

	for _, tc := range []struct {
		customer *string
		code     stripe.ErrorCode
		msg      string
	}{
		{nil, "parameter_missing", "Missing required param: customer."},
		{stripe.String("cus_nope"), "resource_missing", "No such customer: 'cus_nope'"},
	} {
		_, err := sc.V1BillingPortalSessions.Create(ctx, &stripe.BillingPortalSessionCreateParams{Customer: tc.customer})
		if se := stripeErr(t, err); se.HTTPStatusCode != http.StatusBadRequest || se.Code != tc.code || se.Param != "customer" || se.Msg != tc.msg {
			t.Errorf("customer %v: %d %q %q %q", tc.customer, se.HTTPStatusCode, se.Code, se.Param, se.Msg)
		}
	}
}

// Stripe's limits on what a request may make it keep, which bound the fake's memory too.
func TestStripeLimits(t *testing.T) {
	_, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	many := map[string]string{}
	for i := range 51 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	for _, tc := range []struct {
		name   string
		params *stripe.CustomerCreateParams
		param  string
		msg    string
	}{
		{"51 metadata keys", &stripe.CustomerCreateParams{Metadata: many},
			"metadata", "Invalid metadata: metadata can have up to 50 keys, but you passed in 51 keys."},
		{"a long metadata key", &stripe.CustomerCreateParams{Metadata: map[string]string{strings.Repeat("k", 41): "v"}},
			"metadata[" + strings.Repeat("k", 41) + "]", "Invalid metadata: metadata keys can be at most 40 characters long."},
		{"a long metadata value", &stripe.CustomerCreateParams{Metadata: map[string]string{"k": strings.Repeat("v", 501)}},
			"metadata[k]", "Invalid metadata: metadata values can be at most 500 characters long."},
		{"a long email", &stripe.CustomerCreateParams{Email: stripe.String(strings.Repeat("e", 5001))},
			"email", "Invalid string: eeeeeeeeeeeeeeeeeeee...; must be at most 5000 characters"},
	} {
		_, err := sc.V1Customers.Create(context.Background(), tc.params)
		if se := stripeErr(t, err); se.HTTPStatusCode != http.StatusBadRequest || se.Param != tc.param || se.Msg != tc.msg {
			t.Errorf("%s: %d param %q %q, want 400 param %q %q", tc.name, se.HTTPStatusCode, se.Param, se.Msg, tc.param, tc.msg)
		}
	}

	lines := make([]*stripe.CheckoutSessionCreateLineItemParams, 101)
	for i := range lines {
		lines[i] = &stripe.CheckoutSessionCreateLineItemParams{Quantity: stripe.Int64(1),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{Currency: stripe.String("usd"), UnitAmount: stripe.Int64(1),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("x")}}}
	}
	_, err := sc.V1CheckoutSessions.Create(context.Background(), &stripe.CheckoutSessionCreateParams{Mode: stripe.String("payment"),
		SuccessURL: stripe.String("https://gw.example/ok"), LineItems: lines})
	if se := stripeErr(t, err); se.Param != "line_items" || se.Msg != "A Checkout Session can have at most 100 line items." {
		t.Errorf("101 line items: %q %q", se.Param, se.Msg)
	}

	resp, data := callHeaders(t, http.MethodPost, base+"/v1/customers", "email=a%40b.c",
		map[string]string{"Authorization": "Bearer " + testStripeKey, "Idempotency-Key": strings.Repeat("i", 256)})
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a 256-character Idempotency-Key: %d %s", resp.StatusCode, data)
	}
}
