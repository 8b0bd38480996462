// Package admin serves the operator API under /admin/v1: accounts, keys, usage and route
// health, guarded by the operator's admin token.
package admin

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/edge"
	"github.com/modelgate/modelgate/transport/respond"
)

// Store is what the admin API changes.
type Store interface {
	CreateAccount(email, plan string) (persistence.Account, error)
	ListAccountsPage(q persistence.AccountQuery) (persistence.AccountPage, error)
	GetAccount(id string) (persistence.Account, error)
	SetAccountPlan(id, plan string) (persistence.Account, error)
	CreateKey(accountID string, spec persistence.KeySpec) (persistence.Key, string, error)
	ImportKey(accountID string, spec persistence.KeySpec, secret string) (persistence.Key, error)
	ListKeys(accountID string) ([]persistence.Key, error)
	RevokeKey(id string) (persistence.Key, error)
	QueryLog(q persistence.LogQuery) (persistence.LogPage, error)

	// SetAccountDisabled disables (its keys and sessions stop at once) or enables an account.
	SetAccountDisabled(id string, disabled bool) (persistence.Account, error)
	// Key updates and limits.
	UpdateKey(id string, u persistence.KeyUpdate) (persistence.Key, error)
	// A reset token issued and used at once is how the operator sets a login's password.
	IssueReset(accountID string, now time.Time) (string, error)
	UseToken(purpose, token, newPassword string, now time.Time) (persistence.Account, error)
}

// Deps are what the admin API works with.
type Deps struct {
	Store     Store
	TokenHash [32]byte // SHA-256 of the admin token
	Catalog   *catalog.Holder
	Quota     *quota.Service
	Health    RouteHealth
	// AuthLimit refuses a client that keeps failing token checks (the node's one limiter;
	// nil: none).
	AuthLimit *authlimit.Limiter
	// Credentials says when a route's short-lived credential is next fetched (nil: never shown).
	Credentials Credentials
	// Payments lists what account holders paid through Stripe (nil: an empty list).
	Payments Payments
}

// Payments is the record of Stripe payments (persistence.Store).
type Payments interface {
	Payments() ([]persistence.Payment, error)
}

// Credentials is the upstream client's view of the routes' credentials.
type Credentials interface {
	NextRefresh(rt *catalog.Route) time.Time // zero: a static credential, or none fetched yet
}

// Server is the admin API.
type Server struct {
	store     Store
	tokenHash [32]byte
	catalog   *catalog.Holder
	quota     *quota.Service
	health    RouteHealth
	authLimit *authlimit.Limiter
	creds     Credentials
	payments  Payments
}

// New builds the admin API.
func New(d Deps) *Server {
	return &Server{store: d.Store, tokenHash: d.TokenHash, catalog: d.Catalog, quota: d.Quota, health: d.Health, authLimit: d.AuthLimit, creds: d.Credentials, payments: d.Payments}
}

// DefaultPlan is the plan of an account created without one.
const DefaultPlan = "free"

// Register adds the routes.
func (s *Server) Register(r *mux.Router) {
	a := r.PathPrefix("/admin/v1").Subrouter()
	a.Use(s.guard)
	a.HandleFunc("/accounts", s.createAccount).Methods(http.MethodPost)
	a.HandleFunc("/accounts", s.listAccounts).Methods(http.MethodGet)
	a.HandleFunc("/accounts/{id}", s.getAccount).Methods(http.MethodGet)
	a.HandleFunc("/accounts/{id}/keys", s.createKey).Methods(http.MethodPost)
	a.HandleFunc("/accounts/{id}/keys", s.listKeys).Methods(http.MethodGet)
	a.HandleFunc("/accounts/{id}/usage", s.usage).Methods(http.MethodGet)
	a.HandleFunc("/accounts/{id}/plan", s.setPlan).Methods(http.MethodPut)
	a.HandleFunc("/accounts/{id}/credits", s.addCredits).Methods(http.MethodPost)
	a.HandleFunc("/accounts/{id}/quota", s.quotaState).Methods(http.MethodGet)
	a.HandleFunc("/accounts/{id}/disable", s.setDisabled(true)).Methods(http.MethodPost)
	a.HandleFunc("/accounts/{id}/enable", s.setDisabled(false)).Methods(http.MethodPost)
	a.HandleFunc("/accounts/{id}/password", s.setPassword).Methods(http.MethodPut)
	a.HandleFunc("/keys/{id}", s.revokeKey).Methods(http.MethodDelete)
	a.HandleFunc("/keys/{id}", s.updateKey).Methods(http.MethodPatch)
	a.HandleFunc("/routes", s.routes).Methods(http.MethodGet)
	a.HandleFunc("/payments", s.listPayments).Methods(http.MethodGet)
}

