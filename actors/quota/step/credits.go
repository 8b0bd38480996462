package step

import (
	"math"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// addCredits applies a top-up once per idempotency key (Prior: the key's earlier grant).
func (a *Account) addCredits(c *Command, now int64, r *Result) { a.moveCredits(c, now, r, 1) }

// reverse takes back a purchase's credits once per idempotency key (Prior: the key's earlier
// reversal): a refund or a dispute. Unlike a charge it has no floor: the balance may go below
// zero, and the account then pays nothing more until it is topped up.
func (a *Account) reverse(c *Command, now int64, r *Result) { a.moveCredits(c, now, r, -1) }

// moveCredits adds sign × Amount to the balance once per idempotency key.
func (a *Account) moveCredits(c *Command, now int64, r *Result, sign int64) {
	r.Balance = money.Amount(a.Rec.Balance)
	delta := sign * int64(c.Amount)
	switch {
	case c.Prior != nil && c.Prior.Amount != delta:
		r.Fail = IdempotencyConflict
		return
	case c.Prior != nil:
		r.Repeat = true
		return
	case c.Amount <= 0:
		r.Fail = Invalid
		return
	case sign > 0 && a.Rec.Balance > math.MaxInt64-delta, sign < 0 && a.Rec.Balance < math.MinInt64-delta:
		r.Fail = Overflow
		return
	}
	a.Rec.Balance += delta
	r.Balance, r.Added, r.Dirty = money.Amount(a.Rec.Balance), true, true
	r.Grant = persistence.GrantWrite{Key: c.Key, Grant: persistence.CreditGrant{Amount: delta, At: floorSec(now), Balance: a.Rec.Balance}}
}

// charge debits down to the overdraft floor once per idempotency key (Prior); from a hold,
// at most what the key holds, and the hold ends.
func (a *Account) charge(c *Command, now int64, r *Result) {
	switch {
	case c.Prior != nil && c.Prior.Amount > 0:
		r.Fail = IdempotencyConflict
		return
	case c.Prior != nil:
		r.Repeat, r.Counted, r.Paid = true, true, true
		r.Charged, r.Balance = money.Amount(-c.Prior.Amount), money.Amount(a.Rec.Balance)
		return
	}
	limit := a.Rec.Balance + int64(c.Plan.Overdraft) // down to the overdraft floor
	if c.FromHold {
		held, _ := a.takeHold(c.Key)
		limit = min(limit, held)
	}
	charged := max(0, min(int64(c.Amount), limit))
	a.Rec.Balance -= charged
	a.Rec.Spent += charged
	r.Counted, r.Paid, r.Charged, r.Balance = true, true, money.Amount(charged), money.Amount(a.Rec.Balance)
	if c.Log != nil {
		e := *c.Log
		a.appendLog(r, &e, r.Charged)
	}
	r.Dirty = true
	r.Grant = persistence.GrantWrite{Key: c.Key, Grant: persistence.CreditGrant{Amount: -charged, At: floorSec(now), Balance: a.Rec.Balance}}
}

// hold reserves credits under Key for work that outlives the call Command.ID, taking over
// that call's paid estimate. A key that holds already answers admitted and holds nothing more.
func (a *Account) hold(c *Command, now int64, r *Result) {
	if a.holdIndex(c.Key) >= 0 {
		r.Admitted, r.Repeat = true, true
		return
	}
	if c.Amount <= 0 {
		r.Fail = Invalid
		return
	}
	p := &c.Plan
	a.roll(p, now, r)
	units, moved := int64(1000), money.Amount(0)
	i, found := a.call(c.ID)
	if found {
		units = a.Calls[i].Units
		if a.Calls[i].Paid {
			moved = a.Calls[i].Hold
		}
	}
	avail := money.Amount(a.Rec.Balance) + p.Overdraft - a.Held + moved
	if avail <= 0 || avail < c.Amount {
		a.refuseAllowance(r, p, fits(a.Rec.WindowUsed+a.WinReserved+units, p.WindowRequests),
			fits(a.Rec.WeekUsed+a.WeekReserved+units, p.WeeklyRequests), now)
		if avail > 0 {
			r.Refused = LimitCredits
		}
		return
	}
	a.Held += c.Amount - moved
	if moved > 0 {
		a.Calls[i].Hold = 0
	}
	a.Rec.Holds = append(a.Rec.Holds, persistence.CreditHold{Key: c.Key, Amount: int64(c.Amount), At: floorSec(now)})
	r.Admitted, r.Moved, r.Dirty = true, moved, true
}

func (a *Account) holdIndex(key string) int {
	return slices.IndexFunc(a.Rec.Holds, func(h persistence.CreditHold) bool { return h.Key == key })
}

// takeHold removes the hold under key (a charge key's hold when key has ChargeKeyPrefix)
// and returns what it held; found is false when key holds nothing.
func (a *Account) takeHold(key string) (held int64, found bool) {
	key = strings.TrimPrefix(key, ChargeKeyPrefix)
	i := a.holdIndex(key)
	if i < 0 {
		return 0, false
	}
	h := a.Rec.Holds[i]
	a.Rec.Holds = slices.Delete(a.Rec.Holds, i, i+1)
	a.Held -= money.Amount(h.Amount)
	return h.Amount, true
}
