package auth

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/respond"
)

type credentials struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// handleSignup is POST /auth/signup: 202 {"status":"verification_sent"} whether the e-mail
// is new (a verification link), unverified (a new link) or registered (a notice instead).
func (s *Server) handleSignup(w http.ResponseWriter, r *http.Request) {
	var in credentials
	if s.cfg.Plan == "" {
		respond.Error(w, http.StatusForbidden, "permission_error", "signup_disabled", "",
			"sign-up is off on this gateway: its config file has no plan named free and sets no auth.signup_plan")
		return
	}
	if !decode(w, r, &in) || s.signup.refused(w, r, in.Email) {
		return
	}
	acct, token, reg, err := s.cfg.Store.Signup(in.Email, in.Password, s.cfg.Plan, s.now())
	if _, taken := errors.AsType[*persistence.EmailTakenError](err); taken {
		err, reg = nil, persistence.Registered // verified or made meanwhile: as if it had been
	}
	if s.storeFailed(w, err) {
		return // bad input: nothing counted, nothing sent
	}
	s.signup.add(r, in.Email)
	if reg == persistence.Registered {
		s.out.send(alreadyRegisteredMail(in.Email, s.cfg.BaseURL+"/dashboard/login"))
	} else {
		s.out.send(verifyMail(acct.Email, s.cfg.BaseURL+"/auth/verify?token="+url.QueryEscape(token)))
	}
	respond.JSON(w, http.StatusAccepted, map[string]string{"status": "verification_sent"})
}

// verifyLink is GET /auth/verify?token=: the link in the mail, answered with a redirect to
// the dashboard's login page saying how it went.
func (s *Server) verifyLink(w http.ResponseWriter, r *http.Request) {
	_, err := s.cfg.Store.UseToken(persistence.TokenVerify, r.URL.Query().Get("token"), "", s.now())
	to := "/dashboard/login?verified=1"
	if reason := persistence.TokenProblem(err); reason != "" {
		to = "/dashboard/login?verify_error=" + reason
	} else if s.storeFailed(w, err) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// verify is POST /auth/verify {token}: 200 {"status":"verified"}, or 400 token_expired,
// token_used or token_invalid.
func (s *Server) verify(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Token string `json:"token"`
	}
	if !decode(w, r, &in) {
		return
	}
	_, err := s.cfg.Store.UseToken(persistence.TokenVerify, in.Token, "", s.now())
	if s.tokenRefused(w, err) || s.storeFailed(w, err) {
		return
	}
	respond.JSON(w, http.StatusOK, map[string]string{"status": "verified"})
}

// tokenRefused answers a refused link token: 400 token_<reason> on param token.
func (s *Server) tokenRefused(w http.ResponseWriter, err error) bool {
	reason := persistence.TokenProblem(err)
	if reason == "" {
		return false
	}
	respond.Error(w, http.StatusBadRequest, "invalid_request_error", "token_"+reason, "token", err.Error())
	return true
}

// sessionAnswer is what login and GET /auth/session return.
type sessionAnswer struct {
	Account   accountView `json:"account"`
	CSRFToken string      `json:"csrf_token"`
}

// handleLogin is POST /auth/login. A wrong e-mail and a wrong password get one answer, and
// take as long: an unknown e-mail is checked against a dummy hash, and the failure waits the
// e-mail's delay either way.
func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var in credentials
	if !decode(w, r, &in) || s.passwordRefused(w, r, in.Email) || s.storeFailed(w, persistence.CheckEmail(in.Email)) {
		return
	}
	acct, login, ok, err := s.checkPassword(in.Email, in.Password)
	if s.storeFailed(w, err) {
		return
	}
	if !ok {
		s.passwordFailed(r, in.Email)
		respond.Error(w, http.StatusUnauthorized, "authentication_error", "invalid_credentials", "", "the e-mail or the password is wrong")
		return
	}
	switch {
	case !login.Verified:
		respond.Error(w, http.StatusForbidden, "permission_error", "email_not_verified", "email",
			"the e-mail address is not verified yet: open the link in the verification mail (signing up again sends a new one)")
		return
	case acct.Disabled:
		respond.Error(w, http.StatusForbidden, "permission_error", "account_disabled", "", "this account has been disabled by the gateway's operator")
		return
	}
	id, err := s.cfg.Store.CreateSession(acct.ID, s.now())
	if errors.Is(err, persistence.ErrDisabled) { // disabled since the check above
		respond.Error(w, http.StatusForbidden, "permission_error", "account_disabled", "", "this account has been disabled by the gateway's operator")
		return
	}
	if s.storeFailed(w, err) {
		return
	}
	s.setCookie(w, r, id)
	respond.JSON(w, http.StatusOK, sessionAnswer{Account: viewOf(acct), CSRFToken: persistence.CSRFToken(id)})
}

// passwordRefused answers 429 to a password check from a client locked out for the e-mail,
// or for every e-mail, or that failed too many checks of any kind (authlimit).
func (s *Server) passwordRefused(w http.ResponseWriter, r *http.Request, email string) bool {
	if wait := s.cfg.AuthLimit.Wait(r, authlimit.Password); wait > 0 {
		authlimit.Refuse(w, wait, respond.Error)
		return true
	}
	return s.login.refused(w, r, email)
}

// passwordFailed counts a wrong password for the e-mail and the client, and waits the
// e-mail's delay (or until the client leaves).
func (s *Server) passwordFailed(r *http.Request, email string) {
	s.cfg.AuthLimit.Failed(r, authlimit.Password)
	s.sleep(r.Context(), s.login.failed(r, email))
}

// checkPassword finds the login of email and checks password against it, always paying for
// one argon2id check. ok is false for no account, no login or a wrong password.
func (s *Server) checkPassword(email, password string) (persistence.Account, persistence.Login, bool, error) {
	acct, err := s.cfg.Store.AccountByEmail(email)
	var login persistence.Login
	if err == nil {
		login, err = s.cfg.Store.GetLogin(acct.ID)
	}
	ok := persistence.VerifyPassword(login.PasswordHash, password) && err == nil
	if errors.Is(err, persistence.ErrNotFound) {
		err = nil
	}
	return acct, login, ok, err
}

// logout is POST /auth/logout: the session ends, the cookie is cleared.
func (s *Server) logout(w http.ResponseWriter, r *http.Request, c *Current) {
	if s.storeFailed(w, s.cfg.Store.EndSessions(persistence.SessionEnd{AccountID: c.Account.ID, Hash: c.Hash})) {
		return
	}
	s.clearCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
}

// session is GET /auth/session: the account and the CSRF token.
func (s *Server) session(w http.ResponseWriter, _ *http.Request, c *Current) {
	respond.JSON(w, http.StatusOK, sessionAnswer{Account: viewOf(c.Account), CSRFToken: c.CSRFToken()})
}