// Guard is the admin token check, for routes outside /admin/v1 that share the token (the
// cluster's /admin/cluster).
func (s *Server) Guard(next http.Handler) http.Handler { return s.guard(next) }

// guard compares hashes in constant time, so neither the token nor its length leaks. Any
// Authorization header is an attempt: a client that failed too many is refused unchecked.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		if header != "" {
			if wait := s.authLimit.Wait(r, authlimit.AdminToken); wait > 0 {
				authlimit.Refuse(w, wait, respond.Error)
				return
			}
		}
		token, ok := strings.CutPrefix(header, "Bearer ")
		got := sha256.Sum256([]byte(strings.TrimSpace(token)))
		if !ok || subtle.ConstantTimeCompare(got[:], s.tokenHash[:]) != 1 {
			if header != "" {
				s.authLimit.Failed(r, authlimit.AdminToken)
			}
			respond.Error(w, http.StatusUnauthorized, "authentication_error", "invalid_admin_token", "", "the admin API needs 'Authorization: Bearer <admin token>'")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) createAccount(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email string `json:"email"`
		Plan  string `json:"plan"`
	}
	if !Decode(w, r, &in) {
		return
	}
	if in.Plan == "" {
		in.Plan = DefaultPlan
	}
	if !s.planExists(w, in.Plan) {
		return
	}
	acct, err := s.store.CreateAccount(in.Email, in.Plan)
	if emailTaken(w, err) || StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusCreated, acct)
}

func (s *Server) getAccount(w http.ResponseWriter, r *http.Request) {
	acct, err := s.store.GetAccount(mux.Vars(r)["id"])
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, acct)
}

// setDisabled is POST /admin/v1/accounts/{id}/disable and /enable: the account as it is now
// (doing it twice is no error). A body, if sent, is ignored.
func (s *Server) setDisabled(disabled bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		acct, err := s.store.SetAccountDisabled(mux.Vars(r)["id"], disabled)
		if StoreFailed(w, err) {
			return
		}
		respond.JSON(w, http.StatusOK, acct)
	}
}

// createdKey is the one answer that shows a key's secret.
type createdKey struct {
	persistence.Key
	Secret string `json:"key"`
}

func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	s.ServeCreateKey(w, r, mux.Vars(r)["id"], true)
}

// ServeCreateKey creates a key of the account from the request's body and answers 201 with
// its secret (the operator's POST …/accounts/{id}/keys, and the account API's, which may not
// import a secret).
func (s *Server) ServeCreateKey(w http.ResponseWriter, r *http.Request, acct string, allowImport bool) {
	var in struct {
		Name   string                     `json:"name"`
		Models []string                   `json:"models"`
		ZDR    bool                       `json:"zdr"`
		Import string                     `json:"import_key"` // an existing sk-user-/sk-token- secret to import
		Limits *persistence.KeyLimitsJSON `json:"limits"`
	}
	if !Decode(w, r, &in) {
		return
	}
	if in.Import != "" && !allowImport {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "import_key", "import_key is for the operator's admin API only")
		return
	}
	if !s.modelsExist(w, in.Models) {
		return
	}
	limits, ok := keyLimits(w, in.Limits)
	if !ok {
		return
	}
	spec := persistence.KeySpec{Name: in.Name, Models: in.Models, ZDR: in.ZDR, Limits: limits}
	if in.Import != "" {
		k, err := s.store.ImportKey(acct, spec, in.Import)
		if StoreFailed(w, err) {
			return
		}
		respond.JSON(w, http.StatusCreated, k)
		return
	}
	k, secret, err := s.store.CreateKey(acct, spec)
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusCreated, createdKey{Key: k, Secret: secret})
}

