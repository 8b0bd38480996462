package persistence

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Sign-in state of accounts, kept in the metadata key space so a cluster
// replicates it like accounts and keys:
//
//	login/<account id>                 → Login
//	authtoken/<hex sha256(token)>      → AuthToken (verification and reset links)
//	session/<hex sha256(session id)>   → Session
//	acctsess/<account id>/<hex sha256> → nothing: the account's sessions, to end them all
//	acctoff/<account id>               → nothing: the account is disabled (Account.Disabled's
//	                                     index, read by the key check without decoding)
//
// Every write has a proposer half (Store.Prepare…: clock, randomness, hashes) and a
// MetaBatch apply half, as metabatch.go describes.
const (
	nsLogin       = "login/"
	nsAuthToken   = "authtoken/"
	nsSession     = "session/"
	nsAcctSession = "acctsess/"
	nsAcctOff     = "acctoff/"
)

var authNamespaces = []string{nsLogin, nsAuthToken, nsSession, nsAcctSession, nsAcctOff}

// ErrDisabled is what errors about a disabled account match (errors.Is): the key check's
// refusal of its keys, a login's, a new session's.
var ErrDisabled = errors.New("account disabled")

func disabledErr(accountID string) error {
	return &Error{Kind: ErrDisabled, What: "account", ID: accountID,
		Msg: fmt.Sprintf("the account %s is disabled by the operator", accountID)}
}

// Login is how a person signs in to an account: the account's e-mail with a password.
type Login struct {
	AccountID    string `msgpack:"account_id"`
	PasswordHash string `msgpack:"password_hash"` // argon2id, PHC form (password.go)
	Verified     bool   `msgpack:"verified"`
	// PendingVerify is the hash of the one verification token that may still verify the
	// e-mail: a repeated sign-up supersedes the links sent before it.
	PendingVerify string `msgpack:"pending_verify,omitempty"`
}

// NewSignup is a decided sign-up (PrepareSignup's result): a new unverified account, or a
// new password and verification token for an unverified one with the same e-mail.
type NewSignup struct {
	Account      *NewAccount `msgpack:"account,omitempty"` // nil: AccountID is reused
	AccountID    string      `msgpack:"account_id"`
	Email        string      `msgpack:"email"`
	PasswordHash string      `msgpack:"password_hash"`
	Token        NewToken    `msgpack:"token"`
}

// AccountState is a decided disable or enable (PrepareAccountState's result).
type AccountState struct {
	AccountID string `msgpack:"account_id"`
	Disabled  bool   `msgpack:"disabled"`
}

// Registration is what the proposer knows of an e-mail before a sign-up.
type Registration int

// What a sign-up met.
const (
	Unregistered Registration = iota // no account has the e-mail
	Unverified                       // an account with a login not verified yet: reused
	Registered                       // a verified login, or an account the operator made
)

// PrepareSignup is a sign-up's proposer half: it checks the e-mail and password, hashes the
// password, and decides a new account (plan) or the reuse of an unverified one. A Registered
// e-mail gets no command: the caller answers as for any other and sends no link.
func (s *Store) PrepareSignup(email, password, plan string, now time.Time) (NewSignup, string, Registration, error) {
	if err := validateAccount(email, plan); err != nil {
		return NewSignup{}, "", 0, err
	}
	if err := CheckPassword("password", password, email); err != nil {
		return NewSignup{}, "", 0, err
	}
	hash := HashPassword(password) // before the lock: it takes tens of milliseconds
	tok, secret := newToken(TokenVerify, "", now)
	s.mu.Lock()
	defer s.mu.Unlock()
	holder, err := s.emailHolder(email)
	if err != nil {
		return NewSignup{}, "", 0, fmt.Errorf("persistence: sign up: %w", err)
	}
	c := NewSignup{AccountID: holder, Email: email, PasswordHash: hash, Token: tok}
	if holder == "" {
		a, err := s.prepareAccountLocked(email, plan)
		if err != nil {
			return NewSignup{}, "", 0, err
		}
		c.Account, c.AccountID = &a, a.Account.ID
		c.Token.Token.AccountID = c.AccountID
		return c, secret, Unregistered, nil
	}
	l, err := getLoginIn(s.db, holder)
	if errors.Is(err, ErrNotFound) || err == nil && l.Verified {
		return NewSignup{}, "", Registered, nil
	}
	if err != nil {
		return NewSignup{}, "", 0, err
	}
	c.Token.Token.AccountID = holder
	return c, secret, Unverified, nil
}

