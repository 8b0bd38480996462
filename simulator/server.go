// Package simulator is a fake LLM upstream that speaks the providers' wire formats over real
// HTTP, so the gateway's tests, demo and benchmarks exercise real sockets, real SSE framing and
// real failure modes without calling a paid API.
//
// One process serves many named upstream routes: /r/{route}/... for route "{route}", and the
// bare paths for route "". Each route has its own Behavior (latency, pacing, injected failures,
// dropped streams), its own call counter and a record of the last request it received, so a
// test can point several gateway routes at one simulator and assert what each one forwarded.
// Per route it serves, with each provider's auth, errors and streaming:
//
//	POST /v1/chat/completions                        OpenAI Chat Completions (Bearer)
//	POST /v1/responses                               OpenAI Responses (Bearer)
//	POST /v1/embeddings, GET /v1/models              OpenAI (Bearer)
//	POST /v1/images/generations                      OpenAI Images (Bearer); PNGs, inline or by URL
//	POST /v1/videos, GET /v1/videos/{id}[/content]   OpenAI Videos (Bearer): asynchronous jobs, MP4
//	GET  /files/{id}.png                             generated images behind their URLs (no auth)
//	POST /v1/messages, /v1/messages/count_tokens     Anthropic Messages (x-api-key or Bearer, anthropic-version)
//	POST /v1beta/models/{model}:generateContent      Gemini (x-goog-api-key, ?key= or Bearer; also under /v1)
//	POST /v1beta/models/{model}:streamGenerateContent[?alt=sse], :countTokens
//	     (image output with responseModalities "IMAGE" or an image model: inlineData PNG)
//
// and the cloud platforms' versions of those APIs, with the platforms' auth and errors:
//
//	POST /model/{modelId}/invoke[-with-response-stream]   Amazon Bedrock InvokeModel (SigV4): Anthropic's
//	                                                      body and answers, streamed in AWS event-stream chunks
//	POST /model/{modelId}/converse[-stream]               Bedrock Converse (SigV4)
//	POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:generateContent
//	     and :streamGenerateContent[?alt=sse], :countTokens      Vertex AI Gemini (Google OAuth token)
//	POST /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{m}:rawPredict
//	     and :streamRawPredict                                   Vertex AI Claude (Google OAuth token)
//	POST /openai/deployments/{d}/chat/completions?api-version=V   Azure OpenAI chat with content-filter
//	     annotations (api-key or an Entra token); also embeddings, images/generations, and
//	     /openai/responses?api-version=V, /openai/v1/{chat/completions,responses,embeddings,images/generations}
//
// and the identity platforms whose tokens Vertex and Azure take (not API calls: Calls does not
// count them, TokenGrants does):
//
//	POST /oauth2/token                        Google's JWT-bearer grant (ServiceAccountJSON's token_uri)
//	POST /{tenant}/oauth2/v2.0/token          Entra's client-credentials grant
//
// and, for the gateway's billing, a fake Stripe account: one per process, not per route, as
// stripe-go speaks to it (any sk_test_ key, form bodies, Idempotency-Key, Stripe's errors):
//
//	POST /v1/customers, GET /v1/customers/{id}                   Customers
//	POST /v1/checkout/sessions, GET /v1/checkout/sessions/{id}   Checkout Sessions (payment, subscription)
//	POST /v1/billing_portal/sessions, GET /v1/subscriptions/{id}
//	GET, POST /stripe/pay/{id}                   the hosted payment page: paying sends the webhooks, then
//	                                             redirects to success_url
//	GET /stripe/portal/{id}, POST …/cancel       the hosted billing portal: cancel at period end
//
// with events signed as Stripe signs them POSTed to the endpoints set with StripeWebhook, and
// refunds, disputes and subscription changes sent on a test's demand (Refund, Dispute,
// UpdateSubscription, CancelSubscription, FailInvoice, RenewSubscription).
//
// Answers are deterministic and the same in every format (answer.go), so tests can assert
// exact content and usage and compare formats; golden.go normalizes the ids and timestamps that
// do vary. The control API (PUT/GET /_sim/routes/{route}) steers routes from other processes
// and shows what each last received; GET /_sim/google/service-account serves the key file;
// /_sim/stripe/… (stripe_control.go) sets webhook endpoints and prices, sends the Stripe
// events and lists them with each delivery's answer.
//
// Each wire format lives in its own files (chat*.go, messages*.go, gemini*.go, responses*.go,
// embeddings.go, images.go, videos.go, bedrock*.go, converse*.go, vertex.go, azure*.go) and
// plugs into the shared request pipeline (Server.endpoint) through a dialect: how that format
// authenticates (sigv4.go, google_token.go, entra_token.go for the platforms) and how it
// renders an error. Each renders the shared format-neutral answer; no format is derived from
// another, though a platform that serves a provider's API (Bedrock InvokeModel and Vertex
// rawPredict serve Anthropic's, Vertex serves Gemini's, Azure OpenAI's) serves that format's
// rendering with its own ids, envelope and annotations. media.go and mp4.go make the pictures
// and videos: real PNG and MP4 files, small and deterministic. The Stripe fake lives in
// stripe*.go (stripe.go describes its files).
package simulator

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxBodyBytes bounds what one request may upload; real providers cap bodies too, and a
// runaway test should get a 413 rather than exhaust memory.
const maxBodyBytes = 32 << 20

