// Package auth serves the sign-in endpoints under /auth: sign-up with e-mail
// verification, login and server-side sessions with CSRF tokens, password reset and change.
// It runs over a Store: the single node's persistence.Store, or cluster/meta.Store in
// cluster mode. The endpoints are same-origin JSON; errors use the OpenAI-style envelope.
package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/edge"
	"github.com/modelgate/modelgate/transport/mail"
	"github.com/modelgate/modelgate/transport/respond"
)

// Store is what the sign-in endpoints read and write. Both *persistence.Store (single node)
// and *meta.Store (cluster) implement it: their writes are a proposer half (ids, hashes,
// times) and a replicated apply half.
type Store interface {
	Signup(email, password, plan string, now time.Time) (persistence.Account, string, persistence.Registration, error)
	AccountByEmail(email string) (persistence.Account, error)
	GetLogin(accountID string) (persistence.Login, error)
	IssueReset(accountID string, now time.Time) (string, error)
	UseToken(purpose, token, newPassword string, now time.Time) (persistence.Account, error)
	CreateSession(accountID string, now time.Time) (string, error)
	GetSession(hash string, now time.Time) (persistence.Session, persistence.Account, error)
	TouchSession(hash string, now time.Time) error
	EndSessions(c persistence.SessionEnd) error
	ChangePassword(accountID, email, newPassword, keepSession string) error
}

// Config is what the sign-in endpoints work with.
type Config struct {
	Store  Store
	Mailer mail.Mailer
	// Plan is the plan of an account made by sign-up (the config file's auth.signup_plan).
	Plan string
	// BaseURL is the gateway's public address for links in mail (server.public_url, else
	// the node's own URL); never the request's Host, which a caller could forge.
	BaseURL string
	Limits  Limits
	// AuthLimit refuses a client that keeps failing session or password checks (the node's
	// one limiter; nil: none).
	AuthLimit *authlimit.Limiter
	Now       func() time.Time // the proposers' clock; nil: time.Now
	Logger    *slog.Logger

	// PublicURL is the current server.public_url ("" unset; nil: none): an https one makes
	// the session cookie Secure whatever connection a request came over.
	PublicURL func() string
}

// Server is the /auth API.
type Server struct {
	cfg    Config
	now    func() time.Time
	log    *slog.Logger
	out    *outbox
	login  logins // failed logins (and wrong current passwords)
	signup pair
	forgot pair
	sleep  func(context.Context, time.Duration) // a failed login's delay
}

// New builds the /auth API and starts its mail queue; Close stops it.
func New(cfg Config) *Server {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.PublicURL == nil {
		cfg.PublicURL = func() string { return "" }
	}
	if cfg.Limits == (Limits{}) {
		cfg.Limits = DefaultLimits
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	l := cfg.Limits
	return &Server{cfg: cfg, now: cfg.Now, log: cfg.Logger, out: newOutbox(cfg.Mailer, cfg.Logger),
		login:  newLogins(cfg.Now, l),
		signup: newPair(cfg.Now, l.SignupPerEmail, l.SignupPerAddress),
		forgot: newPair(cfg.Now, l.ForgotPerEmail, l.ForgotPerAddress),
		sleep:  sleep}
}

// Close sends the mail already queued (until its deadline) and stops the queue.
func (s *Server) Close() { s.out.close() }

// Register adds the /auth routes.
func (s *Server) Register(r *mux.Router) {
	a := r.PathPrefix("/auth").Subrouter()
	a.HandleFunc("/signup", s.handleSignup).Methods(http.MethodPost)
	a.HandleFunc("/verify", s.verifyLink).Methods(http.MethodGet)
	a.HandleFunc("/verify", s.verify).Methods(http.MethodPost)
	a.HandleFunc("/login", s.handleLogin).Methods(http.MethodPost)
	a.HandleFunc("/logout", s.withSession(s.logout)).Methods(http.MethodPost)
	a.HandleFunc("/session", s.withSession(s.session)).Methods(http.MethodGet)
	a.HandleFunc("/password/forgot", s.forgotPassword).Methods(http.MethodPost)
	a.HandleFunc("/password/reset", s.resetPassword).Methods(http.MethodPost)
	a.HandleFunc("/password/change", s.withSession(s.changePassword)).Methods(http.MethodPost)
}

// accountView is the account as /auth shows it.
type accountView struct {
	ID    string `json:"id"`
	Email string `json:"email"`
	Plan  string `json:"plan"`
}

func viewOf(a persistence.Account) accountView {
	return accountView{ID: a.ID, Email: a.Email, Plan: a.PlanAt(time.Now().Unix())}
}

// maxBody bounds an /auth request's body.
const maxBody = 16 << 10

// decode reads a JSON object of the documented fields within maxBody, or answers 400.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, p := edge.ReadBody(w, r, maxBody)
	if p != nil {
		p.SetRetryAfter(w)
		respond.Error(w, p.Status, p.Type, p.Code, "", p.Message)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("a second value follows the object")
	}
	if err != nil {
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_json", "", "the body must be one JSON object of the documented fields: "+err.Error())
		return false
	}
	return true
}

// storeFailed answers a store error: a refusal naming its field as 400 invalid_<field>, a
// full disk as 503, anything else as 500 with its cause in the log only.
func (s *Server) storeFailed(w http.ResponseWriter, err error) bool {
	if err == nil {
		return false
	}
	var e *persistence.Error
	switch {
	case persistence.IsDiskFull(err):
		w.Header().Set("Retry-After", "10")
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "cannot_record", "", "the gateway's data directory is full, so nothing was changed; try again later")
	case errors.Is(err, persistence.ErrUnavailable):
		w.Header().Set("Retry-After", "1")
		respond.Error(w, http.StatusServiceUnavailable, "server_error", "cluster_unavailable", "", "the gateway could not confirm your account's current state in time; try again in a moment")
	case errors.As(err, &e) && errors.Is(err, persistence.ErrInvalid) && e.Field != "":
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_"+e.Field, e.Field, e.Msg)
	default:
		s.log.Error("auth: the store failed", "err", err)
		respond.Error(w, http.StatusInternalServerError, "server_error", "internal_error", "", "the request could not be completed; the gateway log has the cause")
	}
	return true
}
