package persistence

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Session lifetimes (docs/decisions.md, "Sessions"): a session ends after SessionIdle without a
// request or SessionAbsolute after its login, whichever comes first. Its last-seen time is
// written at most once per SessionTouchEvery, so browsing is not a replicated write per
// request.
const (
	SessionIdle       = 7 * 24 * time.Hour
	SessionAbsolute   = 30 * 24 * time.Hour
	SessionTouchEvery = time.Hour
)

// Session is a signed-in browser, stored under the SHA-256 of its id (the cookie's value).
type Session struct {
	AccountID string `msgpack:"account_id"`
	CreatedAt int64  `msgpack:"created_at"` // unix seconds
	LastSeen  int64  `msgpack:"last_seen"`
}

// Expired reports whether the session has ended by now.
func (s Session) Expired(now time.Time) bool {
	t := now.Unix()
	return t >= s.CreatedAt+int64(SessionAbsolute/time.Second) || t >= s.LastSeen+int64(SessionIdle/time.Second)
}

// NewSession is a decided login (PrepareSession's result).
type NewSession struct {
	Hash    string  `msgpack:"hash"` // hex SHA-256 of the session id
	Session Session `msgpack:"session"`
}

// SessionEnd ends sessions of an account (PrepareSessionEnd's result): the one with Hash, or,
// when Hash is "", every one but Keep ("" keeps none).
type SessionEnd struct {
	AccountID string `msgpack:"account_id"`
	Hash      string `msgpack:"hash,omitempty"`
	Keep      string `msgpack:"keep,omitempty"`
}

// SessionTouch moves a session's last-seen time to At (unix seconds).
type SessionTouch struct {
	Hash string `msgpack:"hash"`
	At   int64  `msgpack:"at"`
}

// PasswordChange is a decided change of password: the new hash, and the one session that
// stays (the one that asked).
type PasswordChange struct {
	AccountID    string `msgpack:"account_id"`
	PasswordHash string `msgpack:"password_hash"`
	Keep         string `msgpack:"keep,omitempty"`
}

// errSessionGone is the refusal of a session id that is not, or no longer, stored.
var errSessionGone = &Error{Kind: ErrNotFound, What: "session",
	Msg: "the session has ended (logged out, expired, or ended by a password change or reset)"}

// SessionHash is the hex SHA-256 a session is stored under.
func SessionHash(id string) string { return secretHash(id) }

// CSRFToken is the CSRF token of a session: derived from its id, so it is never stored and
// does not reveal the id (a different SHA-256 input than the record's key).
func CSRFToken(sessionID string) string {
	sum := sha256.Sum256([]byte("modelgate-csrf\x00" + sessionID))
	return hex.EncodeToString(sum[:])
}

// PrepareSession is a login's proposer half: a session id of 256 random bits (returned
// beside the command, which holds its hash) and the times.
func (s *Store) PrepareSession(accountID string, now time.Time) (NewSession, string) {
	var b [32]byte
	rand.Read(b[:]) // never fails (it panics instead, since Go 1.24)
	id := base64.RawURLEncoding.EncodeToString(b[:])
	t := now.Unix()
	return NewSession{Hash: SessionHash(id), Session: Session{AccountID: accountID, CreatedAt: t, LastSeen: t}}, id
}

// CreateSession is a login's apply half: the account must exist, be enabled and have a
// verified login. The account's sessions that had expired by then are dropped.
func (m *MetaBatch) CreateSession(c NewSession) (Account, error) {
	if !validSecretHash(c.Hash) || c.Session.CreatedAt <= 0 || c.Session.LastSeen != c.Session.CreatedAt {
		return Account{}, invalidf("session", "session is not one a proposer makes")
	}
	a, err := getAccountIn(m.b, c.Session.AccountID)
	if err != nil {
		return Account{}, err
	}
	if a.Disabled {
		return Account{}, disabledErr(a.ID)
	}
	if l, err := getLoginIn(m.b, a.ID); err != nil || !l.Verified {
		return Account{}, invalidf("email", "the e-mail of account %s is not verified", a.ID)
	}
	k := dbKey(nsSession, c.Hash)
	if taken, err := hasIn(m.b, k); err != nil {
		return Account{}, fmt.Errorf("persistence: create session: %w", err)
	} else if taken {
		return Account{}, conflictf("session", "session id is taken")
	}
	at := time.Unix(c.Session.CreatedAt, 0)
	if err := m.endSessionsWhere(a.ID, func(_ string, s Session) bool { return s.Expired(at) }); err != nil {
		return Account{}, err
	}
	if err := putMsgpack(m.b, k, c.Session); err != nil {
		return Account{}, fmt.Errorf("persistence: create session: %w", err)
	}
	return a, m.b.Set(dbKey(nsAcctSession, a.ID, "/", c.Hash), nil, nil)
}

