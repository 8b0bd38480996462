package simulator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v82"
)

func TestStripeRefundsAndDisputes(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	sc := stripeClient(base, testStripeKey)
	ctx := context.Background()
	sess := paymentSession(t, sc, "")
	unpaid := paymentSession(t, sc, "")
	payHosted(t, sess.URL)
	paid, err := sc.V1CheckoutSessions.Retrieve(ctx, sess.ID, &stripe.CheckoutSessionRetrieveParams{})
	if err != nil {
		t.Fatal(err)
	}
	pi := paid.PaymentIntent.ID

	charge := func(refunded int64, full bool, disputed bool) func(stripe.Event) string {
		return func(e stripe.Event) string {
			var ch stripe.Charge
			objectOf(t, e, &ch)
			return fmt.Sprintf(`{"id":%q,"object":"charge","amount":1500,"amount_captured":1500,"amount_refunded":%d,
				"captured":true,"created":%d,"currency":"usd","customer":null,"disputed":%t,"livemode":false,
				"metadata":{"account_id":"acct_42","credits":"1500"},"paid":true,"payment_intent":%q,"refunded":%t,
				"status":"succeeded"}`, ch.ID, refunded, ch.Created, disputed, pi, full)
		}
	}
	var chargeID string
	for _, step := range []struct {
		name   string
		op     func() (string, error)
		typ    stripe.EventType
		object func(stripe.Event) string // the exact data.object
		prev   string                    // the exact previous_attributes, "" for none
	}{
		{"partial refund", func() (string, error) { return s.Refund(sess.ID, 500) }, stripe.EventTypeChargeRefunded,
			charge(500, false, false), `{"amount_refunded":0}`},
		{"refund the rest", func() (string, error) { return s.Refund(sess.ID, 0) }, stripe.EventTypeChargeRefunded,
			charge(1500, true, false), `{"amount_refunded":500,"refunded":false}`},
		{"dispute", func() (string, error) { return s.Dispute(sess.ID) }, stripe.EventTypeChargeDisputeCreated,
			func(e stripe.Event) string {
				var d stripe.Dispute
				objectOf(t, e, &d)
				if d.Charge.ID != chargeID || d.PaymentIntent.ID != pi {
					t.Errorf("stripe-go parsed the dispute as %+v", d)
				}
				return fmt.Sprintf(`{"id":%q,"object":"dispute","amount":1500,"charge":%q,"created":%d,"currency":"usd",
					"is_charge_refundable":false,"livemode":false,"metadata":{},"payment_intent":%q,"reason":"general",
					"status":"needs_response"}`, d.ID, chargeID, d.Created, pi)
			}, ""},
	} {
		id, err := step.op()
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		events := recv.accepted()
		e := events[len(events)-1]
		if e.ID != id || e.Type != step.typ {
			t.Fatalf("%s: last event %s %s, want %s %s", step.name, e.ID, e.Type, id, step.typ)
		}
		if chargeID == "" {
			chargeID = e.GetObjectValue("id")
		}
		assertJSON(t, e.Data.Raw, step.object(e))
		if step.prev == "" && e.Data.PreviousAttributes != nil {
			t.Errorf("%s: previous_attributes %v, want none", step.name, e.Data.PreviousAttributes)
		} else if step.prev != "" {
			assertJSON(t, mustJSON(e.Data.PreviousAttributes), step.prev)
		}
	}

	for _, tc := range []struct {
		name    string
		err     error
		unknown bool
	}{
		{"refund a fully refunded payment", func() error { _, err := s.Refund(sess.ID, 1); return err }(), false},
		{"dispute twice", func() error { _, err := s.Dispute(sess.ID); return err }(), false},
		{"refund an unpaid session", func() error { _, err := s.Refund(unpaid.ID, 1); return err }(), false},
		{"dispute an unpaid session", func() error { _, err := s.Dispute(unpaid.ID); return err }(), false},
		{"refund an unknown session", func() error { _, err := s.Refund("cs_test_nope", 1); return err }(), true},
	} {
		if tc.err == nil || errors.Is(tc.err, errStripeUnknown) != tc.unknown {
			t.Errorf("%s: %v", tc.name, tc.err)
		}
	}
	if n := len(recv.deliveries()); n != 4 {
		t.Errorf("%d deliveries, want 4 (refused operations send nothing)", n)
	}
}

func TestStripeRefundAmounts(t *testing.T) {
	s, base := startSim(t)
	sc := stripeClient(base, testStripeKey)
	sess := paymentSession(t, sc, "")
	payHosted(t, sess.URL)
	for _, tc := range []struct {
		amount int64
		ok     bool
	}{{-1, false}, {1501, false}, {1000, true}, {501, false}, {500, true}, {1, false}, {0, false}} {
		if _, err := s.Refund(sess.ID, tc.amount); (err == nil) != tc.ok {
			t.Errorf("Refund(%d): %v, want ok=%t", tc.amount, err, tc.ok)
		}
	}
}

func TestStripeChargeMetadata(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	sess, err := stripeClient(base, testStripeKey).V1CheckoutSessions.Create(context.Background(), &stripe.CheckoutSessionCreateParams{
		Mode: stripe.String("payment"), SuccessURL: stripe.String("https://gw.example/ok"),
		LineItems: []*stripe.CheckoutSessionCreateLineItemParams{{Quantity: stripe.Int64(2),
			PriceData: &stripe.CheckoutSessionCreateLineItemPriceDataParams{Currency: stripe.String("jpy"), UnitAmount: stripe.Int64(700),
				ProductData: &stripe.CheckoutSessionCreateLineItemPriceDataProductDataParams{Name: stripe.String("credits")}}}},
		Metadata:          map[string]string{"from": "session"},
		PaymentIntentData: &stripe.CheckoutSessionCreatePaymentIntentDataParams{Metadata: map[string]string{"from": "payment_intent_data"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sess.AmountTotal != 1400 {
		t.Errorf("amount_total %d, want 1400", sess.AmountTotal)
	}
	_, page := hosted(t, http.MethodGet, sess.URL, "")
	if want := `<li>credits × 2: 1400 JPY</li>`; !strings.Contains(page, want) {
		t.Errorf("the pay page lacks %s:\n%s", want, page)
	}
	payHosted(t, sess.URL)
	if _, err := s.Refund(sess.ID, 0); err != nil {
		t.Fatal(err)
	}
	events := recv.accepted()
	var ch stripe.Charge
	objectOf(t, events[len(events)-1], &ch)
	if !reflect.DeepEqual(ch.Metadata, map[string]string{"from": "payment_intent_data"}) || ch.AmountRefunded != 1400 || !ch.Refunded {
		t.Errorf("charge %+v", ch)
	}
}