// Server is a simulated upstream. Create it with New (then serve Handler) or with Start.
// All methods are safe for concurrent use, including while traffic is flowing.
type Server struct {
	mux    *http.ServeMux
	idSeed [8]byte       // random per server, so two simulator processes never share ids
	ids    atomic.Uint64 // feeds newID so every response and tool call gets a distinct id

	mu     sync.RWMutex
	routes map[string]*routeState

	files  *boundedStore[storedFile] // generated images behind their URLs
	videos *boundedStore[*videoJob]  // video generation jobs

	aws    *awsKeys    // the access keys Bedrock's SigV4 check accepts
	tokens *tokenStore // access tokens issued by the Google and Entra token endpoints

	stripe *stripeState // the fake Stripe account (stripe*.go)
}

// routeState is everything the simulator knows about one route.
type routeState struct {
	calls       atomic.Int64
	tokenGrants atomic.Int64 // access tokens the route's token endpoints issued

	mu          sync.Mutex
	behavior    Behavior
	failSeq     int64 // calls judged for failure since the behaviour was last set
	videoSeq    int64 // video jobs judged for failure since the behaviour was last set
	lastMethod  string
	lastURI     string // the request target as received: escaped path and query
	lastBody    []byte
	lastHeaders http.Header
}

// New returns a simulator with every route healthy and instant.
func New() *Server {
	s := &Server{mux: http.NewServeMux(), routes: make(map[string]*routeState),
		files: newBoundedStore[storedFile](maxStoredFiles), videos: newBoundedStore[*videoJob](maxStoredVideos),
		aws: newAWSKeys(), tokens: newTokenStore(), stripe: newStripeState()}
	_, _ = rand.Read(s.idSeed[:]) // never fails (crypto/rand panics rather than erring)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
	})
	s.registerControl()
	s.registerOpenAI()
	s.registerMessages()
	s.registerGemini()
	s.registerBedrock()
	s.registerVertex()
	s.registerAzure()
	s.registerTokenEndpoints()
	s.registerStripe()
	s.registerStripeControl()
	s.handleRoutes(http.MethodGet, "/files/{name}", http.HandlerFunc(s.serveFile))
	// Unknown paths get an OpenAI-shaped 404, as api.openai.com does, so a misconfigured
	// gateway base URL fails with a readable upstream error instead of an HTML page.
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeOpenAIError(w, apiError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	})
	return s
}

// Handler serves the simulated APIs, the /_sim control API and /healthz.
func (s *Server) Handler() http.Handler { return s.mux }

// handleRoutes registers h for path both with and without the /r/{route} prefix, so one
// process serves the default route and any number of named ones.
func (s *Server) handleRoutes(method, path string, h http.Handler) {
	s.mux.Handle(method+" "+path, h)
	s.mux.Handle(method+" /r/{route}"+path, h)
}

