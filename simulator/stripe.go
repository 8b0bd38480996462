package simulator

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/stripe/stripe-go/v82"
)

// A fake of the part of Stripe the gateway bills through: customers, Checkout Sessions
// (one-off payments and subscriptions) with a hosted payment page, billing-portal sessions
// with a hosted page, and signed webhooks. Unlike the model APIs it is one account per
// simulator process, not per route: a gateway has one Stripe account whatever routes it
// serves, so the paths have no /r/{route} form and Behavior does not apply to them.
//
// The API speaks what stripe-go sends and parses: form-encoded bodies, Bearer secret keys,
// Idempotency-Key, Stripe's error shape, and objects rendered as the API version stripe-go
// pins (stripe.APIVersion) renders them, so a gateway that reads a field Stripe no longer
// sends fails here as it would in production. Files: stripe_objects.go (the wire objects),
// stripe_customers.go, stripe_prices.go, stripe_checkout.go (sessions), stripe_pay.go (the
// hosted payment page), stripe_portal.go, stripe_subscriptions.go and stripe_charges.go (what
// happens after a payment), stripe_webhooks.go (events and their delivery), stripe_control.go.

// maxStripeObjects bounds each kind of object the fake keeps (customers, sessions,
// subscriptions, events, idempotent answers …): a test creating objects in a loop forgets
// the oldest instead of growing the process.
const maxStripeObjects = 10_000

// errStripeUnknown marks a method call naming an object the fake does not have (never had,
// or forgot after maxStripeObjects newer ones); the control API answers it with a 404.
var errStripeUnknown = errors.New("unknown")

// maxIdempotencyKey is Stripe's limit on an Idempotency-Key.
const maxIdempotencyKey = 255

// stripeState is the fake Stripe account. mu guards every object it holds; it is never held
// while a webhook is being delivered, so a receiver may call back into the API.
type stripeState struct {
	mu            sync.Mutex
	customers     *boundedStore[*stripeCustomer]
	sessions      *boundedStore[*stripeSession]
	subscriptions *boundedStore[*stripeSubscription]
	portals       *boundedStore[*portalSessionObject]
	prices        *boundedStore[StripePrice]
	idempotent    *boundedStore[idempotentAnswer]
	events        *boundedStore[*stripeEvent]
	hooks         []stripeHook
	portalPrices  []string     // the prices the billing portal offers to switch to (SetPortalPrices)
	client        *http.Client // delivers webhooks
}

func newStripeState() *stripeState {
	return &stripeState{
		customers:     newBoundedStore[*stripeCustomer](maxStripeObjects),
		sessions:      newBoundedStore[*stripeSession](maxStripeObjects),
		subscriptions: newBoundedStore[*stripeSubscription](maxStripeObjects),
		portals:       newBoundedStore[*portalSessionObject](maxStripeObjects),
		prices:        newBoundedStore[StripePrice](maxStripeObjects),
		idempotent:    newBoundedStore[idempotentAnswer](maxStripeObjects),
		events:        newBoundedStore[*stripeEvent](maxStripeObjects),
		client:        newWebhookClient(),
	}
}

// idempotentAnswer is what a POST with an Idempotency-Key answered, replayed to a retry.
// Stripe keeps only answers of requests that ran, not validation errors, and so does the fake.
type idempotentAnswer struct {
	request string   // method and path
	params  [32]byte // hash of the canonical form, to refuse a key reused for other params
	body    []byte
}

func (s *Server) registerStripe() {
	s.mux.Handle("POST /v1/customers", s.stripeAPI(s.createCustomer))
	s.mux.Handle("GET /v1/customers/{id}", s.stripeAPI(s.getCustomer))
	s.mux.Handle("POST /v1/checkout/sessions", s.stripeAPI(s.createCheckoutSession))
	s.mux.Handle("GET /v1/checkout/sessions/{id}", s.stripeAPI(s.getCheckoutSession))
	s.mux.Handle("POST /v1/billing_portal/sessions", s.stripeAPI(s.createPortalSession))
	s.mux.Handle("GET /v1/subscriptions/{id}", s.stripeAPI(s.getSubscription))
	s.mux.Handle("POST /v1/subscriptions/{id}", s.stripeAPI(s.postSubscription))
	s.mux.HandleFunc("GET /stripe/pay/{id}", s.payPage)
	s.mux.HandleFunc("POST /stripe/pay/{id}", s.pay)
	s.mux.HandleFunc("GET /stripe/portal/{id}", s.portalPage)
	s.mux.HandleFunc("POST /stripe/portal/{id}/cancel", s.portalCancel)
	s.mux.HandleFunc("POST /stripe/portal/{id}/switch", s.portalSwitch)
}

