package persistence

import (
	"github.com/modelgate/modelgate/internal/randid"

	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cockroachdb/pebble/v2"
	"github.com/vmihailenco/msgpack/v5"
)

// Account is a billing identity that owns API keys.
type Account struct {
	ID        string `msgpack:"id" json:"id"` // "acct_" + 20 random base62
	Email     string `msgpack:"email" json:"email"`
	Plan      string `msgpack:"plan" json:"plan"`
	CreatedAt int64  `msgpack:"created_at" json:"created_at"` // unix seconds UTC
	// Disabled: the operator has disabled the account; its keys fail the key check and it
	// cannot log in (SetAccountDisabled).
	Disabled bool `msgpack:"disabled,omitempty" json:"disabled"`
	// NextPlan is the plan the account moves to at NextPlanAt (unix seconds UTC): a
	// subscription's downgrade or end takes effect when the period paid for ends. Every
	// read of the plan goes through PlanAt, so the move needs no writer at that moment.
	NextPlan   string `msgpack:"next_plan,omitempty" json:"next_plan,omitempty"`
	NextPlanAt int64  `msgpack:"next_plan_at,omitempty" json:"next_plan_at,omitempty"`
}

// PlanAt is the account's plan at unix second now: NextPlan once NextPlanAt has come.
func (a *Account) PlanAt(now int64) string { return planAt(a.Plan, a.NextPlan, a.NextPlanAt, now) }

func planAt(plan, next string, at, now int64) string {
	if next != "" && now >= at {
		return next
	}
	return plan
}

const (
	accountIDPrefix = "acct_"
	maxEmailLen     = 254 // RFC 5321 path limit
	maxPlanLen      = 64
)

// NewAccount is a decided account creation (PrepareAccount's result).
type NewAccount struct {
	Account Account `msgpack:"account"`
	// Order is the account's place in the creation order: its proposer's clock in unix
	// nanoseconds, strictly increasing per proposer (ties between proposers go by id).
	Order int64 `msgpack:"order"`
}

// PlanChange is a decided change of an account's plan (PreparePlan's result).
type PlanChange struct {
	AccountID string `msgpack:"account_id"`
	Plan      string `msgpack:"plan"`
}

