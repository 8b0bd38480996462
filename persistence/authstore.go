package persistence

import "time"

// The single node's sign-in writes: each runs its proposer half, then its apply half in one
// synced batch (cluster/meta.Store has the same methods over the metadata shard).

// Signup registers an e-mail: a new unverified account on plan, or a new password and link
// for an unverified one. It returns the verification token for the mail ("" for a Registered
// e-mail, which gets no link) and what the e-mail was.
func (s *Store) Signup(email, password, plan string, now time.Time) (Account, string, Registration, error) {
	c, token, reg, err := s.PrepareSignup(email, password, plan, now)
	if err != nil || reg == Registered {
		return Account{}, "", reg, err
	}
	a, err := applyMeta(s, func(b *MetaBatch) (Account, error) { return b.Signup(c) })
	return a, token, reg, err
}

// IssueReset makes a password-reset token for the account.
func (s *Store) IssueReset(accountID string, now time.Time) (string, error) {
	c, token := s.PrepareReset(accountID, now)
	_, err := applyMeta(s, func(b *MetaBatch) (Account, error) { return b.IssueToken(c) })
	return token, err
}

// UseToken uses a verification or reset token (newPassword: a reset's).
func (s *Store) UseToken(purpose, token, newPassword string, now time.Time) (Account, error) {
	c, err := s.PrepareTokenUse(purpose, token, newPassword, now)
	if err != nil {
		return Account{}, err
	}
	return applyMeta(s, func(b *MetaBatch) (Account, error) { return b.UseToken(c) })
}

// CreateSession logs the account in: the new session's id, for the cookie.
func (s *Store) CreateSession(accountID string, now time.Time) (string, error) {
	c, id := s.PrepareSession(accountID, now)
	_, err := applyMeta(s, func(b *MetaBatch) (Account, error) { return b.CreateSession(c) })
	return id, err
}

// EndSessions ends one session or all but one of an account.
func (s *Store) EndSessions(c SessionEnd) error {
	_, err := applyMeta(s, func(b *MetaBatch) (Account, error) { return b.EndSessions(c) })
	return err
}

// TouchSession records that the session was used at now.
func (s *Store) TouchSession(hash string, now time.Time) error {
	_, err := applyMeta(s, func(b *MetaBatch) (Account, error) {
		return b.TouchSession(SessionTouch{Hash: hash, At: now.Unix()})
	})
	return err
}

// ChangePassword sets a new password and ends every session of the account but keep.
func (s *Store) ChangePassword(accountID, email, newPassword, keep string) error {
	c, err := s.PreparePasswordChange(accountID, email, newPassword, keep)
	if err != nil {
		return err
	}
	_, err = applyMeta(s, func(b *MetaBatch) (Account, error) { return b.ChangePassword(c) })
	return err
}

// applyMeta runs one apply half in its own batch.
func applyMeta(s *Store, apply func(*MetaBatch) (Account, error)) (Account, error) {
	var a Account
	err := s.UpdateMeta(func(b *MetaBatch) (err error) {
		a, err = apply(b)
		return err
	})
	return a, err
}
