package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

const (
	testStripeKey     = "sk_test_simulator0123456789"
	testWebhookSecret = "whsec_simulator_test"
)

// stripeClient is stripe-go's own client pointed at the simulator, with key. It does not
// retry, so each test sees the answer of each call; it logs nothing, as error answers are
// expected.
func stripeClient(base, key string) *stripe.Client {
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{URL: stripe.String(base),
		MaxNetworkRetries: stripe.Int64(0), LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}})
	return stripe.NewClient(key, stripe.WithBackends(&stripe.Backends{API: backend, Connect: backend, Uploads: backend}))
}

// hookReceiver is a webhook endpoint that verifies each delivery with stripe-go as a
// gateway would, answering 400 to a delivery that fails verification, 500 to the first
// failFirst ones (to make the simulator retry), else 200.
type hookReceiver struct {
	URL string

	mu        sync.Mutex
	failFirst int
	got       []receivedHook
}

// receivedHook is one delivery as the receiver saw it.
type receivedHook struct {
	contentType string
	signature   string
	body        []byte
	event       stripe.Event
	err         error // what stripe-go's verification said
	status      int   // what the receiver answered
}

func newHookReceiver(t *testing.T, secret string, failFirst int) *hookReceiver {
	t.Helper()
	h := &hookReceiver{failFirst: failFirst}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading a webhook: %v", err)
		}
		rec := receivedHook{contentType: r.Header.Get("Content-Type"), signature: r.Header.Get("Stripe-Signature"), body: body}
		rec.event, rec.err = webhook.ConstructEventWithOptions(body, rec.signature, secret, webhook.ConstructEventOptions{})
		h.mu.Lock()
		switch {
		case rec.err != nil:
			rec.status = http.StatusBadRequest
		case h.failFirst > 0:
			h.failFirst--
			rec.status = http.StatusInternalServerError
		default:
			rec.status = http.StatusOK
		}
		h.got = append(h.got, rec)
		h.mu.Unlock()
		w.WriteHeader(rec.status)
	}))
	t.Cleanup(srv.Close)
	h.URL = srv.URL
	return h
}

// deliveries is a copy of what the receiver got so far.
func (h *hookReceiver) deliveries() []receivedHook {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]receivedHook(nil), h.got...)
}

// accepted is the verified, accepted events, in arrival order.
func (h *hookReceiver) accepted() []stripe.Event {
	var out []stripe.Event
	for _, d := range h.deliveries() {
		if d.status == http.StatusOK {
			out = append(out, d.event)
		}
	}
	return out
}

// eventTypes lists the types of events.
func eventTypes(events []stripe.Event) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		out = append(out, string(e.Type))
	}
	return out
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// hosted GETs or POSTs a hosted page without following redirects.
func hosted(t *testing.T, method, url, form string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(form))
	if err != nil {
		t.Fatal(err)
	}
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

// paymentSession creates a $15 one-off payment session for customer (may be "") with
// stripe-go.
func paymentSession(t *testing.T, sc *stripe.Client, customer string) *stripe.CheckoutSession {
	t.Helper()
	p := &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{Currency: stripe.String("usd"),
				UnitAmount:  stripe.Int64(1500),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("1,500 credits")}},
			Quantity: stripe.Int64(1)}},
		ClientReferenceID: stripe.String("acct_42"),
		Metadata:          map[string]string{"account_id": "acct_42", "credits": "1500"},
		SuccessURL:        stripe.String("https://gw.example/billing/done?session={CHECKOUT_SESSION_ID}"),
		CancelURL:         stripe.String("https://gw.example/billing"),
	}
	if customer != "" {
		p.Customer = stripe.String(customer)
	}
	sess, err := sc.V1CheckoutSessions.Create(context.Background(), p)
	if err != nil {
		t.Fatalf("creating a payment session: %v", err)
	}
	return sess
}

// subscriptionSession creates a subscription session to price for customer with stripe-go.
func subscriptionSession(t *testing.T, sc *stripe.Client, customer, price string) *stripe.CheckoutSession {
	t.Helper()
	sess, err := sc.V1CheckoutSessions.Create(context.Background(), &stripe.CheckoutSessionCreateParams{
		Mode:              stripe.String("subscription"),
		LineItems:         []*stripe.CheckoutSessionCreateLineItemParams{{Price: stripe.String(price), Quantity: stripe.Int64(1)}},
		Customer:          stripe.String(customer),
		ClientReferenceID: stripe.String("acct_42"),
		Metadata:          map[string]string{"account_id": "acct_42"},
		SuccessURL:        stripe.String("https://gw.example/billing/done"),
	})
	if err != nil {
		t.Fatalf("creating a subscription session: %v", err)
	}
	return sess
}

// newStripeCustomer creates a customer with stripe-go.
func newStripeCustomer(t *testing.T, sc *stripe.Client) *stripe.Customer {
	t.Helper()
	c, err := sc.V1Customers.Create(context.Background(), &stripe.CustomerCreateParams{
		Email: stripe.String("ada@example.com"), Metadata: map[string]string{"account_id": "acct_42"}})
	if err != nil {
		t.Fatalf("creating a customer: %v", err)
	}
	return c
}

// payHosted pays a session through its hosted page as a browser would and returns where
// the payer was sent.
func payHosted(t *testing.T, sessionURL string) string {
	t.Helper()
	resp, body := hosted(t, http.MethodPost, sessionURL, "")
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST %s: status %d (%s), want 303", sessionURL, resp.StatusCode, body)
	}
	return resp.Header.Get("Location")
}

// stripeErr unwraps a stripe-go error answer, failing the test on anything else.
func stripeErr(t *testing.T, err error) *stripe.Error {
	t.Helper()
	var se *stripe.Error
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want a *stripe.Error", err)
	}
	return se
}

// objectOf decodes an event's data.object into v (a stripe-go type), failing on error.
func objectOf(t *testing.T, e stripe.Event, v any) {
	t.Helper()
	if err := json.Unmarshal(e.Data.Raw, v); err != nil {
		t.Fatalf("decoding the %s object: %v", e.Type, err)
	}
}