// CreateAccount stores a new account. The e-mail is stored as given and must not be any
// other account's, compared ignoring case (*EmailTakenError otherwise).
func (s *Store) CreateAccount(email, plan string) (Account, error) {
	if err := validateAccount(email, plan); err != nil {
		return Account{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// The mutex makes the proposer's e-mail and id checks hold until the apply half runs.
	c, err := s.prepareAccountLocked(email, plan)
	if err != nil {
		return Account{}, err
	}
	var a Account
	err = s.updateMetaLocked(func(b *MetaBatch) (err error) {
		a, err = b.CreateAccount(c)
		return err
	})
	return a, err
}

// PrepareAccount is CreateAccount's proposer half: it validates, checks the e-mail against
// this store's view (the apply half checks again against the replicated state), and draws
// the id and the creation time.
func (s *Store) PrepareAccount(email, plan string) (NewAccount, error) {
	if err := validateAccount(email, plan); err != nil {
		return NewAccount{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.prepareAccountLocked(email, plan)
}

func (s *Store) prepareAccountLocked(email, plan string) (NewAccount, error) {
	holder, err := s.emailHolder(email)
	if err != nil {
		return NewAccount{}, fmt.Errorf("persistence: create account: %w", err)
	}
	if holder != "" {
		return NewAccount{}, &EmailTakenError{Email: email, AccountID: holder}
	}
	// With 62^20 ids a collision is practically impossible, but overwriting an account
	// would silently hand its keys to someone else, so it is cheap insurance.
	for {
		now := nowUTC()
		a := Account{
			ID:        accountIDPrefix + randid.Base62(20),
			Email:     email,
			Plan:      plan,
			CreatedAt: now.Unix(),
		}
		exists, err := s.has(dbKey(nsAccount, a.ID))
		if err != nil {
			return NewAccount{}, fmt.Errorf("persistence: create account: %w", err)
		}
		if !exists {
			return NewAccount{Account: a, Order: s.nextNanos(now.UnixNano())}, nil
		}
	}
}

// CreateAccount is CreateAccount's apply half. It validates the value again (a pure check,
// the same on every replica) and refuses an e-mail or id that is taken.
func (m *MetaBatch) CreateAccount(c NewAccount) (Account, error) {
	a := c.Account
	if err := validateAccount(a.Email, a.Plan); err != nil {
		return Account{}, err
	}
	if !strings.HasPrefix(a.ID, accountIDPrefix) || !printableASCII(a.ID) || c.Order <= 0 {
		return Account{}, invalidf("id", "account id %q or creation order %d is not one a proposer makes", a.ID, c.Order)
	}
	holder, err := emailHolderIn(m.b, a.Email)
	if err != nil {
		return Account{}, fmt.Errorf("persistence: create account: %w", err)
	}
	if holder != "" {
		return Account{}, &EmailTakenError{Email: a.Email, AccountID: holder}
	}
	k := dbKey(nsAccount, a.ID)
	if taken, err := hasIn(m.b, k); err != nil {
		return Account{}, fmt.Errorf("persistence: create account: %w", err)
	} else if taken {
		return Account{}, conflictf("id", "account id %s is taken", a.ID)
	}
	if err := m.putAccount(a, c.Order); err != nil {
		return Account{}, fmt.Errorf("persistence: create account %s: %w", a.ID, err)
	}
	return a, nil
}

// GetAccount returns the account with the given id, read from the store.
func (s *Store) GetAccount(id string) (Account, error) { return getAccountIn(s.db, id) }

// AccountPlan is account id's plan, from memory once read (accountcache.go): every admitted
// call asks it.
func (s *Store) AccountPlan(id string) (string, error) {
	if e, ok := s.accounts.get(id); ok {
		if e.next == "" { // no move scheduled: no clock read (most accounts, every call)
			return e.plan, nil
		}
		return planAt(e.plan, e.next, e.at, nowUTC().Unix()), nil
	}
	gen := s.accounts.generation()
	a, err := getAccountIn(s.db, id)
	if err != nil {
		return "", err
	}
	s.accounts.put(id, cachedPlan{plan: a.Plan, next: a.NextPlan, at: a.NextPlanAt}, gen)
	return a.PlanAt(nowUTC().Unix()), nil
}

func getAccountIn(r pebble.Reader, id string) (Account, error) {
	var a Account
	if err := getMsgpackIn(r, dbKey(nsAccount, id), &a); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Account{}, notFound("account", id)
		}
		return Account{}, fmt.Errorf("persistence: account %q: %w", id, err)
	}
	return a, nil
}

// SetAccountPlan changes an account's plan and returns the updated account.
func (s *Store) SetAccountPlan(id, plan string) (Account, error) {
	c, err := s.PreparePlan(id, plan)
	if err != nil {
		return Account{}, err
	}
	var a Account
	err = s.UpdateMeta(func(b *MetaBatch) (err error) {
		a, err = b.SetAccountPlan(c)
		return err
	})
	return a, err
}

// PreparePlan is SetAccountPlan's proposer half: it validates the plan. Whether the account
// exists is the apply half's question.
func (s *Store) PreparePlan(id, plan string) (PlanChange, error) {
	if err := validatePlan(plan); err != nil {
		return PlanChange{}, err
	}
	return PlanChange{AccountID: id, Plan: plan}, nil
}

// SetAccountPlan is SetAccountPlan's apply half.
func (m *MetaBatch) SetAccountPlan(c PlanChange) (Account, error) {
	if err := validatePlan(c.Plan); err != nil {
		return Account{}, err
	}
	a, err := getAccountIn(m.b, c.AccountID)
	if err != nil {
		return Account{}, err
	}
	if a.Plan == c.Plan && a.NextPlan == "" {
		return a, nil // nothing to write
	}
	// The operator's choice replaces a subscription's scheduled move.
	a.Plan, a.NextPlan, a.NextPlanAt = c.Plan, "", 0
	if err := m.putAccount(a, 0); err != nil {
		return Account{}, fmt.Errorf("persistence: set plan of %s: %w", a.ID, err)
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

// putAccount writes an account record in a batch of its own, and with its index entries
// when created (nanos, its place in the creation order, is not 0).
func (s *Store) putAccount(k []byte, a Account, nanos int64) error {
	b := s.db.NewBatch()
	if err := putAccountTo(b, k, a, nanos); err != nil {
		b.Close()
		return err
	}
	defer s.accounts.drop(false, a.ID)
	return s.commit(b)
}

// putAccount adds an account record (and its index entries when nanos is not 0) to the
// batch, and notes the account: its cached record goes once the batch commits.
func (m *MetaBatch) putAccount(a Account, nanos int64) error {
	m.accounts = append(m.accounts, a.ID)
	return putAccountTo(m.b, dbKey(nsAccount, a.ID), a, nanos)
}

// putAccountTo adds an account record, and its index entries when nanos is not 0, to b.
func putAccountTo(b *pebble.Batch, k []byte, a Account, nanos int64) error {
	if err := putMsgpack(b, k, a); err != nil {
		return err
	}
	if nanos != 0 {
		return indexAccount(b, a, nanos)
	}
	return nil
}

// validateAccount checks a new account's e-mail and plan.
func validateAccount(email, plan string) error {
	if err := validateEmail(email); err != nil {
		return err
	}
	return validatePlan(plan)
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