// GetSession returns the session stored under hash if it has not ended by now
// (ErrNotFound otherwise), with its account.
func (s *Store) GetSession(hash string, now time.Time) (Session, Account, error) {
	var ses Session
	if !validSecretHash(hash) {
		return Session{}, Account{}, errSessionGone
	}
	if err := getMsgpackIn(s.db, dbKey(nsSession, hash), &ses); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Session{}, Account{}, errSessionGone
		}
		return Session{}, Account{}, fmt.Errorf("persistence: session: %w", err)
	}
	if ses.Expired(now) {
		return Session{}, Account{}, errSessionGone
	}
	a, err := s.GetAccount(ses.AccountID)
	if err != nil {
		return Session{}, Account{}, err
	}
	if a.Disabled { // its sessions ended with the disable; this is belt and braces
		return Session{}, Account{}, disabledErr(a.ID)
	}
	return ses, a, nil
}

// EndSessions is the apply half of a logout (c.Hash) or of ending the other sessions.
func (m *MetaBatch) EndSessions(c SessionEnd) (Account, error) {
	a, err := getAccountIn(m.b, c.AccountID)
	if err != nil {
		return Account{}, err
	}
	if c.Hash != "" {
		return a, m.endSessionsWhere(a.ID, func(hash string, _ Session) bool { return hash == c.Hash })
	}
	return a, m.endSessions(a.ID, c.Keep)
}

// TouchSession is a session's last-seen update, apply half; a session gone is left gone.
func (m *MetaBatch) TouchSession(c SessionTouch) (Account, error) {
	var ses Session
	k := dbKey(nsSession, c.Hash)
	if err := getMsgpackIn(m.b, k, &ses); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Account{}, errSessionGone
		}
		return Account{}, err
	}
	a, err := getAccountIn(m.b, ses.AccountID)
	if err != nil || c.At <= ses.LastSeen {
		return a, err
	}
	ses.LastSeen = c.At
	return a, putMsgpack(m.b, k, ses)
}

// PreparePasswordChange is a change of password's proposer half: the caller has checked
// the current password; the new one is checked and hashed here.
func (s *Store) PreparePasswordChange(accountID, email, newPassword, keepSession string) (PasswordChange, error) {
	if err := CheckPassword("new_password", newPassword, email); err != nil {
		return PasswordChange{}, err
	}
	return PasswordChange{AccountID: accountID, PasswordHash: HashPassword(newPassword), Keep: keepSession}, nil
}

// ChangePassword is a change of password's apply half: the new hash, and every session of
// the account but c.Keep ended.
func (m *MetaBatch) ChangePassword(c PasswordChange) (Account, error) {
	if !validPasswordHash(c.PasswordHash) {
		return Account{}, invalidf("new_password", "password hash is not one a proposer makes")
	}
	a, err := getAccountIn(m.b, c.AccountID)
	if err != nil {
		return Account{}, err
	}
	l, err := getLoginIn(m.b, a.ID)
	if err != nil {
		return Account{}, err
	}
	l.PasswordHash = c.PasswordHash
	if err := putMsgpack(m.b, dbKey(nsLogin, a.ID), l); err != nil {
		return Account{}, err
	}
	return a, m.endSessions(a.ID, c.Keep)
}

// endSessions ends every session of the account except keep ("" keeps none).
func (m *MetaBatch) endSessions(accountID, keep string) error {
	return m.endSessionsWhere(accountID, func(hash string, _ Session) bool { return hash != keep })
}

// endSessionsWhere ends the account's sessions that end picks, in hash order.
func (m *MetaBatch) endSessionsWhere(accountID string, end func(hash string, s Session) bool) error {
	prefix := dbKey(nsAcctSession, accountID, "/")
	var hashes []string
	err := scanPrefixIn(m.b, prefix, func(k, _ []byte) (bool, error) {
		hashes = append(hashes, string(k[len(prefix):]))
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("persistence: sessions of %s: %w", accountID, err)
	}
	for _, h := range hashes {
		var ses Session
		if err := getMsgpackIn(m.b, dbKey(nsSession, h), &ses); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("persistence: session of %s: %w", accountID, err)
		}
		if !end(h, ses) {
			continue
		}
		if err := m.b.Delete(dbKey(nsSession, h), nil); err != nil {
			return err
		}
		if err := m.b.Delete(dbKey(nsAcctSession, accountID, "/", h), nil); err != nil {
			return err
		}
	}
	return nil
}