// modelsExist refuses a key restriction naming models the catalog does not have (ids or
// aliases): such a key could never make a call, and the typo would go unnoticed.
func (s *Server) modelsExist(w http.ResponseWriter, models []string) bool {
	var unknown []string
	for _, m := range models {
		if _, ok := s.catalog.Load().Lookup(m); !ok && m != "" {
			unknown = append(unknown, m)
		}
	}
	if len(unknown) == 0 {
		return true
	}
	respond.Error(w, http.StatusBadRequest, "invalid_request_error", "unknown_model", "models",
		"models names models that are not in the catalog: "+strings.Join(unknown, ", ")+" (GET /v1/models lists them)")
	return false
}

func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) {
	id := mux.Vars(r)["id"]
	if _, err := s.store.GetAccount(id); StoreFailed(w, err) {
		return
	}
	keys, err := s.store.ListKeys(id)
	if StoreFailed(w, err) {
		return
	}
	if keys == nil {
		keys = []persistence.Key{}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"object": "list", "data": keys})
}

func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request) {
	s.ServeRevokeKey(w, r, mux.Vars(r)["id"])
}

// ServeRevokeKey revokes the key and answers it as it is now.
func (s *Server) ServeRevokeKey(w http.ResponseWriter, r *http.Request, id string) {
	k, err := s.store.RevokeKey(id)
	if StoreFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, k)
}

// parseTime accepts RFC 3339 or unix seconds; empty is the zero time (no bound).
func parseTime(w http.ResponseWriter, r *http.Request, name string) (time.Time, bool) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, true
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, true
	}
	var secs int64
	if err := json.Unmarshal([]byte(v), &secs); err == nil {
		return time.Unix(secs, 0), true
	}
	respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_time", name, name+" must be an RFC 3339 time (2026-11-22T00:00:00Z) or unix seconds")
	return time.Time{}, false
}

// Decode reads the body: one JSON object of the documented fields and nothing after it (a
// second object would otherwise be ignored unread), within 1 MiB.
func Decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, p := edge.ReadBody(w, r, maxBody)
	if p != nil {
		p.SetRetryAfter(w)
		respond.Error(w, p.Status, p.Type, p.Code, "", p.Message)
		return false
	}
	param, msg := "", ""
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		msg = check.JSONProblem(err)
	} else if param, msg = bodyProblem(body, v); msg == "" {
		return true
	}
	respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", param, "the body must be a JSON object of the documented fields: "+msg)
	return false
}

// maxBody bounds an admin request's body.
const maxBody = 1 << 20

// StoreFailed answers a store error: the typed refusals (not found, invalid, conflict) in the
// store's own words, which name the record or the field; anything else as the store's failure,
// its cause in the log rather than in the answer.
func StoreFailed(w http.ResponseWriter, err error) bool {
	if err == nil {
		return false
	}
	if persistence.IsDiskFull(err) {
		diskFull(w)
		return true
	}
	var e *persistence.Error
	if !errors.As(err, &e) {
		slog.Error("admin: the store failed", "err", err)
		respond.Error(w, http.StatusInternalServerError, "server_error", "internal_error", "", "the store could not complete the request; the gateway log has the cause")
		return true
	}
	switch {
	case errors.Is(e, persistence.ErrNotFound):
		respond.Error(w, http.StatusNotFound, "invalid_request_error", e.What+"_not_found", "", e.Msg)
	case errors.Is(e, persistence.ErrConflict):
		respond.Error(w, http.StatusConflict, "invalid_request_error", "conflict", e.Field, e.Msg)
	default:
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_request", e.Field, e.Msg)
	}
	return true
}

// diskFull is the answer to a change the store cannot write: its disk is full. Nothing was
// changed; the same call succeeds once the data directory has space again.
func diskFull(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "10")
	respond.Error(w, http.StatusServiceUnavailable, "server_error", "cannot_record", "",
		"the gateway's data directory is full, so nothing was changed; free space on its disk and retry")
}
