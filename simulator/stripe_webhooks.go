package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/webhook"
)

// Webhook delivery, as Stripe does it: each event is POSTed to every endpoint with a
// Stripe-Signature header (webhook.GenerateTestSignedPayload, so stripe-go's ConstructEvent
// accepts it), and a non-2xx answer, a redirect or an unreachable endpoint is retried with the
// same event id. Stripe retries for days; the fake retries a few times at once, so a test sees
// the outcome before the call that caused the event returns.

const (
	// webhookRetries is how many times a failed delivery is retried.
	webhookRetries = 3
	// webhookBackoff is the wait before the first retry, doubled before each later one.
	webhookBackoff = 50 * time.Millisecond
	// webhookTimeout bounds one delivery, so a hung receiver cannot hang a payment forever.
	webhookTimeout = 5 * time.Second
	// maxWebhookEndpoints is Stripe's limit per account; a 17th endpoint replaces the oldest.
	maxWebhookEndpoints = 16
	// maxDeliveriesKept bounds the delivery log of one event (an event redelivered in a loop).
	maxDeliveriesKept = 100
	// maxWebhookAnswer is how much of a receiver's answer is read (and discarded) to reuse
	// the connection.
	maxWebhookAnswer = 64 << 10
)

// StripeEventRecord is an event the fake Stripe created and what became of its deliveries.
type StripeEventRecord struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	// Payload is the event JSON exactly as POSTed (every delivery sends the same bytes).
	Payload    json.RawMessage  `json:"event"`
	Deliveries []StripeDelivery `json:"deliveries"`
}

// StripeDelivery is one POST of an event to one webhook endpoint.
type StripeDelivery struct {
	URL     string `json:"url"`
	Attempt int    `json:"attempt"` // 1 for a send, 2… for its retries
	// Status is the endpoint's answer, 0 when it could not be reached.
	Status int `json:"status"`
	// Error says why the endpoint could not be reached.
	Error string `json:"error,omitempty"`
	// Timestamp is the signature's t=, normally when it was sent.
	Timestamp time.Time `json:"timestamp"`
}

// stripeEvent is a created event; payload never changes, deliveries grow under the account lock.
type stripeEvent struct {
	id         string
	typ        stripe.EventType
	payload    []byte
	deliveries []StripeDelivery
}

// stripeHook is a webhook endpoint.
type stripeHook struct {
	url    string
	secret string
}

func newWebhookClient() *http.Client {
	return &http.Client{Timeout: webhookTimeout,
		// Stripe does not follow redirects: a 3xx is a failed delivery.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// StripeWebhook makes url a webhook endpoint signed with secret (a whsec_… string, or any);
// every later event is sent to it. The same url again replaces its secret; an empty secret
// removes the endpoint. At most 16 endpoints are kept, as Stripe allows: a 17th replaces the
// oldest.
func (s *Server) StripeWebhook(url, secret string) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	hooks := make([]stripeHook, 0, len(st.hooks)+1)
	for _, h := range st.hooks {
		if h.url != url {
			hooks = append(hooks, h)
		}
	}
	if secret != "" {
		hooks = append(hooks, stripeHook{url: url, secret: secret})
	}
	if len(hooks) > maxWebhookEndpoints {
		hooks = hooks[len(hooks)-maxWebhookEndpoints:]
	}
	st.hooks = hooks
}

// stripeWebhooks is the endpoints' URLs, oldest first.
func (s *Server) stripeWebhooks() []string {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	urls := make([]string, 0, len(st.hooks))
	for _, h := range st.hooks {
		urls = append(urls, h.url)
	}
	return urls
}

// newEvent creates and keeps an event about object (rendered now: later changes to the object
// do not change the event). prev is previous_attributes, nil for none. The lock is held.
func (s *Server) newEvent(typ stripe.EventType, object any, prev map[string]any) *stripeEvent {
	st := s.stripe
	ev := eventObject{ID: s.newID("evt_"), Object: "event", APIVersion: stripe.APIVersion, Created: time.Now().Unix(),
		Data: eventData{Object: mustJSON(object), PreviousAttributes: prev}, PendingWebhooks: len(st.hooks), Type: typ}
	e := &stripeEvent{id: ev.ID, typ: typ, payload: mustJSON(ev)}
	st.events.put(e.id, e)
	return e
}

// mustJSON renders one of the fake's own objects, which cannot fail to encode.
func mustJSON(v any) json.RawMessage {
	data, err := json.Marshal(v)
	if err != nil {
		panic("simulator: encoding a Stripe object: " + err.Error())
	}
	return data
}

// deliver sends events, in order, to every endpoint configured now, each delivery retried
// until it succeeds or runs out of retries. The lock must not be held.
func (s *Server) deliver(events ...*stripeEvent) {
	st := s.stripe
	st.mu.Lock()
	hooks := append([]stripeHook(nil), st.hooks...)
	st.mu.Unlock()
	for _, ev := range events {
		for _, h := range hooks {
			wait := webhookBackoff
			for attempt := 1; !s.post(ev, h.url, h.secret, time.Now(), attempt) && attempt <= webhookRetries; attempt++ {
				time.Sleep(wait)
				wait *= 2
			}
		}
	}
}

// post makes one delivery of ev to url, signed with secret at time at, records it and
// reports whether the endpoint took it (a 2xx).
func (s *Server) post(ev *stripeEvent, url, secret string, at time.Time, attempt int) bool {
	signed := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: ev.payload, Secret: secret, Timestamp: at})
	d := StripeDelivery{URL: url, Attempt: attempt, Timestamp: time.Unix(at.Unix(), 0)}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(ev.payload))
	if err == nil {
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Stripe-Signature", signed.Header)
		req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
		var resp *http.Response
		if resp, err = s.stripe.client.Do(req); err == nil {
			d.Status = resp.StatusCode
			_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxWebhookAnswer))
			_ = resp.Body.Close()
		}
	}
	if err != nil {
		d.Error = err.Error()
	}
	st := s.stripe
	st.mu.Lock()
	ev.deliveries = append(ev.deliveries, d)
	if n := len(ev.deliveries); n > maxDeliveriesKept {
		ev.deliveries = append([]StripeDelivery(nil), ev.deliveries[n-maxDeliveriesKept:]...)
	}
	st.mu.Unlock()
	return d.Status >= 200 && d.Status < 300
}