// Signup is a sign-up's apply half. It refuses (EmailTakenError) an e-mail whose account
// has become verified, or made by the operator, since its proposer looked.
func (m *MetaBatch) Signup(c NewSignup) (Account, error) {
	if !validPasswordHash(c.PasswordHash) || c.Token.Token.Purpose != TokenVerify || c.Token.Token.AccountID != c.AccountID {
		return Account{}, invalidf("signup", "sign-up of %q is not one a proposer makes", c.Email)
	}
	if err := m.checkToken(c.Token); err != nil { // before anything is written: a refusal writes nothing
		return Account{}, err
	}
	var a Account
	var err error
	if c.Account != nil {
		if c.Account.Account.ID != c.AccountID || c.Account.Account.Email != c.Email {
			return Account{}, invalidf("signup", "sign-up of %q names two accounts", c.Email)
		}
		if a, err = m.CreateAccount(*c.Account); err != nil {
			return Account{}, err
		}
	} else {
		if a, err = getAccountIn(m.b, c.AccountID); err != nil {
			return Account{}, err
		}
		l, err := getLoginIn(m.b, c.AccountID)
		if errors.Is(err, ErrNotFound) || err == nil && l.Verified || !strings.EqualFold(a.Email, c.Email) {
			return Account{}, &EmailTakenError{Email: c.Email, AccountID: a.ID}
		}
		if err != nil {
			return Account{}, err
		}
	}
	if err := m.putToken(c.Token); err != nil {
		return Account{}, err
	}
	l := Login{AccountID: a.ID, PasswordHash: c.PasswordHash, PendingVerify: c.Token.Hash}
	if err := putMsgpack(m.b, dbKey(nsLogin, a.ID), l); err != nil {
		return Account{}, fmt.Errorf("persistence: sign up %s: %w", a.ID, err)
	}
	return a, nil
}

// GetLogin returns the login of an account (ErrNotFound when it has none).
func (s *Store) GetLogin(accountID string) (Login, error) { return getLoginIn(s.db, accountID) }

func getLoginIn(r pebble.Reader, accountID string) (Login, error) {
	var l Login
	if err := getMsgpackIn(r, dbKey(nsLogin, accountID), &l); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Login{}, notFound("login", accountID)
		}
		return Login{}, fmt.Errorf("persistence: login of %q: %w", accountID, err)
	}
	return l, nil
}

// AccountByEmail returns the account with this e-mail (ignoring case), ErrNotFound if none.
func (s *Store) AccountByEmail(email string) (Account, error) {
	id, err := s.emailHolder(email)
	if err != nil {
		return Account{}, fmt.Errorf("persistence: account by e-mail: %w", err)
	}
	if id == "" {
		return Account{}, &Error{Kind: ErrNotFound, What: "account", Msg: "no account has this e-mail"}
	}
	return s.GetAccount(id)
}

// PrepareAccountState is SetAccountDisabled's proposer half.
func (s *Store) PrepareAccountState(id string, disabled bool) AccountState {
	return AccountState{AccountID: id, Disabled: disabled}
}

// SetAccountDisabled disables or enables an account: a disabled one's keys fail the key
// check and its sessions end (an enable does not bring them back).
func (s *Store) SetAccountDisabled(id string, disabled bool) (Account, error) {
	c := s.PrepareAccountState(id, disabled)
	return applyMeta(s, func(b *MetaBatch) (Account, error) { return b.SetAccountDisabled(c) })
}

// SetAccountDisabled is SetAccountDisabled's apply half.
func (m *MetaBatch) SetAccountDisabled(c AccountState) (Account, error) {
	a, err := getAccountIn(m.b, c.AccountID)
	if err != nil {
		return Account{}, err
	}
	if a.Disabled == c.Disabled {
		return a, nil
	}
	a.Disabled = c.Disabled
	if err := m.putAccount(a, 0); err != nil {
		return Account{}, fmt.Errorf("persistence: disable %s: %w", a.ID, err)
	}
	off := dbKey(nsAcctOff, a.ID)
	if !c.Disabled {
		return a, m.b.Delete(off, nil)
	}
	if err := m.b.Set(off, nil, nil); err != nil {
		return Account{}, err
	}
	return a, m.endSessions(a.ID, "")
}

// accountDisabledIn reports whether the account is disabled, by its acctoff entry.
func accountDisabledIn(r pebble.Reader, accountID string) (bool, error) {
	return hasIn(r, dbKey(nsAcctOff, accountID))
}

// CheckEmail is the e-mail check accounts get, for a caller that looks one up: nil, or the
// refusal naming field "email".
func CheckEmail(email string) error { return validateEmail(email) }