// SetBehavior replaces the behaviour of route ("" is the route without a /r/ prefix). It also
// restarts the FailFraction and VideoFailFraction patterns, so the calls (and video jobs) after
// SetBehavior fail in a known order.
func (s *Server) SetBehavior(route string, b Behavior) {
	rt := s.state(route)
	rt.mu.Lock()
	rt.behavior = b
	rt.failSeq = 0
	rt.videoSeq = 0
	rt.mu.Unlock()
}

// Behavior returns the current behaviour of route.
func (s *Server) Behavior(route string) Behavior {
	rt := s.lookup(route)
	if rt == nil {
		return Behavior{}
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.behavior
}

// Calls is the number of requests that reached route on any API endpoint, counted on arrival
// (before delays, auth and injected failures).
func (s *Server) Calls(route string) int64 {
	rt := s.lookup(route)
	if rt == nil {
		return 0
	}
	return rt.calls.Load()
}

// LastRequest is a copy of the raw body of the last request to route (nil if none), so tests
// can assert exactly what the gateway forwarded.
func (s *Server) LastRequest(route string) []byte {
	rt := s.lookup(route)
	if rt == nil {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.lastBody == nil {
		return nil
	}
	return append([]byte(nil), rt.lastBody...)
}

// LastRequestURI is the request target of the last request to route as it arrived (its
// escaped path, /r/{route} prefix included, and query), or "" if none: tests assert the URL a
// gateway built, such as a Bedrock model id's escaping or an Azure api-version.
func (s *Server) LastRequestURI(route string) string {
	rt := s.lookup(route)
	if rt == nil {
		return ""
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.lastURI
}

// TokenGrants is the number of access tokens the token endpoints of route (the Google
// JWT-bearer endpoint and the Entra client-credentials one) have issued, so a test can assert
// that a gateway fetched one token and reused it rather than fetching one per request.
func (s *Server) TokenGrants(route string) int64 {
	rt := s.lookup(route)
	if rt == nil {
		return 0
	}
	return rt.tokenGrants.Load()
}

// LastHeaders is a copy of the headers of the last request to route (nil if none).
func (s *Server) LastHeaders(route string) http.Header {
	rt := s.lookup(route)
	if rt == nil {
		return nil
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.lastHeaders.Clone()
}

func (s *Server) lookup(route string) *routeState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.routes[route]
}

// state returns the route's state, creating it on first use: any route name works without
// being declared first, which keeps test setup to one line.
func (s *Server) state(route string) *routeState {
	if rt := s.lookup(route); rt != nil {
		return rt
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rt := s.routes[route]
	if rt == nil {
		rt = &routeState{}
		s.routes[route] = rt
	}
	return rt
}

// arrive counts and records one request and returns the behaviour in force for it. The
// behaviour is a snapshot: a SetBehavior racing with the request affects only later requests.
func (rt *routeState) arrive(r *http.Request, body []byte) Behavior {
	rt.calls.Add(1)
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.lastMethod = r.Method
	rt.lastURI = r.RequestURI
	rt.lastBody = body
	rt.lastHeaders = r.Header.Clone()
	return rt.behavior
}

// judge advances the route's failure pattern by one call and reports whether it fails.
func (rt *routeState) judge(b Behavior) bool {
	if !b.failing() {
		return false
	}
	rt.mu.Lock()
	rt.failSeq++
	k := rt.failSeq
	rt.mu.Unlock()
	return b.failsAt(k)
}

// judgeVideo advances the route's video-job failure pattern by one job and reports whether
// that job ends failed.
func (rt *routeState) judgeVideo(b Behavior) bool {
	if b.VideoFailFraction <= 0 {
		return false
	}
	rt.mu.Lock()
	rt.videoSeq++
	k := rt.videoSeq
	rt.mu.Unlock()
	return b.videoFailsAt(k)
}

// dialect is what differs between wire formats in the shared request pipeline.
type dialect struct {
	authorized   func(*http.Request) bool
	unauthorized apiError
	// authenticate, when set, replaces authorized and unauthorized, for credentials that
	// fail in more than one way (a bad signature, an expired token) or that sign the body.
	authenticate func(r *http.Request, body []byte) *apiError
	failure      func(status int) apiError // the format's error for an injected failure
	// refusal is the format's error for an injected FailKind; it sets its retry headers on w.
	refusal    func(w http.ResponseWriter, kind FailKind, delay time.Duration) apiError
	writeError func(http.ResponseWriter, apiError)
	// requestIDHeader, if set, also carries the request id (Anthropic's "request-id");
	// X-Request-Id is always sent.
	requestIDHeader string
}

// exchange is one request that passed the shared pipeline and is ready to be answered.
type exchange struct {
	w        http.ResponseWriter
	r        *http.Request
	route    string
	body     []byte
	behavior Behavior
}

// endpoint wraps a format handler in the pipeline every simulated API call goes through:
// record → first-byte delay → auth → injected failure → handler. The delay comes first so a
// slow upstream is slow even when it is about to refuse the call, as real ones are.
func (s *Server) endpoint(d dialect, serve func(*exchange)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("route")
		rt := s.state(name)
		body, readErr := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		b := rt.arrive(r, body)
		if !sleepCtx(r.Context(), b.FirstByteDelay) {
			return // the client gave up; there is no one to answer
		}
		id := s.newID("req_")
		w.Header().Set("X-Request-Id", id)
		if d.requestIDHeader != "" {
			w.Header().Set(d.requestIDHeader, id)
		}
		if readErr != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](readErr); ok {
				status = http.StatusRequestEntityTooLarge
			}
			e := d.failure(status)
			e.Message = "could not read request body: " + readErr.Error()
			d.writeError(w, e)
			return
		}
		if e := d.check(r, body); e != nil {
			d.writeError(w, *e)
			return
		}
		if rt.judge(b) {
			d.writeError(w, injectedFailure(d, w, b))
			return
		}
		serve(&exchange{w: w, r: r, route: name, body: body, behavior: b})
	})
}