// Redeliver sends event eventID again, as it was (same id and body) with a new signature and
// timestamp, to every endpoint configured now, retrying as for a first delivery: what Stripe
// does when a delivery failed, or when an operator resends an event from the dashboard.
func (s *Server) Redeliver(eventID string) error {
	ev, err := s.event(eventID)
	if err != nil {
		return err
	}
	s.deliver(ev)
	return nil
}

// SendSignedWith sends event eventID once to every endpoint, signed with secret at time at
// instead of the endpoint's secret and now: a test's way to check that a receiver refuses a
// forged signature (another secret) or a replayed one (a stale timestamp). It is not retried,
// since the receiver is expected to refuse it.
func (s *Server) SendSignedWith(eventID, secret string, at time.Time) error {
	ev, err := s.event(eventID)
	if err != nil {
		return err
	}
	st := s.stripe
	st.mu.Lock()
	hooks := append([]stripeHook(nil), st.hooks...)
	st.mu.Unlock()
	if len(hooks) == 0 {
		return errors.New("simulator: no Stripe webhook endpoint to send to")
	}
	for _, h := range hooks {
		s.post(ev, h.url, secret, at, 1)
	}
	return nil
}

func (s *Server) event(id string) (*stripeEvent, error) {
	ev, ok := s.stripe.events.get(id)
	if !ok {
		return nil, fmt.Errorf("simulator: Stripe event %q: %w", id, errStripeUnknown)
	}
	return ev, nil
}

// StripeEvents lists the events the fake Stripe created, oldest first (the newest
// maxStripeObjects), with every delivery of each.
func (s *Server) StripeEvents() []StripeEventRecord {
	events := s.stripe.events.values()
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	out := make([]StripeEventRecord, 0, len(events))
	for _, ev := range events {
		out = append(out, ev.record())
	}
	return out
}

// StripeEvent is one event as StripeEvents lists it.
func (s *Server) StripeEvent(id string) (StripeEventRecord, error) {
	ev, err := s.event(id)
	if err != nil {
		return StripeEventRecord{}, err
	}
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	return ev.record(), nil
}

// record copies the event for a caller. The lock is held.
func (ev *stripeEvent) record() StripeEventRecord {
	return StripeEventRecord{ID: ev.id, Type: string(ev.typ), Payload: append(json.RawMessage(nil), ev.payload...),
		Deliveries: append([]StripeDelivery{}, ev.deliveries...)}
}
