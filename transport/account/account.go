// Package account serves the account API under /account/v1: an account's own
// view of its limits, keys, usage and credits, for the web dashboard and for scripts. A
// caller is a browser session (cookie, with the CSRF token on writes) or one of the
// account's API keys, which may read but not manage keys. Each handler is scoped to the
// caller's account: another account's records answer as unknown ones.
package account

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/auth"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/keycheck"
	"github.com/modelgate/modelgate/transport/respond"
)

// Prefix is where the account API is served.
const Prefix = "/account/v1"

// Grants lists an account's top-ups (persistence.Store: kept beside the request log in
// both modes).
type Grants interface {
	CreditGrants(account string) ([]persistence.KeyedGrant, error)
}

// Deps are what the account API works with. Admin is the operator API over the same
// store: the account API answers its key, usage and quota requests through it, scoped to
// the caller's account, so both APIs validate and answer alike.
type Deps struct {
	Store  admin.Store
	Admin  *admin.Server
	Auth   *auth.Server
	Keys   keycheck.Keys
	Grants Grants
	Logger *slog.Logger
	Now    func() time.Time // nil: time.Now
	// AuthLimit refuses a client that keeps failing key checks (the node's one limiter, which
	// Auth's session check asks too; nil: none).
	AuthLimit *authlimit.Limiter
	// Payments makes credit checkouts (nil: none), and PublicURL is server.public_url now,
	// for the way back from one.
	Payments  Payments
	PublicURL func() string
}

// Server is the account API.
type Server struct{ Deps }

// New builds the account API.
func New(d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.PublicURL == nil {
		d.PublicURL = func() string { return "" }
	}
	return &Server{d}
}

// Register adds the /account/v1 routes.
func (s *Server) Register(r *mux.Router) {
	a := r.PathPrefix(Prefix).Subrouter()
	a.HandleFunc("/me", s.read(s.me)).Methods(http.MethodGet)
	a.HandleFunc("/keys", s.read(s.listKeys)).Methods(http.MethodGet)
	a.HandleFunc("/keys", s.write(s.createKey)).Methods(http.MethodPost)
	a.HandleFunc("/keys/{id}", s.write(s.updateKey)).Methods(http.MethodPatch)
	a.HandleFunc("/keys/{id}", s.write(s.revokeKey)).Methods(http.MethodDelete)
	a.HandleFunc("/usage", s.read(s.usage)).Methods(http.MethodGet)
	a.HandleFunc("/usage.csv", s.read(s.usageCSV)).Methods(http.MethodGet)
	a.HandleFunc("/credits", s.read(s.credits)).Methods(http.MethodGet)
	a.HandleFunc("/credits/checkout", s.read(s.creditCheckout)).Methods(http.MethodPost)
	a.HandleFunc("/plan", s.read(s.plan)).Methods(http.MethodGet)
	a.HandleFunc("/plan/checkout", s.write(s.planCheckout)).Methods(http.MethodPost)
	a.HandleFunc("/billing/portal", s.write(s.portal)).Methods(http.MethodPost)
	a.HandleFunc("/openapi.yaml", serveOpenAPI).Methods(http.MethodGet)
}

// handler answers for the caller's account.
type handler func(w http.ResponseWriter, r *http.Request, acct persistence.Account)

// read lets a session or an API key of the account call h.
func (s *Server) read(h handler) http.HandlerFunc { return s.guard(h, false) }

// write lets only a session call h (with its CSRF token, which auth checks): an API key gets
// 403 session_required, so a leaked key cannot make or change keys.
func (s *Server) write(h handler) http.HandlerFunc { return s.guard(h, true) }

func (s *Server) guard(h handler, needSession bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if secret, ok := apiKey(w, r); ok && secret != "" {
			if needSession {
				respond.Error(w, http.StatusForbidden, "permission_error", "session_required", "",
					"managing keys needs a logged-in session (the dashboard); an API key may only read its account")
				return
			}
			if acct, ok := s.keyAccount(w, r, secret); ok {
				h(w, r, acct)
			}
			return
		} else if !ok {
			return
		}
		if !s.Auth.HasSessionCookie(r) {
			respond.Error(w, http.StatusUnauthorized, "authentication_error", "not_authenticated", "",
				"log in (POST /auth/login sets the session cookie) or send an API key in 'Authorization: Bearer <API key>'")
			return
		}
		if c, ok := s.Auth.Authenticate(w, r); ok {
			h(w, r, c.Account)
		}
	}
}

// apiKey is the secret of Authorization: Bearer or x-api-key ("" when neither is sent);
// false after answering a malformed Authorization header.
func apiKey(w http.ResponseWriter, r *http.Request) (string, bool) {
	if k := strings.TrimSpace(r.Header.Get("x-api-key")); k != "" {
		return k, true
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", true
	}
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		respond.Error(w, http.StatusUnauthorized, "authentication_error", "invalid_api_key", "", "the Authorization header must be 'Bearer <API key>'")
		return "", false
	}
	return strings.TrimSpace(token), true
}

// keyAccount checks the key as the API's key check does and reads its account.
func (s *Server) keyAccount(w http.ResponseWriter, r *http.Request, secret string) (persistence.Account, bool) {
	if wait := s.AuthLimit.Wait(r, authlimit.APIKey); wait > 0 {
		authlimit.Refuse(w, wait, respond.Error)
		return persistence.Account{}, false
	}
	k, no := keycheck.Check(s.Keys, secret, s.Now())
	if no != nil {
		if no.Failed {
			s.AuthLimit.Failed(r, authlimit.APIKey)
		}
		if no.Err != nil {
			s.Logger.Error("account: key check failed", "err", no.Err)
		}
		if no.RetryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(no.RetryAfter))
		}
		respond.Error(w, no.Status, no.Type, no.Code, "", no.Message)
		return persistence.Account{}, false
	}
	acct, err := s.Store.GetAccount(k.AccountID)
	if admin.StoreFailed(w, err) {
		return persistence.Account{}, false
	}
	return acct, true
}

// me answers GET /account/v1/me: the operator's quota view of the account and its e-mail.
func (s *Server) me(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	v, ok := s.Admin.Quota(w, r, acct)
	if !ok {
		return
	}
	respond.JSON(w, http.StatusOK, struct {
		Email string `json:"email"`
		admin.QuotaView
	}{acct.Email, v})
}
