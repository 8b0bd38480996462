package persistence

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

// KeyLimits are a key's own limits, enforced by the quota step. The zero value is
// a key without limits, which is what a key stored before limits existed decodes to.
type KeyLimits struct {
	// Budget is what the key may spend (at the models' rates) per Period; 0: no budget.
	Budget money.Amount `msgpack:"b,omitempty"`
	Period string       `msgpack:"p,omitempty"` // BudgetDay, BudgetWeek, BudgetMonth or BudgetTotal; set with Budget
	// ExpiresAt is when the key stops working, unix seconds; 0: never.
	ExpiresAt int64 `msgpack:"exp,omitempty"`
	// RPM caps the key's calls over a sliding 60 s window; 0: no cap of its own.
	RPM int64 `msgpack:"rpm,omitempty"`
}

// Budget periods: UTC calendar periods (a day from 00:00 UTC, a week from Monday 00:00 UTC, a
// month from the 1st 00:00 UTC), or the key's whole life.
const (
	BudgetDay   = "day"
	BudgetWeek  = "week"
	BudgetMonth = "month"
	BudgetTotal = "total"
)

// The bounds of a key's limits.
const (
	MaxKeyBudget = money.Amount(1_000_000 * 1_000_000_000_000) // $1,000,000
	MaxKeyRPM    = 100_000
)

// IsZero reports whether l sets no limit.
func (l KeyLimits) IsZero() bool { return l == KeyLimits{} }

// Expired reports whether the key has expired at now.
func (l KeyLimits) Expired(now time.Time) bool { return l.ExpiresAt != 0 && now.Unix() >= l.ExpiresAt }

// validPeriod reports whether p is a budget period.
func validPeriod(p string) bool {
	return p == BudgetDay || p == BudgetWeek || p == BudgetMonth || p == BudgetTotal
}

// validateLimits checks the shape of l; now > 0 also requires an expiry to be after now
// (the proposer half: an apply half has no clock and passes 0).
func validateLimits(l KeyLimits, now int64) error {
	switch {
	case l.Budget < 0 || l.Budget > MaxKeyBudget:
		return invalidf("limits.budget.amount_usd", "limits.budget.amount_usd must be more than 0 and at most 1000000")
	case l.Budget > 0 && !validPeriod(l.Period):
		return invalidf("limits.budget.period", "limits.budget.period %q must be day, week, month or total", l.Period)
	case l.Budget == 0 && l.Period != "":
		return invalidf("limits.budget.amount_usd", "limits.budget.period is set without an amount")
	case l.RPM < 0 || l.RPM > MaxKeyRPM:
		return invalidf("limits.rpm", "limits.rpm must be 1-%d, not %d", MaxKeyRPM, l.RPM)
	case l.ExpiresAt < 0:
		return invalidf("limits.expires_at", "limits.expires_at %d is before 1970", l.ExpiresAt)
	case now > 0 && l.ExpiresAt != 0 && l.ExpiresAt <= now:
		return invalidf("limits.expires_at", "limits.expires_at %s is not in the future", time.Unix(l.ExpiresAt, 0).UTC().Format(time.RFC3339))
	}
	return nil
}

// KeyLimitsJSON is the wire shape of a key's limits in the admin and account APIs:
//
//	{"budget":{"amount_usd":"12.50","period":"day"},"expires_at":"2026-12-31T00:00:00Z","rpm":60}
//
// Each member is optional; null or absent sets no such limit.
type KeyLimitsJSON struct {
	Budget    *KeyBudgetJSON `json:"budget"`
	ExpiresAt *string        `json:"expires_at"`
	RPM       *int64         `json:"rpm"`
}

// KeyBudgetJSON is the budget member of KeyLimitsJSON.
type KeyBudgetJSON struct {
	AmountUSD string `json:"amount_usd"`
	Period    string `json:"period"`
}

// Limits reads the wire shape, refusing (an ErrInvalid *Error naming the member) what
// KeyLimits cannot hold: an amount that is not a decimal string, a time not in RFC 3339, an
// rpm of 0. The range checks are the store's (it checks every limit it writes).
func (j *KeyLimitsJSON) Limits() (KeyLimits, error) {
	var l KeyLimits
	if b := j.Budget; b != nil {
		amt, err := money.Parse(b.AmountUSD)
		if err != nil || amt == 0 {
			return KeyLimits{}, invalidf("limits.budget.amount_usd", "limits.budget.amount_usd must be a decimal string of dollars more than 0 and at most 1000000, such as \"12.50\", not %s", strconv.Quote(b.AmountUSD))
		}
		if !validPeriod(b.Period) {
			return KeyLimits{}, invalidf("limits.budget.period", "limits.budget.period %q must be day, week, month or total", b.Period)
		}
		l.Budget, l.Period = amt, b.Period
	}
	if j.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339, *j.ExpiresAt)
		if err != nil || t.Unix() <= 0 {
			return KeyLimits{}, invalidf("limits.expires_at", "limits.expires_at must be an RFC 3339 time such as \"2026-12-31T00:00:00Z\", not %s", strconv.Quote(*j.ExpiresAt))
		}
		l.ExpiresAt = t.Unix()
	}
	if j.RPM != nil {
		if *j.RPM < 1 || *j.RPM > MaxKeyRPM {
			return KeyLimits{}, invalidf("limits.rpm", "limits.rpm must be 1-%d, not %d", MaxKeyRPM, *j.RPM)
		}
		l.RPM = *j.RPM
	}
	return l, validateLimits(l, 0)
}

// JSON is l in its wire shape.
func (l KeyLimits) JSON() KeyLimitsJSON {
	var j KeyLimitsJSON
	if l.Budget > 0 {
		j.Budget = &KeyBudgetJSON{AmountUSD: l.Budget.String(), Period: l.Period}
	}
	if l.ExpiresAt != 0 {
		t := time.Unix(l.ExpiresAt, 0).UTC().Format(time.RFC3339)
		j.ExpiresAt = &t
	}
	if l.RPM != 0 {
		j.RPM = &l.RPM
	}
	return j
}

// MarshalJSON writes l in its wire shape.
func (l KeyLimits) MarshalJSON() ([]byte, error) { return json.Marshal(l.JSON()) }

// UnmarshalJSON reads l from its wire shape.
func (l *KeyLimits) UnmarshalJSON(b []byte) error {
	var j KeyLimitsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	v, err := j.Limits()
	if err != nil {
		return err
	}
	*l = v
	return nil
}
