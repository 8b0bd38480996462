package simulator

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/stripe/stripe-go/v82/webhook"
)

// Webhook delivery: retries keep the event id, redelivery resends the same bytes, and a
// test can send a forged or stale signature.

func TestStripeWebhookRetries(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close() // an endpoint that refuses connections
	for _, tc := range []struct {
		name      string
		failFirst int   // 500s the receiver answers before a 200
		statuses  []int // of the deliveries, in order
	}{
		{"taken at once", 0, []int{200}},
		{"500 then 200", 1, []int{500, 200}},
		{"three 500s then 200", 3, []int{500, 500, 500, 200}},
		{"retries run out", 10, []int{500, 500, 500, 500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, base := startSim(t)
			recv := newHookReceiver(t, testWebhookSecret, tc.failFirst)
			s.StripeWebhook(recv.URL, testWebhookSecret)
			payHosted(t, paymentSession(t, stripeClient(base, testStripeKey), "").URL)

			got := recv.deliveries()
			var statuses []int
			for _, d := range got {
				statuses = append(statuses, d.status)
				if d.err != nil || d.event.ID != got[0].event.ID || string(d.body) != string(got[0].body) {
					t.Errorf("delivery %+v differs from the first (%s)", d, got[0].event.ID)
				}
			}
			if !reflect.DeepEqual(statuses, tc.statuses) {
				t.Errorf("receiver answered %v, want %v", statuses, tc.statuses)
			}
			recs := s.StripeEvents()
			if len(recs) != 1 {
				t.Fatalf("%d events, want 1", len(recs))
			}
			var recorded, attempts []int
			for _, d := range recs[0].Deliveries {
				recorded, attempts = append(recorded, d.Status), append(attempts, d.Attempt)
			}
			if !reflect.DeepEqual(recorded, tc.statuses) || !reflect.DeepEqual(attempts, []int{1, 2, 3, 4}[:len(tc.statuses)]) {
				t.Errorf("recorded statuses %v attempts %v, want %v", recorded, attempts, tc.statuses)
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		s, base := startSim(t)
		s.StripeWebhook(closed.URL, testWebhookSecret)
		payHosted(t, paymentSession(t, stripeClient(base, testStripeKey), "").URL)
		recs := s.StripeEvents()
		if len(recs) != 1 || len(recs[0].Deliveries) != 4 {
			t.Fatalf("StripeEvents() = %+v, want one event delivered 4 times", recs)
		}
		for _, d := range recs[0].Deliveries {
			if d.Status != 0 || d.Error == "" || d.URL != closed.URL {
				t.Errorf("delivery to a closed port: %+v", d)
			}
		}
	})
}

func TestStripeWebhookEndpoints(t *testing.T) {
	s, base := startSim(t)
	a := newHookReceiver(t, testWebhookSecret, 0)
	b := newHookReceiver(t, "whsec_b", 0)
	s.StripeWebhook(a.URL, "whsec_stale")
	s.StripeWebhook(a.URL, testWebhookSecret) // replaces the secret
	s.StripeWebhook(b.URL, "whsec_b")
	sc := stripeClient(base, testStripeKey)
	payHosted(t, paymentSession(t, sc, "").URL)
	if len(a.accepted()) != 1 || len(b.accepted()) != 1 {
		t.Fatalf("a got %+v, b got %+v: want one verified event each", a.deliveries(), b.deliveries())
	}
	if pending := a.accepted()[0].PendingWebhooks; pending != 2 {
		t.Errorf("pending_webhooks %d, want 2 (one per endpoint)", pending)
	}
	s.StripeWebhook(b.URL, "") // removes b
	payHosted(t, paymentSession(t, sc, "").URL)
	if len(a.accepted()) != 2 || len(b.deliveries()) != 1 {
		t.Errorf("after removing b: a got %d, b got %d", len(a.accepted()), len(b.deliveries()))
	}
	if got := s.stripeWebhooks(); !reflect.DeepEqual(got, []string{a.URL}) {
		t.Errorf("endpoints %v", got)
	}
}

func TestStripeRedeliverAndForgedSignatures(t *testing.T) {
	s, base := startSim(t)
	recv := newHookReceiver(t, testWebhookSecret, 0)
	s.StripeWebhook(recv.URL, testWebhookSecret)
	payHosted(t, paymentSession(t, stripeClient(base, testStripeKey), "").URL)
	first := recv.deliveries()[0]
	id := first.event.ID

	if err := s.Redeliver(id); err != nil {
		t.Fatal(err)
	}
	if err := s.SendSignedWith(id, "whsec_forged", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.SendSignedWith(id, testWebhookSecret, time.Now().Add(-10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	got := recv.deliveries()
	if len(got) != 4 {
		t.Fatalf("%d deliveries, want 4", len(got))
	}
	for i, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"first", nil, 200},
		{"redelivered", nil, 200},
		{"another secret", webhook.ErrNoValidSignature, 400},
		{"ten minutes old", webhook.ErrTooOld, 400},
	} {
		d := got[i]
		if !errors.Is(d.err, tc.err) || d.status != tc.status || string(d.body) != string(first.body) {
			t.Errorf("%s: verification %v status %d, want %v %d with the same body", tc.name, d.err, d.status, tc.err, tc.status)
		}
	}
	if got[1].event.ID != id {
		t.Errorf("redelivered %s, want %s", got[1].event.ID, id)
	}
	rec, err := s.StripeEvent(id)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []int
	for _, d := range rec.Deliveries {
		statuses = append(statuses, d.Status)
	}
	if !reflect.DeepEqual(statuses, []int{200, 200, 400, 400}) {
		t.Errorf("recorded %v", statuses)
	}
	if stale := rec.Deliveries[3].Timestamp; time.Since(stale) < 9*time.Minute {
		t.Errorf("the stale send's recorded timestamp is %v", stale)
	}

	for _, err := range []error{s.Redeliver("evt_nope"), s.SendSignedWith("evt_nope", "x", time.Now())} {
		if !errors.Is(err, errStripeUnknown) {
			t.Errorf("unknown event: %v, want errStripeUnknown", err)
		}
	}
	s.StripeWebhook(recv.URL, "")
	if err := s.SendSignedWith(id, "x", time.Now()); err == nil {
		t.Error("SendSignedWith without endpoints = nil, want an error")
	}
}
