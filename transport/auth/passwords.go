package auth

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/respond"
)

// forgotPassword is POST /auth/password/forgot {email}: 202 whether or not the e-mail has an
// account; one that has (and is not disabled) gets a reset link, valid for an hour.
func (s *Server) forgotPassword(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Email string `json:"email"`
	}
	if !decode(w, r, &in) || s.forgot.refused(w, r, in.Email) {
		return
	}
	if s.storeFailed(w, persistence.CheckEmail(in.Email)) {
		return
	}
	s.forgot.add(r, in.Email)
	acct, err := s.cfg.Store.AccountByEmail(in.Email)
	if err == nil && !acct.Disabled {
		var token string
		if token, err = s.cfg.Store.IssueReset(acct.ID, s.now()); err == nil {
			s.out.send(resetMail(acct.Email, s.cfg.BaseURL+"/dashboard/reset?token="+url.QueryEscape(token)))
		}
	}
	if err != nil && !errors.Is(err, persistence.ErrNotFound) {
		// Logged, not answered: the answer must not differ for a registered e-mail.
		s.log.Error("auth: a password reset was not issued", "err", err)
	}
	respond.JSON(w, http.StatusAccepted, map[string]string{"status": "reset_sent"})
}

// resetPassword is POST /auth/password/reset {token,password}: 204, every session of the
// account ended.
func (s *Server) resetPassword(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Token    string `json:"token"`
		Password string `json:"password"`
	}
	if !decode(w, r, &in) {
		return
	}
	acct, err := s.cfg.Store.UseToken(persistence.TokenReset, in.Token, in.Password, s.now())
	if s.tokenRefused(w, err) || s.storeFailed(w, err) {
		return
	}
	s.out.send(passwordChangedMail(acct.Email, s.cfg.BaseURL+"/dashboard/forgot"))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}

// changePassword is POST /auth/password/change {current_password,new_password}: 204, the
// account's other sessions ended. A wrong current password counts as a failed login.
func (s *Server) changePassword(w http.ResponseWriter, r *http.Request, c *Current) {
	var in struct {
		Current string `json:"current_password"`
		New     string `json:"new_password"`
	}
	if !decode(w, r, &in) || s.passwordRefused(w, r, c.Account.Email) {
		return
	}
	login, err := s.cfg.Store.GetLogin(c.Account.ID)
	if s.storeFailed(w, err) {
		return
	}
	if !persistence.VerifyPassword(login.PasswordHash, in.Current) {
		s.passwordFailed(r, c.Account.Email)
		respond.Error(w, http.StatusBadRequest, "invalid_request_error", "invalid_current_password", "current_password", "current_password is wrong")
		return
	}
	if s.storeFailed(w, s.cfg.Store.ChangePassword(c.Account.ID, c.Account.Email, in.New, c.Hash)) {
		return
	}
	s.out.send(passwordChangedMail(c.Account.Email, s.cfg.BaseURL+"/dashboard/forgot"))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
}
