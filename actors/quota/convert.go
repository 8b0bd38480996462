package quota

import (
	"fmt"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The step speaks in unix times and its own small types; these turn its results into the
// service's answers.

// failure is the error of a step that changed nothing (nil when it did its work).
func failure(acct string, c *step.Command, r *step.Result) error {
	switch r.Fail {
	case step.OK:
		return nil
	case step.UnknownReservation:
		if c.Kind == step.Settle {
			return fmt.Errorf("%w: %s/%d", ErrUnknownReservation, acct, c.ID)
		}
		return fmt.Errorf("%w: %s %s/%d", ErrUnknownReservation, c.Media, acct, c.ID)
	case step.IdempotencyConflict:
		if c.Kind == step.Charge {
			return fmt.Errorf("%w: key %q is a top-up, not a charge", ErrIdempotencyConflict, c.Key)
		}
		return fmt.Errorf("%w: key %q added %s, not %s", ErrIdempotencyConflict, c.Key, money.Amount(c.Prior.Amount), c.Amount)
	case step.Overflow:
		return fmt.Errorf("%w: balance would overflow", ErrInvalid)
	}
	return fmt.Errorf("%w: %s: a malformed quota step (kind %d)", ErrInvalid, acct, c.Kind)
}

// settlement is what a settle or a charge did.
func settlement(r *step.Result) Settlement {
	return Settlement{Counted: r.Counted, Paid: r.Paid, Charged: r.Charged, Balance: r.Balance}
}

// decide fills d (owned by the caller's reply) from an admission's or a hold's result.
func decide(d *Decision, acct string, r *step.Result) {
	d.Admitted, d.Paid, d.Refused = r.Admitted, r.Paid, Limit(r.Refused)
	if r.ID != 0 {
		d.Reservation = Reservation{Account: acct, ID: r.ID}
	}
	d.RetryAfter, d.ResetsAt = time.Duration(r.RetryAfter), unixSec(r.ResetsAt)
	d.MaxRPM, d.Burst = r.MaxRPM, budget(r.Burst)
}

func budget(b step.Budget) Budget {
	return Budget{Limit: b.Limit, Remaining: b.Remaining, Reset: unixNano(b.Reset)}
}

// unixSec and unixNano are UTC times, the zero time for 0 (not set).
func unixSec(s int64) time.Time {
	if s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}

func unixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns).UTC()
}

func daily(c step.Counter) Daily {
	return Daily{Used: c.Used, Reserved: c.Reserved, Limit: c.Limit, ResetsAt: unixSec(c.ResetsAt)}
}

func allowance(c step.Counter) Allowance {
	return Allowance{Used: c.Used, Reserved: c.Reserved, Limit: c.Limit, ResetsAt: unixSec(c.ResetsAt)}
}

// quotaState is the admin view under plan p.
func quotaState(acct string, p *catalog.Plan, v *step.State) QuotaState {
	st := QuotaState{
		Account: acct, Plan: p.Name, Balance: v.Balance, Spent: v.Spent, Held: v.Held, Overdraft: p.Overdraft, InFlight: v.InFlight,
		Window: allowance(v.Window), Weekly: allowance(v.Weekly), Burst: budget(v.Burst), Images: daily(v.Images), Video: daily(v.Video),
	}
	for _, k := range v.Keys {
		st.Keys = append(st.Keys, KeyState{KeyID: k.KeyID, Burst: budget(k.Burst), RecentCalls: k.RecentCalls, ThrottledUntil: unixNano(k.ThrottledUntil)})
	}
	return st
}