// stripeCall is one authenticated API request.
type stripeCall struct {
	r    *http.Request
	form url.Values
	// events are what the call made, delivered in order once the lock is released and before
	// the answer is written, as every operation of the fake delivers its events before it
	// returns. A replayed answer delivers none: they went with the first.
	events []*stripeEvent
}

// base is the scheme and host the request reached, for URLs that point back at this
// simulator (the hosted pages).
func (c *stripeCall) base() string {
	scheme := "http"
	if c.r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.r.Host
}

// stripeAPI wraps an API handler in what every Stripe call goes through: a request id,
// a bounded body, the secret key, form parsing and, for a POST with an Idempotency-Key, the
// replay of the first answer. h runs with the account locked and returns the object to
// render or the error to answer with; the events it leaves in the call are delivered before
// the answer is written.
func (s *Server) stripeAPI(h func(*stripeCall) (any, *apiError)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Request-Id", s.newID("req_"))
		w.Header().Set("Stripe-Version", stripe.APIVersion)
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			writeStripeError(w, apiError{Status: status, Type: "invalid_request_error",
				Message: "Could not read the request body: " + err.Error()})
			return
		}
		if e := stripeAuth(r); e != nil {
			writeStripeError(w, *e)
			return
		}
		form := r.URL.Query()
		posted, err := url.ParseQuery(string(body))
		if err != nil {
			writeStripeError(w, apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
				Message: "Invalid request: the body is not application/x-www-form-urlencoded: " + err.Error()})
			return
		}
		for k, v := range posted {
			form[k] = append(form[k], v...)
		}
		key := ""
		if r.Method == http.MethodPost {
			key = r.Header.Get("Idempotency-Key")
		}
		if len(key) > maxIdempotencyKey {
			writeStripeError(w, apiError{Status: http.StatusBadRequest, Type: "invalid_request_error",
				Message: fmt.Sprintf("Idempotency-Key must be at most %d characters long.", maxIdempotencyKey)})
			return
		}
		c := &stripeCall{r: r, form: form}
		data, replayed, e := s.runStripeCall(h, c, key)
		if e != nil {
			writeStripeError(w, *e)
			return
		}
		if len(c.events) > 0 {
			s.deliver(c.events...)
		}
		if replayed {
			w.Header().Set("Idempotent-Replayed", "true")
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	})
}

// runStripeCall runs h under the account lock, so a retry with the same Idempotency-Key
// racing the first request still gets the first answer, and renders the answer there: the
// objects may change as soon as the lock is released.
func (s *Server) runStripeCall(h func(*stripeCall) (any, *apiError), c *stripeCall, key string) ([]byte, bool, *apiError) {
	st := s.stripe
	st.mu.Lock()
	defer st.mu.Unlock()
	request := c.r.Method + " " + c.r.URL.Path
	params := sha256.Sum256([]byte(c.form.Encode())) // Encode sorts by key: order does not matter
	if key != "" {
		if prev, ok := st.idempotent.get(key); ok {
			if prev.request != request || prev.params != params {
				return nil, false, &apiError{Status: http.StatusBadRequest, Type: "idempotency_error",
					Message: fmt.Sprintf("Keys for idempotent requests can only be used with the same parameters they were "+
						"first used with. Try using a key other than '%s' if you meant to execute a different request.", key)}
			}
			return prev.body, true, nil
		}
	}
	v, e := h(c)
	if e != nil {
		return nil, false, e
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false, &apiError{Status: http.StatusInternalServerError, Type: "api_error",
			Message: "simulator: encoding the answer: " + err.Error()}
	}
	if key != "" {
		st.idempotent.put(key, idempotentAnswer{request: request, params: params, body: data})
	}
	return data, false, nil
}

// stripeAuth accepts any test-mode secret key, by Bearer or as the Basic user as Stripe
// does. The 401 names the key masked, as Stripe's does, so the answer never echoes a secret.
func stripeAuth(r *http.Request) *apiError {
	key, hasKey := "", false
	if user, _, ok := r.BasicAuth(); ok {
		key, hasKey = user, true
	} else if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		key, hasKey = strings.TrimSpace(bearer), true
	}
	switch {
	case !hasKey || key == "":
		return &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "You did not provide an API key. You need to provide your API key in the Authorization header, " +
				"using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication " +
				"for details, or we can help at https://support.stripe.com/."}
	case !strings.HasPrefix(key, "sk_test_"):
		return &apiError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "Invalid API Key provided: " + maskKey(key)}
	}
	return nil
}

// maskKey keeps a key's prefix and last four characters, as Stripe's 401 shows it.
func maskKey(key string) string {
	if len(key) <= 12 {
		return strings.Repeat("*", len(key))
	}
	return key[:8] + strings.Repeat("*", len(key)-12) + key[len(key)-4:]
}

