package meta

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// The sign-in writes in cluster mode: the proposer halves run on this node (tokens, session
// ids and passwords never leave it: commands carry their hashes), the shard applies them, and
// each returns once this node has applied it. Reads (sessions, logins) come from this node's
// replica, so a session ended on another node is refused here once this node has applied
// that entry, normally within milliseconds. A record the replica does not have yet (a session
// made on another node a moment ago) is looked for once more after a linearizable read has
// brought the replica up to the shard's commit index (fresh): a login on one node is known
// on every other at once, and only a miss pays the round. A login's own record (password,
// verification) is always read after that round (current), as a key is: a password changed
// or an address verified on one node counts on the next login anywhere.

// Signup proposes a sign-up (persistence.Store.Signup).
func (s *Store) Signup(email, password, plan string, now time.Time) (persistence.Account, string, persistence.Registration, error) {
	c, token, reg, err := s.local.PrepareSignup(email, password, plan, now)
	if err != nil || reg == persistence.Registered {
		return persistence.Account{}, "", reg, err
	}
	a, err := account(s.propose(Command{Kind: KindSignup, Signup: &c}))
	return a, token, reg, err
}

// IssueReset proposes a password-reset token.
func (s *Store) IssueReset(accountID string, now time.Time) (string, error) {
	c, token := s.local.PrepareReset(accountID, now)
	_, err := account(s.propose(Command{Kind: KindIssueToken, Token: &c}))
	return token, err
}

// UseToken proposes the use of a token: used on one node, it is used everywhere.
func (s *Store) UseToken(purpose, token, newPassword string, now time.Time) (persistence.Account, error) {
	c, err := s.local.PrepareTokenUse(purpose, token, newPassword, now)
	if err != nil {
		return persistence.Account{}, err
	}
	return account(s.propose(Command{Kind: KindUseToken, TokenUse: &c}))
}

// CreateSession proposes a new session and returns its id.
func (s *Store) CreateSession(accountID string, now time.Time) (string, error) {
	c, id := s.local.PrepareSession(accountID, now)
	if _, err := account(s.propose(Command{Kind: KindCreateSession, Session: &c})); err != nil {
		return "", err
	}
	return id, nil
}

// EndSessions proposes the end of sessions.
func (s *Store) EndSessions(c persistence.SessionEnd) error {
	_, err := account(s.propose(Command{Kind: KindEndSessions, SessionEnd: &c}))
	return err
}

// TouchSession proposes a session's new last-seen time.
func (s *Store) TouchSession(hash string, now time.Time) error {
	_, err := account(s.propose(Command{Kind: KindTouchSession, Touch: &persistence.SessionTouch{Hash: hash, At: now.Unix()}}))
	return err
}

// ChangePassword proposes a new password, ending the account's other sessions.
func (s *Store) ChangePassword(accountID, email, newPassword, keep string) error {
	c, err := s.local.PreparePasswordChange(accountID, email, newPassword, keep)
	if err != nil {
		return err
	}
	_, err = account(s.propose(Command{Kind: KindChangePassword, Password: &c}))
	return err
}

// SetAccountDisabled proposes a disable or enable; once applied, every node's key check
// refuses the account's keys (the check reads the shard linearizably).
func (s *Store) SetAccountDisabled(id string, disabled bool) (persistence.Account, error) {
	c := s.local.PrepareAccountState(id, disabled)
	return account(s.propose(Command{Kind: KindAccountState, State: &c}))
}

// AccountByEmail reads this node's replica (fresh).
func (s *Store) AccountByEmail(email string) (persistence.Account, error) {
	return fresh(s, func() (persistence.Account, error) { return s.local.AccountByEmail(email) })
}

// GetLogin reads this node's replica once it has applied everything the shard committed
// before the call (current): a login checks the password and the verification as they are
// now, wherever they were changed, as a key check sees a revocation.
func (s *Store) GetLogin(accountID string) (persistence.Login, error) {
	return current(s, func() (persistence.Login, error) { return s.local.GetLogin(accountID) })
}

// GetSession reads this node's replica (fresh).
func (s *Store) GetSession(hash string, now time.Time) (persistence.Session, persistence.Account, error) {
	type found struct {
		ses  persistence.Session
		acct persistence.Account
	}
	f, err := fresh(s, func() (found, error) {
		ses, acct, err := s.local.GetSession(hash, now)
		return found{ses, acct}, err
	})
	return f.ses, f.acct, err
}

// fresh reads this node's replica with read; when the record is not found there, it reads
// again once the replica has applied every command the shard committed before now (a
// barrier read). A barrier that fails (no quorum in time) leaves the first answer standing.
func fresh[T any](s *Store, read func() (T, error)) (T, error) {
	v, err := read()
	if !errors.Is(err, persistence.ErrNotFound) {
		return v, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Attempt)
	defer cancel()
	if s.sync(ctx) != nil {
		return v, err
	}
	return read()
}

// current reads this node's replica with read while this node holds its read lease (every
// write that returned is applied here), else after a barrier: everything the shard committed
// before the call is applied first. No barrier in time (no quorum): nothing is read, and the
// error is persistence.ErrUnavailable.
func current[T any](s *Store, read func() (T, error)) (T, error) {
	if s.Lease != nil && s.Lease.Valid() {
		return read()
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Attempt)
	defer cancel()
	if err := s.sync(ctx); err != nil {
		var zero T
		return zero, fmt.Errorf("%w: the metadata shard did not confirm the current record: %w", persistence.ErrUnavailable, err)
	}
	return read()
}

// sync returns once this node's replica has applied every command the shard committed
// before it was called (a ReadIndex round answered with nothing but the index).
func (s *Store) sync(ctx context.Context) error {
	q, err := Query{Sync: true}.Encode()
	if err != nil {
		return err
	}
	_, err = s.rep.Read(ctx, s.shard, q)
	return err
}
