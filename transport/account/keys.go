package account

import (
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/admin"
	"github.com/modelgate/modelgate/transport/respond"
)

// listKeys answers GET /account/v1/keys: every key of the account, revoked ones included
// (the operator's list, scoped).
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	keys, err := s.Store.ListKeys(acct.ID)
	if admin.StoreFailed(w, err) {
		return
	}
	if keys == nil {
		keys = []persistence.Key{}
	}
	respond.JSON(w, http.StatusOK, map[string]any{"object": "list", "data": keys})
}

// createKey answers POST /account/v1/keys {name,models,zdr,limits}: 201 with the secret in
// "key", shown this once.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	s.Admin.ServeCreateKey(w, r, acct.ID, false)
}

// updateKey answers PATCH /account/v1/keys/{id}: rename, models, zdr, limits.
func (s *Server) updateKey(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if id, ok := s.ownKey(w, acct, mux.Vars(r)["id"], "id"); ok {
		s.Admin.ServeUpdateKey(w, r, id)
	}
}

// revokeKey answers DELETE /account/v1/keys/{id}: the key, revoked.
func (s *Server) revokeKey(w http.ResponseWriter, r *http.Request, acct persistence.Account) {
	if id, ok := s.ownKey(w, acct, mux.Vars(r)["id"], "id"); ok {
		s.Admin.ServeRevokeKey(w, r, id)
	}
}

// ownKey answers 404 unless id is one of the account's keys: another account's key id is
// answered as an unknown one, so ids say nothing about other accounts.
func (s *Server) ownKey(w http.ResponseWriter, acct persistence.Account, id, param string) (string, bool) {
	keys, err := s.Store.ListKeys(acct.ID)
	if admin.StoreFailed(w, err) {
		return "", false
	}
	for _, k := range keys {
		if k.ID == id {
			return id, true
		}
	}
	respond.Error(w, http.StatusNotFound, "invalid_request_error", "key_not_found", param, "this account has no key "+quote(id))
	return "", false
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.Quote(s)
}
