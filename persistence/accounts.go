package persistence

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// Account is a billing identity that owns API keys.
type Account struct {
	ID        string `msgpack:"id" json:"id"` // "acct_" + 20 random base62
	Email     string `msgpack:"email" json:"email"`
	Plan      string `msgpack:"plan" json:"plan"`
	CreatedAt int64  `msgpack:"created_at" json:"created_at"` // unix seconds UTC
}

const (
	accountIDPrefix = "acct_"
	maxEmailLen     = 254 // RFC 5321 path limit
	maxPlanLen      = 64
)

// CreateAccount stores a new account. The e-mail is stored as given and must not be any
// other account's, compared ignoring case (*EmailTakenError otherwise).
func (s *Store) CreateAccount(email, plan string) (Account, error) {
	if err := validateEmail(email); err != nil {
		return Account{}, err
	}
	if err := validatePlan(plan); err != nil {
		return Account{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The mutex makes the e-mail and id checks meaningful.
	holder, err := s.emailHolder(email)
	if err != nil {
		return Account{}, fmt.Errorf("persistence: create account: %w", err)
	}
	if holder != "" {
		return Account{}, &EmailTakenError{Email: email, AccountID: holder}
	}
	// With 62^20 ids a collision is practically impossible, but overwriting an account
	// would silently hand its keys to someone else, so it is cheap insurance.
	for {
		now := nowUTC()
		a := Account{
			ID:        accountIDPrefix + randBase62(20),
			Email:     email,
			Plan:      plan,
			CreatedAt: now.Unix(),
		}
		k := dbKey(nsAccount, a.ID)
		exists, err := s.has(k)
		if err != nil {
			return Account{}, fmt.Errorf("persistence: create account: %w", err)
		}
		if exists {
			continue
		}
		if err := s.putAccount(k, a, s.nextNanos(now.UnixNano())); err != nil {
			return Account{}, fmt.Errorf("persistence: create account %s: %w", a.ID, err)
		}
		return a, nil
	}
}

// GetAccount returns the account with the given id.
func (s *Store) GetAccount(id string) (Account, error) {
	var a Account
	if err := s.getMsgpack(dbKey(nsAccount, id), &a); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Account{}, notFound("account", id)
		}
		return Account{}, fmt.Errorf("persistence: account %q: %w", id, err)
	}
	return a, nil
}

// SetAccountPlan changes an account's plan and returns the updated account.
func (s *Store) SetAccountPlan(id, plan string) (Account, error) {
	if err := validatePlan(plan); err != nil {
		return Account{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, err := s.GetAccount(id)
	if err != nil {
		return Account{}, err
	}
	if a.Plan == plan {
		return a, nil // nothing to write
	}
	a.Plan = plan
	if err := s.putAccount(dbKey(nsAccount, id), a, 0); err != nil {
		return Account{}, fmt.Errorf("persistence: set plan of %s: %w", id, err)
	}
	return a, nil
}

// ListAccounts returns every account, oldest first (ties broken by id). It
// never returns a nil slice, so JSON callers get [] rather than null.
func (s *Store) ListAccounts() ([]Account, error) {
	out := []Account{}
	err := s.scanPrefix([]byte(nsAccount), func(k, v []byte) (bool, error) {
		var a Account
		if err := msgpack.Unmarshal(v, &a); err != nil {
			return false, fmt.Errorf("decode %q: %w", k, err)
		}
		out = append(out, a)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("persistence: list accounts: %w", err)
	}
	// Keys are ordered by random id; creation order is what a listing wants.
	slices.SortFunc(out, func(a, b Account) int {
		return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// putAccount writes an account record, and with its index entries when created (nanos,
// its place in the creation order, is not 0).
func (s *Store) putAccount(k []byte, a Account, nanos int64) error {
	b := s.db.NewBatch()
	if err := putMsgpack(b, k, a); err != nil {
		b.Close()
		return err
	}
	if nanos != 0 {
		if err := indexAccount(b, a, nanos); err != nil {
			b.Close()
			return err
		}
	}
	return s.commit(b)
}

// validateEmail is deliberately shallow: exactly one '@' with text on both
// sides, no whitespace or control characters, bounded length. Deliverability
// is not this layer's business; keeping garbage out of the store is.
func validateEmail(email string) error {
	at := strings.IndexByte(email, '@')
	switch {
	case email == "":
		return invalidf("email", "email is required")
	case len(email) > maxEmailLen:
		return invalidf("email", "email longer than %d bytes", maxEmailLen)
	case at <= 0 || at == len(email)-1 || strings.Count(email, "@") != 1:
		return invalidf("email", "email %q must contain one '@' with text on both sides", email)
	case !utf8.ValidString(email) || strings.IndexFunc(email, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}) >= 0:
		return invalidf("email", "email %q contains whitespace, control characters or invalid UTF-8", email)
	}
	return nil
}

// validatePlan accepts any short, visible, single-line label; which plans
// exist is decided elsewhere.
func validatePlan(plan string) error {
	switch {
	case strings.TrimSpace(plan) == "":
		return invalidf("plan", "plan is required")
	case len(plan) > maxPlanLen:
		return invalidf("plan", "plan longer than %d bytes", maxPlanLen)
	case !validText(plan):
		return invalidf("plan", "plan %q contains control characters or invalid UTF-8", plan)
	}
	return nil
}

// validText reports whether s is valid UTF-8 without control characters
// (which would corrupt logs and terminal output when displayed).
func validText(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}