// check authenticates a request: nil when it may proceed, else the error to answer with.
func (d dialect) check(r *http.Request, body []byte) *apiError {
	if d.authenticate != nil {
		return d.authenticate(r, body)
	}
	if !d.authorized(r) {
		e := d.unauthorized
		return &e
	}
	return nil
}

// newID returns prefix plus 24 hex characters, distinct for every call: a hash of a per-server
// seed and a counter looks like a provider id, cannot collide across processes and is cheap.
func (s *Server) newID(prefix string) string {
	sum := sha256.Sum256(strconv.AppendUint(s.idSeed[:], s.ids.Add(1), 10))
	return prefix + hex.EncodeToString(sum[:12])
}

// Start listens on addr ("127.0.0.1:0" picks a free port) and serves a new simulator in a
// goroutine. It returns the base URL (e.g. "http://127.0.0.1:41234") and a function that stops
// the server and closes its connections.
func Start(addr string) (*Server, string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("simulator: listen on %s: %w", addr, err)
	}
	s := New()
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(ln) // always ErrServerClosed once stop runs
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = srv.Close()
			<-served
		})
	}
	return s, baseURL(ln.Addr()), stop, nil
}

// baseURL turns a listener address into a URL a client can dial: a wildcard listen address
// (":9090", "0.0.0.0:9090") is reachable on loopback.
func baseURL(a net.Addr) string {
	host, port := "127.0.0.1", ""
	if tcp, ok := a.(*net.TCPAddr); ok {
		port = strconv.Itoa(tcp.Port)
		if !tcp.IP.IsUnspecified() {
			host = tcp.IP.String()
		}
	} else {
		h, p, _ := net.SplitHostPort(a.String())
		host, port = h, p
	}
	return "http://" + net.JoinHostPort(host, port)
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // bodies are for API clients, not browsers; keep "<" readable
	if err := enc.Encode(v); err != nil {
		http.Error(w, "simulator: encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
