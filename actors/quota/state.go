package quota

import (
	"context"
	"fmt"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// The admin view of an account's limits (State), and of one key's own limits (KeyState).

// QuotaState is an account's limits as the admin API shows them. Counts of calls are in
// thousandths of a call; a Limit of 0 means unlimited.
type QuotaState struct {
	Account   string
	Plan      string
	Balance   money.Amount
	Spent     money.Amount
	Held      money.Amount // held for in-flight paid calls
	Overdraft money.Amount
	Window    Allowance
	Weekly    Allowance
	Burst     Budget     // the account-wide burst (zero Limit when per key or unlimited)
	Keys      []KeyState // keys with calls in the last minute, load history or a throttle
	Images    Daily
	Video     Daily
	InFlight  int // admitted calls not yet settled
}

// Allowance is a counter on a fixed schedule.
type Allowance struct {
	Used, Reserved, Limit int64 // thousandths of a call
	ResetsAt              time.Time
}

// Daily is a daily counter (images, or video seconds).
type Daily struct {
	Used, Reserved, Limit int64
	ResetsAt              time.Time
}

// KeyState is one key's burst and throttle.
type KeyState struct {
	KeyID          string
	Burst          Budget // per-key burst (burst_scope key) or the throttle cap when throttled
	RecentCalls    int64  // calls counted toward the throttle rule
	ThrottledUntil time.Time
}

// State reads an account's limits under plan (the account's current plan).
func (s *Service) State(ctx context.Context, account string, plan *catalog.Plan) (QuotaState, error) {
	if err := checkAccount(account); err != nil {
		return QuotaState{}, err
	}
	if plan == nil {
		return QuotaState{}, fmt.Errorf("%w: state of %s: no plan", ErrInvalid, account)
	}
	r, err := s.do(ctx, account, &step.Command{Kind: step.View, Now: s.stamp(), Plan: step.PlanOf(plan)})
	if err != nil {
		return QuotaState{}, err
	}
	return quotaState(account, plan, r.View), nil
}

// KeyLimitsState is one key's own limits as they stand: its budget, what it spent in the
// current period and what its calls in flight hold, its rpm window, its expiry. Zero
// members are limits the key does not have.
type KeyLimitsState struct {
	KeyID     string
	Limits    persistence.KeyLimits
	Spent     money.Amount // settled in the current budget period (at the models' rates)
	Held      money.Amount // the estimated cost of its calls in flight
	Remaining money.Amount // Limits.Budget - Spent - Held, at least 0 (0 without a budget)
	// PeriodStart and ResetsAt bound the current budget period (both zero for a total
	// budget, which never resets, and without a budget).
	PeriodStart, ResetsAt time.Time
	RPM                   Budget // the key's own 60 s window (zero Limit: no rpm)
	ExpiresAt             time.Time
}

// KeyState reads key keyID's own limits (the limits it has now, as stored with the key) in
// account, through the account's owner (a View step: the same on one node and in a
// cluster). plan is the account's plan.
func (s *Service) KeyState(ctx context.Context, account, keyID string, plan *catalog.Plan, limits persistence.KeyLimits) (KeyLimitsState, error) {
	if err := checkAccount(account); err != nil {
		return KeyLimitsState{}, err
	}
	if plan == nil || keyID == "" {
		return KeyLimitsState{}, fmt.Errorf("%w: key state in %s: no plan or key", ErrInvalid, account)
	}
	r, err := s.do(ctx, account, &step.Command{Kind: step.View, Now: s.stamp(), Plan: step.PlanOf(plan), Key: keyID, KeyLimits: &limits})
	if err != nil {
		return KeyLimitsState{}, err
	}
	st := KeyLimitsState{KeyID: keyID, Limits: limits, ExpiresAt: unixSec(limits.ExpiresAt)}
	if v := r.View.Key; v != nil {
		st.Spent, st.Held, st.Remaining, st.RPM = v.Spent, v.Held, v.Remaining, budget(v.RPM)
		st.PeriodStart, st.ResetsAt = unixSec(v.Start), unixSec(v.ResetsAt)
	}
	return st, nil
}
