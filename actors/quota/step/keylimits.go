package step

import (
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// A key's own limits (persistence.KeyLimits, carried by Admit, Record and View as
// Command.KeyLimits): its expiry, its rpm over a sliding 60 s window (Key.RPM), and its
// budget per UTC calendar period. The budget is kept the way the credits are: a key's
// calls in flight hold their estimated cost against it (Call.KeyHold), and a call is
// admitted only while budget - spent - held covers its estimate; its settle adds its real
// cost to the period's spend (Rec.KeySpend). A key with no budget has no spend record.

// KeyLimitsView is one key's own limits at a time (View with Command.Key and KeyLimits).
type KeyLimitsView struct {
	Spent     money.Amount `msgpack:"spent,omitempty"` // settled in the current period
	Held      money.Amount `msgpack:"held,omitempty"`  // the estimates of its calls in flight
	Remaining money.Amount `msgpack:"rem,omitempty"`   // budget - spent - held, at least 0
	Start     int64        `msgpack:"s,omitempty"`     // the period's start, unix s (0: total)
	ResetsAt  int64        `msgpack:"t,omitempty"`     // the next period's start, unix s (0: never)
	RPM       Budget       `msgpack:"rpm"`             // the key's own window (zero Limit: none)
}

// BudgetPeriod is the start of the budget period holding sec (unix s) and the start of the
// next one; total has neither (0, 0).
func BudgetPeriod(period string, sec int64) (start, next int64) {
	switch period {
	case persistence.BudgetDay:
		start = dayStart(sec)
		return start, start + Day
	case persistence.BudgetWeek:
		start = weekStart(sec)
		return start, start + Week
	case persistence.BudgetMonth:
		t := time.Unix(sec, 0).UTC()
		first := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return first.Unix(), first.AddDate(0, 1, 0).Unix()
	}
	return 0, 0
}

// spendIndex finds key id's spend record.
func (a *Account) spendIndex(id string) (int, bool) {
	return slices.BinarySearchFunc(a.Rec.KeySpend, id, func(s persistence.KeySpend, id string) int { return strings.Compare(s.KeyID, id) })
}

// spend is key id's spend in the current period of its budget l, rolled to now (a new
// period, or a budget of another period, starts from zero), added when it has none. The
// pointer is into Rec.KeySpend: good until the next record is added.
func (a *Account) spend(id string, l *persistence.KeyLimits, sec int64, r *Result) *persistence.KeySpend {
	start, _ := BudgetPeriod(l.Period, sec)
	i, ok := a.spendIndex(id)
	if !ok {
		a.Rec.KeySpend = slices.Insert(a.Rec.KeySpend, i, persistence.KeySpend{KeyID: id, Period: l.Period, Start: start})
		r.Dirty = true
	}
	s := &a.Rec.KeySpend[i]
	if s.Period != l.Period || s.Start != start {
		s.Period, s.Start, s.Spent = l.Period, start, 0
		r.Dirty = true
	}
	return s
}

// dropSpend forgets the spend of a key that no longer has a budget.
func (a *Account) dropSpend(id string, r *Result) {
	if i, ok := a.spendIndex(id); ok {
		a.Rec.KeySpend = slices.Delete(a.Rec.KeySpend, i, i+1)
		r.Dirty = true
	}
}

// keyHeld is what key id's calls in flight hold against its budget.
func (a *Account) keyHeld(id string) money.Amount {
	var held money.Amount
	for i := range a.Calls {
		if h := &a.Calls[i]; h.Key == id {
			held += h.KeyHold
		}
	}
	return held
}

// checkKey refuses a call its key's own limits forbid (expired, rpm, budget), and returns
// true when it does. It reads the key's state ks; a budget check rolls its spend.
func (a *Account) checkKey(c *Command, ks *Key, now int64, r *Result) bool {
	l := c.KeyLimits
	if l == nil {
		a.dropSpend(c.Key, r)
		return false
	}
	sec := floorSec(now)
	if l.ExpiresAt != 0 && sec >= l.ExpiresAt {
		r.Refused, r.ResetsAt = LimitKeyExpired, l.ExpiresAt
		return true
	}
	if l.RPM > 0 {
		if w := ks.RPM.wait(l.RPM, now); w > 0 {
			r.Refused, r.RetryAfter, r.MaxRPM, r.Burst = LimitKeyRPM, w, l.RPM, ks.RPM.budget(l.RPM, now)
			return true
		}
	}
	if l.Budget <= 0 {
		a.dropSpend(c.Key, r)
		return false
	}
	s := a.spend(c.Key, l, sec, r)
	if avail := l.Budget - money.Amount(s.Spent) - a.keyHeld(c.Key); avail <= 0 || avail < c.Amount {
		_, next := BudgetPeriod(l.Period, sec)
		r.Refused, r.ResetsAt = LimitKeyBudget, next
		if next > 0 {
			r.RetryAfter = next*1e9 - now
		}
		return true
	}
	return false
}

// settleKey adds a counted call's real cost to its key's spend, in the period of the
// key's budget that holds now (the settle's time).
func (a *Account) settleKey(h *Call, cost money.Amount, now int64, r *Result) {
	if !h.Budgeted || cost <= 0 {
		return
	}
	i, ok := a.spendIndex(h.Key)
	if !ok {
		return // the budget was removed while the call was in flight
	}
	s := &a.Rec.KeySpend[i]
	if start, _ := BudgetPeriod(s.Period, floorSec(now)); start != s.Start {
		s.Start, s.Spent = start, 0
	}
	s.Spent += int64(cost)
	r.Dirty = true
}

// keyView is key id's own limits l at now, changing nothing.
func (a *Account) keyView(id string, l *persistence.KeyLimits, now int64) *KeyLimitsView {
	v := &KeyLimitsView{}
	if ks := a.findKey(id); ks != nil && l.RPM > 0 {
		v.RPM = ks.RPM.budget(l.RPM, now)
	} else if l.RPM > 0 {
		v.RPM = Budget{Limit: l.RPM, Remaining: l.RPM, Reset: now}
	}
	if l.Budget <= 0 {
		return v
	}
	v.Start, v.ResetsAt = BudgetPeriod(l.Period, floorSec(now))
	if i, ok := a.spendIndex(id); ok {
		if s := a.Rec.KeySpend[i]; s.Period == l.Period && s.Start == v.Start {
			v.Spent = money.Amount(s.Spent)
		}
	}
	v.Held = a.keyHeld(id)
	v.Remaining = max(0, l.Budget-v.Spent-v.Held)
	return v
}
