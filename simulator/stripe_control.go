package simulator

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"
)

// The control API of the fake Stripe, for the standalone binary and tests in other
// processes: the same operations as the Server methods, as JSON over HTTP. Each operation
// that sends an event answers with that event's record (StripeEventRecord), once its
// deliveries are done.

// maxControlBody bounds a control request body, as putRoute does.
const maxControlBody = 1 << 20

func (s *Server) registerStripeControl() {
	s.mux.HandleFunc("GET /_sim/stripe/webhook", s.getStripeWebhooks)
	s.mux.HandleFunc("PUT /_sim/stripe/webhook", s.putStripeWebhook)
	s.mux.HandleFunc("DELETE /_sim/stripe/webhook", s.deleteStripeWebhook)
	s.mux.HandleFunc("PUT /_sim/stripe/prices/{id}", s.putStripePrice)
	s.mux.HandleFunc("PUT /_sim/stripe/portal/prices", s.putPortalPrices)
	s.mux.HandleFunc("GET /_sim/stripe/events", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, struct {
			Events []StripeEventRecord `json:"events"`
		}{s.StripeEvents()})
	})
	s.mux.HandleFunc("GET /_sim/stripe/events/{id}", func(w http.ResponseWriter, r *http.Request) {
		s.answerEvent(w, r.PathValue("id"), nil)
	})
	s.mux.HandleFunc("POST /_sim/stripe/events/{id}/redeliver", func(w http.ResponseWriter, r *http.Request) {
		s.answerEvent(w, r.PathValue("id"), s.Redeliver(r.PathValue("id")))
	})
	s.mux.HandleFunc("POST /_sim/stripe/events/{id}/send", s.sendStripeEvent)
	s.mux.HandleFunc("POST /_sim/stripe/sessions/{id}/refund", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Amount int64 `json:"amount"` // in cents; 0 or absent refunds what is left
		}
		if decodeControl(w, r, &in) {
			s.answerSent(w, func() (string, error) { return s.Refund(r.PathValue("id"), in.Amount) })
		}
	})
	s.mux.HandleFunc("POST /_sim/stripe/sessions/{id}/dispute", func(w http.ResponseWriter, r *http.Request) {
		s.answerSent(w, func() (string, error) { return s.Dispute(r.PathValue("id")) })
	})
	s.mux.HandleFunc("POST /_sim/stripe/subscriptions/{id}/update", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Price       string `json:"price"`
			AtPeriodEnd bool   `json:"at_period_end"`
		}
		if decodeControl(w, r, &in) {
			s.answerSent(w, func() (string, error) { return s.UpdateSubscription(r.PathValue("id"), in.Price, in.AtPeriodEnd) })
		}
	})
	for action, f := range map[string]func(string) (string, error){
		"cancel": s.CancelSubscription, "fail-invoice": s.FailInvoice, "renew": s.RenewSubscription} {
		s.mux.HandleFunc("POST /_sim/stripe/subscriptions/{id}/"+action, func(w http.ResponseWriter, r *http.Request) {
			s.answerSent(w, func() (string, error) { return f(r.PathValue("id")) })
		})
	}
}

// stripeWebhookJSON is a webhook endpoint in the control API. The secret is only ever
// written: GET lists the URLs alone.
type stripeWebhookJSON struct {
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

func (s *Server) getStripeWebhooks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Webhooks []string `json:"webhooks"`
	}{s.stripeWebhooks()})
}

// putStripeWebhook adds an endpoint (or replaces its secret): {"url","secret"}, both required.
func (s *Server) putStripeWebhook(w http.ResponseWriter, r *http.Request) {
	var in stripeWebhookJSON
	if !decodeControl(w, r, &in) {
		return
	}
	if u, err := url.Parse(in.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		writeControlError(w, "url must be an absolute http(s) URL")
		return
	}
	if in.Secret == "" {
		writeControlError(w, "secret is required (DELETE /_sim/stripe/webhook?url=… removes an endpoint)")
		return
	}
	s.StripeWebhook(in.URL, in.Secret)
	s.getStripeWebhooks(w, r)
}

// deleteStripeWebhook removes the endpoint ?url=….
func (s *Server) deleteStripeWebhook(w http.ResponseWriter, r *http.Request) {
	s.StripeWebhook(r.URL.Query().Get("url"), "")
	s.getStripeWebhooks(w, r)
}

// stripePriceJSON is a StripePrice in the control API.
type stripePriceJSON struct {
	ID         string `json:"id"`
	UnitAmount int64  `json:"unit_amount"`
	Currency   string `json:"currency"`
	Interval   string `json:"interval"`
}

func (s *Server) putStripePrice(w http.ResponseWriter, r *http.Request) {
	var in stripePriceJSON
	if !decodeControl(w, r, &in) {
		return
	}
	id := r.PathValue("id")
	p, err := checkStripePrice(id, StripePrice{UnitAmount: in.UnitAmount, Currency: in.Currency, Interval: in.Interval})
	if err != nil {
		writeControlError(w, err.Error())
		return
	}
	s.stripe.prices.put(id, p)
	writeJSON(w, http.StatusOK, stripePriceJSON{ID: id, UnitAmount: p.UnitAmount, Currency: p.Currency, Interval: p.Interval})
}

// portalPricesJSON is the prices the billing portal offers, in the control API.
type portalPricesJSON struct {
	Prices []string `json:"prices"`
}

// putPortalPrices is SetPortalPrices: {"prices":["price_…",…]}, answered with the prices now
// offered.
func (s *Server) putPortalPrices(w http.ResponseWriter, r *http.Request) {
	var in portalPricesJSON
	if !decodeControl(w, r, &in) {
		return
	}
	if err := s.SetPortalPrices(in.Prices...); err != nil {
		writeControlError(w, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, portalPricesJSON{Prices: s.portalPricesNow()})
}

// sendStripeEvent is SendSignedWith: {"secret", "timestamp"} (Unix seconds; 0 or absent: now).
func (s *Server) sendStripeEvent(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Secret    string `json:"secret"`
		Timestamp int64  `json:"timestamp"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	at := time.Now()
	if in.Timestamp != 0 {
		at = time.Unix(in.Timestamp, 0)
	}
	id := r.PathValue("id")
	s.answerEvent(w, id, s.SendSignedWith(id, in.Secret, at))
}

// answerSent runs an operation that sends an event and answers with the event's record.
func (s *Server) answerSent(w http.ResponseWriter, op func() (string, error)) {
	id, err := op()
	s.answerEvent(w, id, err)
}

// answerEvent answers with event id's record, or with err: a 404 for an unknown object, else
// a 400.
func (s *Server) answerEvent(w http.ResponseWriter, id string, err error) {
	var rec StripeEventRecord
	if err == nil {
		rec, err = s.StripeEvent(id)
	}
	switch {
	case errors.Is(err, errStripeUnknown):
		writeOpenAIError(w, apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Message: err.Error()})
	case err != nil:
		writeControlError(w, err.Error())
	default:
		writeJSON(w, http.StatusOK, rec)
	}
}

// decodeControl reads a control request's JSON body into v, rejecting unknown fields (a typo
// must not pass silently); an empty body leaves v zero. It answers the error itself and
// reports whether to go on.
func decodeControl(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxControlBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		writeControlError(w, "invalid JSON: "+err.Error())
		return false
	}
	return true
}
