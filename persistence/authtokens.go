package persistence

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"
)

// Token purposes and lifetimes (docs/decisions.md, "Link tokens").
const (
	TokenVerify = "verify"
	TokenReset  = "reset"

	VerifyTokenTTL = 24 * time.Hour
	ResetTokenTTL  = time.Hour
)

// AuthToken is a single-use link token (verification or password reset), stored under the
// SHA-256 of the token: the mail has the token, the store only its hash. A used one stays, so
// a second click is told "used" rather than "invalid".
type AuthToken struct {
	Purpose   string `msgpack:"purpose"`
	AccountID string `msgpack:"account_id"`
	ExpiresAt int64  `msgpack:"expires_at"` // unix seconds
	UsedAt    int64  `msgpack:"used_at"`    // 0 = not used
}

// NewToken is a decided token (its hash and record).
type NewToken struct {
	Hash  string    `msgpack:"hash"` // lower-case hex SHA-256 of the token
	Token AuthToken `msgpack:"token"`
}

// TokenUse is a decided use of a token (PrepareTokenUse's result): the hash of the token
// presented, when (the proposer's clock: expiry is judged by it, the same on every replica),
// and for a reset the new password's hash.
type TokenUse struct {
	Hash         string `msgpack:"hash"`
	Purpose      string `msgpack:"purpose"`
	At           int64  `msgpack:"at"`
	PasswordHash string `msgpack:"password_hash,omitempty"`
}

// Why a token was refused: TokenProblem's answers.
const (
	TokenInvalid = "invalid" // no such token, or one for another purpose
	TokenUsed    = "used"    // used already, or superseded by a later sign-up
	TokenExpired = "expired"
)

// tokenRefusal is a token's refusal: ErrInvalid on field "token", the reason in ID.
func tokenRefusal(reason string) error {
	msg := map[string]string{
		TokenInvalid: "the link is not valid: copy the whole link from the mail, or ask for a new one",
		TokenUsed:    "the link has been used already (or a newer one was sent); ask for a new one if you still need it",
		TokenExpired: "the link has expired; ask for a new one",
	}[reason]
	return &Error{Kind: ErrInvalid, What: "token", ID: reason, Field: "token", Msg: msg}
}

// TokenProblem is why err refused a token (TokenInvalid, TokenUsed, TokenExpired), or "".
func TokenProblem(err error) string {
	if e, ok := errors.AsType[*Error](err); ok && e.What == "token" && errors.Is(e, ErrInvalid) {
		return e.ID
	}
	return ""
}

// maxTokenLen bounds a token as presented (ours are 43 characters).
const maxTokenLen = 128

// newToken draws a token of 256 random bits (base64url, 43 characters) for purpose.
func newToken(purpose, accountID string, now time.Time) (NewToken, string) {
	var b [32]byte
	rand.Read(b[:]) // never fails (it panics instead, since Go 1.24)
	secret := base64.RawURLEncoding.EncodeToString(b[:])
	ttl := VerifyTokenTTL
	if purpose == TokenReset {
		ttl = ResetTokenTTL
	}
	return NewToken{Hash: secretHash(secret), Token: AuthToken{Purpose: purpose, AccountID: accountID, ExpiresAt: now.Add(ttl).Unix()}}, secret
}

// PrepareReset is a forgotten password's proposer half: a reset token for the account.
func (s *Store) PrepareReset(accountID string, now time.Time) (NewToken, string) {
	return newToken(TokenReset, accountID, now)
}

// IssueToken is PrepareReset's apply half: the account must exist.
func (m *MetaBatch) IssueToken(c NewToken) (Account, error) {
	a, err := getAccountIn(m.b, c.Token.AccountID)
	if err != nil {
		return Account{}, err
	}
	return a, m.putToken(c)
}

func (m *MetaBatch) putToken(c NewToken) error {
	if err := m.checkToken(c); err != nil {
		return err
	}
	return putMsgpack(m.b, dbKey(nsAuthToken, c.Hash), c.Token)
}