// writeStripeError writes Stripe's error body. Stripe leaves absent members out rather
// than sending null.
func writeStripeError(w http.ResponseWriter, e apiError) {
	type body struct {
		Type    string `json:"type"`
		Code    string `json:"code,omitempty"`
		Param   string `json:"param,omitempty"`
		Message string `json:"message"`
	}
	writeJSON(w, e.Status, struct {
		Error body `json:"error"`
	}{body{Type: e.Type, Code: e.Code, Param: e.Param, Message: e.Message}})
}

// stripeMissing is Stripe's 400 for a required parameter left out.
func stripeMissing(param string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: "parameter_missing",
		Param: param, Message: fmt.Sprintf("Missing required param: %s.", param)}
}

// stripeInvalid is Stripe's 400 for a parameter with a value it refuses.
func stripeInvalid(param, code, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "invalid_request_error", Code: code, Param: param, Message: msg}
}

// stripeUnknown is Stripe's 400 for a parameter it does not know.
func stripeUnknown(param string) *apiError {
	return stripeInvalid(param, "parameter_unknown", "Received unknown parameter: "+param)
}

// stripeNoSuch is Stripe's 404 (on retrieval) or 400 (on a parameter) for an unknown id.
func stripeNoSuch(status int, param, what, id string) *apiError {
	return &apiError{Status: status, Type: "invalid_request_error", Code: "resource_missing", Param: param,
		Message: fmt.Sprintf("No such %s: '%s'", what, id)}
}

// Stripe's limits on metadata: more keys or longer ones are refused, which also bounds what
// a request can make the fake keep.
const (
	maxMetadataKeys  = 50
	maxMetadataKey   = 40
	maxMetadataValue = 500
)

// formMetadata collects name[key]=value parameters (metadata[account_id]=…). An empty value
// unsets a key in Stripe, so it is left out. The map is never nil: Stripe renders {}.
func formMetadata(form url.Values, name string) (map[string]string, *apiError) {
	sent, e := metadataParams(form, name)
	if e != nil {
		return nil, e
	}
	md := map[string]string{}
	for k, v := range sent {
		if v != "" {
			md[k] = v
		}
	}
	if e := metadataCount(name, md); e != nil {
		return nil, e
	}
	return md, nil
}

// metadataParams collects name[key]=value parameters as sent, empty values included,
// refusing keys and values longer than Stripe allows. Other parameters starting with name
// (name[a][b]) are not collected.
func metadataParams(form url.Values, name string) (map[string]string, *apiError) {
	md := map[string]string{}
	for k, vals := range form {
		key, ok := metadataKey(k, name)
		if !ok {
			continue
		}
		val := vals[len(vals)-1]
		switch {
		case len(key) > maxMetadataKey:
			return nil, stripeInvalid(k, "parameter_invalid_string_length", fmt.Sprintf(
				"Invalid %s: metadata keys can be at most %d characters long.", name, maxMetadataKey))
		case len(val) > maxMetadataValue:
			return nil, stripeInvalid(k, "parameter_invalid_string_length", fmt.Sprintf(
				"Invalid %s: metadata values can be at most %d characters long.", name, maxMetadataValue))
		}
		md[key] = val
	}
	return md, nil
}

// metadataKey is the key of a name[key] parameter.
func metadataKey(param, name string) (string, bool) {
	inner, ok := strings.CutPrefix(param, name+"[")
	if !ok || !strings.HasSuffix(inner, "]") || strings.Contains(inner[:len(inner)-1], "[") {
		return "", false
	}
	return inner[:len(inner)-1], true
}

// metadataCount refuses metadata with more keys than Stripe allows.
func metadataCount(name string, md map[string]string) *apiError {
	if len(md) > maxMetadataKeys {
		return stripeInvalid(name, "", fmt.Sprintf("Invalid %s: metadata can have up to %d keys, but you passed in %d keys.",
			name, maxMetadataKeys, len(md)))
	}
	return nil
}

// formURL reads an optional URL parameter; Stripe refuses anything but an absolute http(s) URL.
func formURL(form url.Values, param string) (string, *apiError) {
	v := form.Get(param)
	if v == "" {
		return "", nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", stripeInvalid(param, "url_invalid", "Not a valid URL")
	}
	return v, nil
}

// ptr returns a pointer to a copy of v, for the members Stripe renders as null when unset.
func ptr[T any](v T) *T { return &v }

// optional is nil for "", so an unset string member renders as null.
func optional(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

// deref is *p, or "" for nil.
func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// copyPtr is a pointer to a copy of *p, nil for nil, so two objects never share a member.
func copyPtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

// copyMetadata copies a metadata map, so an object and the events rendered from it never
// share one.
func copyMetadata(md map[string]string) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		out[k] = v
	}
	return out
}
