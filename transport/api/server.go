// Package api serves the client endpoints under /v1: authentication, policy (catalog, key
// restrictions, ZDR), route choice with failover, streaming, and the request log.
package api

import (
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/routehealth"
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

// Server is the /v1 API: its endpoints, over three parts that each hold what one side of a
// call needs: the ledger (the account: admission, rate headers, answers and their record),
// the router (the upstream: route attempts and failover) and the chooser (the models that
// may serve a request).
type Server struct {
	Deps
	ledger
	router
	chooser
	inflight atomic.Int64 // requests not yet recorded
}

// InFlight is the number of requests not yet recorded in their account's ledger.
func (s *Server) InFlight() int64 { return s.inflight.Load() }

// New builds the server.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	s := &Server{Deps: d}
	s.ledger = ledger{quota: d.Quota, accounts: d.Accounts, recorder: d.Recorder, logger: d.Logger, board: d.Board}
	s.router = router{board: d.Board, upstream: d.Upstream, metrics: d.Metrics, logger: d.Logger}
	s.chooser = chooser{board: d.Board}
	return s
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

// problemError is an edge refusal as the API renders it.
func problemError(p *edge.Problem) *apiError {
	return &apiError{Status: p.Status, Type: p.Type, Code: p.Code, Message: p.Message, RetryAfter: p.RetryAfter}
}

// Refuse answers a refusal of the node's edge (a connection over its address's cap) in the
// envelope of the path's own format, as MethodNotAllowed does, with the request id.
func Refuse(w http.ResponseWriter, r *http.Request, p *edge.Problem) {
	writeError(w, &exchange{id: requestIDOf(w), envelope: formatOfPath(r.URL.Path)}, problemError(p))
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