// checkToken refuses a token no proposer makes, or whose hash is taken.
func (m *MetaBatch) checkToken(c NewToken) error {
	t := c.Token
	if !validSecretHash(c.Hash) || t.UsedAt != 0 || t.ExpiresAt <= 0 || t.Purpose != TokenVerify && t.Purpose != TokenReset {
		return invalidf("token", "token of purpose %q is not one a proposer makes", t.Purpose)
	}
	if taken, err := hasIn(m.b, dbKey(nsAuthToken, c.Hash)); err != nil {
		return fmt.Errorf("persistence: issue token: %w", err)
	} else if taken {
		return conflictf("token", "token hash is taken")
	}
	return nil
}

// PrepareTokenUse is a token use's proposer half: the token's hash, the time, and for a
// reset the new password, checked and hashed.
func (s *Store) PrepareTokenUse(purpose, token, newPassword string, now time.Time) (TokenUse, error) {
	if token == "" || len(token) > maxTokenLen || !printableASCII(token) {
		return TokenUse{}, tokenRefusal(TokenInvalid)
	}
	c := TokenUse{Hash: secretHash(token), Purpose: purpose, At: now.Unix()}
	if purpose == TokenReset {
		email := "" // the account's, when this replica knows the token already
		var t AuthToken
		if getMsgpackIn(s.db, dbKey(nsAuthToken, c.Hash), &t) == nil {
			if a, err := s.GetAccount(t.AccountID); err == nil {
				email = a.Email
			}
		}
		if err := CheckPassword("password", newPassword, email); err != nil {
			return TokenUse{}, err
		}
		c.PasswordHash = HashPassword(newPassword)
	}
	return c, nil
}

// UseToken is a token use's apply half: it marks the token used and does what it is for —
// verifies the e-mail, or sets the new password (verifying the e-mail too: the mail reached
// its owner) and ends every session of the account. Replicas judge expiry by c.At.
func (m *MetaBatch) UseToken(c TokenUse) (Account, error) {
	var t AuthToken
	k := dbKey(nsAuthToken, c.Hash)
	if err := getMsgpackIn(m.b, k, &t); errors.Is(err, ErrNotFound) || err == nil && t.Purpose != c.Purpose {
		return Account{}, tokenRefusal(TokenInvalid)
	} else if err != nil {
		return Account{}, fmt.Errorf("persistence: use token: %w", err)
	}
	switch {
	case t.UsedAt != 0:
		return Account{}, tokenRefusal(TokenUsed)
	case c.At >= t.ExpiresAt:
		return Account{}, tokenRefusal(TokenExpired)
	case c.Purpose == TokenReset && !validPasswordHash(c.PasswordHash):
		return Account{}, invalidf("password", "reset without a password hash a proposer makes")
	}
	a, err := getAccountIn(m.b, t.AccountID)
	if err != nil {
		return Account{}, err
	}
	l, err := getLoginIn(m.b, a.ID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return Account{}, err
	}
	switch c.Purpose {
	case TokenVerify:
		if err != nil || l.PendingVerify != c.Hash {
			return Account{}, tokenRefusal(TokenUsed)
		}
	case TokenReset:
		// An account the operator made has no login yet: the reset gives it one.
		l = Login{AccountID: a.ID, PasswordHash: c.PasswordHash}
		if err := m.endSessions(a.ID, ""); err != nil {
			return Account{}, err
		}
	}
	l.Verified, l.PendingVerify = true, ""
	t.UsedAt = c.At
	if err := putMsgpack(m.b, k, t); err != nil {
		return Account{}, fmt.Errorf("persistence: use token: %w", err)
	}
	if err := putMsgpack(m.b, dbKey(nsLogin, a.ID), l); err != nil {
		return Account{}, fmt.Errorf("persistence: use token: %w", err)
	}
	return a, nil
}
