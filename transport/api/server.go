// Package api serves the client endpoints under /v1: authentication, policy (catalog, key
// restrictions, ZDR), route choice with failover, streaming, and the request log.
package api

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/edge"
	"github.com/modelgate/modelgate/transport/keycheck"
	"github.com/modelgate/modelgate/transport/metrics"
	"github.com/modelgate/modelgate/transport/upstream"
)

// Recorder says whether a call can be recorded now: nil, or why its store refuses writes (an
// error wrapping persistence.ErrFull while the data directory's disk is full).
type Recorder interface {
	CheckWritable() error
}

// RequestLog reads the request log (in a cluster, a replica of the account's shard: this
// node's, or a holder's when it has none): a key holder's
// usage (GET /v1/key) and one call's entry (GET /v1/generations/{id}).
type RequestLog interface {
	QueryLog(q persistence.LogQuery) (persistence.LogPage, error)
	LogEntry(accountID, requestID string) (persistence.LogEntry, error)
}

// Deps are the parts a Server is built from.
type Deps struct {
	Keys     keycheck.Keys
	Recorder Recorder // nil: calls are admitted without asking
	Accounts Accounts
	Log      RequestLog
	Quota    *quota.Service
	Assets   Assets
	Videos   Videos
	Catalog  *catalog.Holder
	Board    *routehealth.Board
	Upstream *upstream.Client
	Metrics  *metrics.Metrics
	Logger   *slog.Logger
	// AuthLimit refuses a client that keeps failing key checks (the node's one limiter;
	// nil: none).
	AuthLimit *authlimit.Limiter
}

// Server is the /v1 API.
type Server struct {
	Deps
	inflight atomic.Int64 // requests not yet recorded
}

// InFlight is the number of requests not yet recorded in their account's ledger.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// New builds the server.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Server{Deps: d}
}

// Register adds the /v1 routes to r.
func (s *Server) Register(r *mux.Router) {
	v1 := r.PathPrefix("/v1").Subrouter()
	v1.HandleFunc("/chat/completions", s.chatCompletions).Methods(http.MethodPost)
	v1.HandleFunc("/messages", s.messages).Methods(http.MethodPost)
	v1.HandleFunc("/messages/count_tokens", s.countTokens).Methods(http.MethodPost)
	v1.HandleFunc("/responses", s.responses).Methods(http.MethodPost)
	v1.HandleFunc("/embeddings", s.embeddings).Methods(http.MethodPost)
	v1.HandleFunc("/images/generations", s.imagesGenerations).Methods(http.MethodPost)
	v1.HandleFunc("/videos", s.createVideo).Methods(http.MethodPost)
	v1.HandleFunc("/videos/{video_id}", s.getVideo).Methods(http.MethodGet)
	v1.HandleFunc("/models", s.listModels).Methods(http.MethodGet)
	v1.HandleFunc("/models/{model:.+}", s.getModel).Methods(http.MethodGet)
	v1.HandleFunc("/key", s.keyInfo).Methods(http.MethodGet)
	v1.HandleFunc("/generations/{id}", s.generation).Methods(http.MethodGet)
	// The Gemini API (its own paths and version): generateContent & co., and its model list.
	v1beta := r.PathPrefix("/v1beta").Subrouter()
	v1beta.HandleFunc("/models", s.geminiListModels).Methods(http.MethodGet)
	v1beta.HandleFunc("/models/{action:.+:[A-Za-z]+}", s.geminiAction).Methods(http.MethodPost)
	v1beta.HandleFunc("/models/{model:.+}", s.geminiGetModel).Methods(http.MethodGet)
	r.HandleFunc("/assets/{kind:gen|vid}/{file}", s.serveAsset).Methods(http.MethodGet, http.MethodHead)
}

// call is what one request carries through the pipeline.
type call struct {
	id    string
	start time.Time // for latencies (the monotonic clock)
	// arrived is the same moment on the gateway's clock (s.now, the one the quota owners
	// use): the call's burst slot and its log entry's time, which the slot is rebuilt from.
	arrived  time.Time
	endpoint string
	key      persistence.Key
	revoked  *persistence.Key // the revoked key a 401 refused: its account's log gets the refusal
	catalog  *catalog.Catalog
	client   ir.ClientFormat // the format errors are rendered in; nil = chat
	// failed says an attempt failed for a reason other than "not now" (overloaded, rate
	// limited, cooling down), so a request left without routes is a 502, not a 529.
	failed bool
	srv    *Server
	ctx    context.Context // the client's request, once the key is known
	// rated says the X-RateLimit headers are decided: set by admission, or by a read of
	// the burst budget for an answer that admitted nothing (publishRates).
	rated bool
	live  *attempt // the last attempt dial opened
	// unrecorded says the store refused writes at admission: the call is answered 503
	// cannot_record and written nowhere (its record would meet the same full disk).
	unrecorded bool
	// checked is when the key check began: the key check and the admission share one
	// wait budget from there (quota.MaxWait).
	checked time.Time
	// anyKeyHeader: the endpoint takes x-goog-api-key on /v1 too (the key-holder
	// endpoints, which every format's clients call).
	anyKeyHeader bool
}

func (s *Server) begin(w http.ResponseWriter, endpoint string) *call {
	return &call{id: requestIDOf(w), start: time.Now(), arrived: s.now(), endpoint: endpoint, catalog: s.Catalog.Load(), srv: s}
}

// readBody reads the whole body within the catalog's limit, through the node's one bounded
// reader (transport/edge: deadline, minimum rate, bytes in flight).
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, c *call) ([]byte, *apiError) {
	body, p := edge.ReadBody(w, r, c.catalog.Server.MaxBodyBytes)
	if p == nil {
		return body, nil
	}
	if p.Status == http.StatusRequestTimeout && c.ctx != nil {
		// An HTTP/1 read that met its deadline cancels the request's context, but the client
		// still reads: its answer keeps the key's rate headers (publishRates waits on c.ctx).
		c.ctx = context.WithoutCancel(c.ctx)
	}
	return nil, problemError(p)
}

// problemError is an edge refusal as the API renders it.
func problemError(p *edge.Problem) *apiError {
	return &apiError{Status: p.Status, Type: p.Type, Code: p.Code, Message: p.Message, RetryAfter: p.RetryAfter}
}

// Refuse answers a refusal of the node's edge (a connection over its address's cap) in the
// envelope of the path's own format, as MethodNotAllowed does, with the request id.
func Refuse(w http.ResponseWriter, r *http.Request, p *edge.Problem) {
	render(w, &call{id: requestIDOf(w), client: formatOfPath(r.URL.Path)}, problemError(p))
}

// ServeMetrics serves the Prometheus metrics, with each route's health read at that moment.
// The node serves it on its own listener, never the API's (docs/decisions.md, "Serving").
func (s *Server) ServeMetrics(w http.ResponseWriter, r *http.Request) {
	now := s.Board.Now()
	for _, rt := range s.Catalog.Load().Routes() {
		st := s.Board.State(rt.ID)
		h := metrics.RouteHealth{Available: st.Available(now), State: st.Health(now), States: routehealth.HealthStates,
			ErrorRate: st.ErrorRate(now), Weight: st.Weight(rt.Weight, now)}
		if st != nil {
			h.InFlight = st.InFlight
		}
		s.Metrics.Route(rt.ID, h)
	}
	s.Metrics.Handler().ServeHTTP(w, r)
}

func muxVar(r *http.Request, name string) string { return mux.Vars(r)[name] }

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
