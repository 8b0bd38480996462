package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/peer"
	"github.com/modelgate/modelgate/transport/respond"
)

// CookieName is the session cookie over plain HTTP; SecureCookieName over HTTPS, where the
// __Host- prefix makes browsers take it only when Secure, for this host alone, on path / —
// so neither a plain-HTTP answer nor a sibling domain can plant a session the gateway reads.
const (
	CookieName       = "mg_session"
	SecureCookieName = "__Host-" + CookieName
)

// CSRFHeader carries the session's CSRF token on every state-changing request.
const CSRFHeader = "X-CSRF-Token"

// Current is the signed-in caller of a request.
type Current struct {
	Account persistence.Account
	Session persistence.Session
	ID      string // the session id (the cookie's value): never logged or stored
	Hash    string // what the session is stored under
}

// CSRFToken is the token the caller must send in X-CSRF-Token.
func (c *Current) CSRFToken() string { return persistence.CSRFToken(c.ID) }

type currentKey struct{}

// CurrentFrom is the caller RequireSession put in the request's context.
func CurrentFrom(ctx context.Context) (*Current, bool) {
	c, ok := ctx.Value(currentKey{}).(*Current)
	return c, ok
}

// Authenticate reads the session cookie: the caller, or false after answering 401 (no or
// ended session: a failed check for the client's authlimit), 429 (a client that failed too
// many checks), 403 csrf_token_invalid (a state-changing method without the session's
// CSRF token) or 403 account_disabled. A session last seen more than SessionTouchEvery ago
// is touched (its idle expiry moves).
func (s *Server) Authenticate(w http.ResponseWriter, r *http.Request) (*Current, bool) {
	ck, err := r.Cookie(s.cookieName(r))
	if err != nil || ck.Value == "" {
		respond.Error(w, http.StatusUnauthorized, "authentication_error", "not_authenticated", "", "not logged in: log in at POST /auth/login")
		return nil, false
	}
	if wait := s.cfg.AuthLimit.Wait(r, authlimit.Session); wait > 0 {
		authlimit.Refuse(w, wait, respond.Error)
		return nil, false
	}
	now := s.now()
	hash := persistence.SessionHash(ck.Value)
	ses, acct, err := s.cfg.Store.GetSession(hash, now)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		s.cfg.AuthLimit.Failed(r, authlimit.Session)
		s.clearCookie(w, r)
		respond.Error(w, http.StatusUnauthorized, "authentication_error", "not_authenticated", "", "the session has ended (logged out, expired, or the password changed): log in again")
		return nil, false
	case errors.Is(err, persistence.ErrDisabled):
		s.clearCookie(w, r)
		respond.Error(w, http.StatusForbidden, "permission_error", "account_disabled", "", "this account has been disabled by the gateway's operator")
		return nil, false
	case s.storeFailed(w, err):
		return nil, false
	}
	c := &Current{Account: acct, Session: ses, ID: ck.Value, Hash: hash}
	if changes(r.Method) {
		got := []byte(r.Header.Get(CSRFHeader))
		if len(got) == 0 || subtle.ConstantTimeCompare(got, []byte(c.CSRFToken())) != 1 {
			respond.Error(w, http.StatusForbidden, "permission_error", "csrf_token_invalid", "",
				"a request made with the session cookie must carry its CSRF token in the X-CSRF-Token header (GET /auth/session returns it)")
			return nil, false
		}
	}
	if now.Sub(time.Unix(ses.LastSeen, 0)) >= persistence.SessionTouchEvery {
		if err := s.cfg.Store.TouchSession(hash, now); err != nil {
			s.log.Warn("auth: a session's last-seen time was not updated", "account", acct.ID, "err", err)
		}
	}
	return c, true
}

// RequireSession runs next for a signed-in caller (CurrentFrom has it), and answers as
// Authenticate does otherwise.
func (s *Server) RequireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.Authenticate(w, r)
		if !ok {
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), currentKey{}, c)))
	})
}

func (s *Server) withSession(h func(http.ResponseWriter, *http.Request, *Current)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if c, ok := s.Authenticate(w, r); ok {
			h(w, r, c)
		}
	}
}

// changes reports whether a method changes state (and so needs the CSRF token).
func changes(method string) bool {
	return method != http.MethodGet && method != http.MethodHead && method != http.MethodOptions
}

// HasSessionCookie reports whether r carries a session cookie (of its scheme's name).
func (s *Server) HasSessionCookie(r *http.Request) bool {
	_, err := r.Cookie(s.cookieName(r))
	return err == nil
}

// secure reports whether r's client reached the gateway over HTTPS: this listener's TLS or a
// trusted proxy's (peer.Of), or the operator's https public_url, which covers a TLS proxy
// left out of server.trusted_proxies. A client's own X-Forwarded-Proto counts for nothing.
func (s *Server) secure(r *http.Request) bool {
	return peer.Of(r).HTTPS || strings.HasPrefix(s.cfg.PublicURL(), "https://")
}

// cookieName is the session cookie r's client sends: over HTTPS only the __Host- one is read,
// so a cookie planted over plain HTTP is never taken for a session.
func (s *Server) cookieName(r *http.Request) string {
	if s.secure(r) {
		return SecureCookieName
	}
	return CookieName
}

func (s *Server) setCookie(w http.ResponseWriter, r *http.Request, id string) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(r), Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.secure(r), MaxAge: int(persistence.SessionAbsolute / time.Second)})
}

func (s *Server) clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(r), Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: s.secure(r), MaxAge: -1})
}
