package quota

import (
	"context"
	"fmt"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Credit holds reserve credits for work that outlives the call that started it: a video
// task beyond the plan holds its price for the requested seconds from creation until it
// completes (SettleHold charges what it made) or fails (ReleaseHold). Unlike an admitted
// call's estimate, which lives in memory for the seconds a call takes, a hold is part of
// the account's stored record: a restart keeps it, and a key names it, so every step can be
// repeated after a crash without holding or charging twice.

// HoldRequest asks for a credit hold.
type HoldRequest struct {
	Account string
	// Call is the admitted call that starts the work. When it was admitted beyond the plan
	// (Decision.Paid), the estimate it holds becomes part of this hold rather than being
	// held twice. Zero: no call.
	Call   Reservation
	Plan   *catalog.Plan
	Key    string // e.g. "video/<task id>"
	Amount money.Amount
}

// HoldCredits holds r.Amount of the account's credits under r.Key, durably (synced) before
// it returns. The hold is refused, with Decision.Refused and ResetsAt as Admit gives them
// (LimitCredits, or the window or weekly cap when no credit is left at all), when the
// balance plus the plan's overdraft, less what every other call and hold holds, does not
// cover it. A key that holds already answers admitted and holds nothing more.
func (s *Service) HoldCredits(ctx context.Context, r HoldRequest) (Decision, error) {
	if err := checkAccount(r.Account); err != nil {
		return Decision{}, err
	}
	switch {
	case r.Plan == nil:
		return Decision{}, fmt.Errorf("%w: hold for %s: no plan", ErrInvalid, r.Account)
	case r.Amount <= 0:
		return Decision{}, fmt.Errorf("%w: hold for %s: amount %s must be positive", ErrInvalid, r.Account, r.Amount)
	case r.Call.Account != "" && r.Call.Account != r.Account:
		return Decision{}, fmt.Errorf("%w: hold for %s: a call of account %q", ErrInvalid, r.Account, r.Call.Account)
	}
	if err := checkChargeKey(r.Account, r.Key); err != nil {
		return Decision{}, err
	}
	res, err := s.do(ctx, r.Account, &step.Command{Kind: step.Hold, Now: s.stamp(), Plan: step.PlanOf(r.Plan), Key: r.Key, ID: r.Call.ID, Amount: r.Amount})
	if err != nil {
		return Decision{}, err
	}
	if !res.Admitted {
		var d Decision
		decide(&d, r.Account, &res)
		return d, nil
	}
	return Decision{Admitted: true}, nil
}

// SettleHold ends the hold under key with a charge of amount: at most what the key holds
// (nothing when it holds nothing, as for work within the plan) and never below the plan's
// overdraft floor; the rest of the hold is released. It is Charge under the same key in
// every other way: recorded under ChargeKeyPrefix+key with log in one synced batch, and a
// repeat charges nothing and answers the first charge.
func (s *Service) SettleHold(ctx context.Context, account string, plan *catalog.Plan, key string, amount money.Amount, log *persistence.LogEntry) (Settlement, error) {
	return s.charge(ctx, account, plan, amount, key, log, true)
}

// ReleaseHold gives the hold under key back, durably; a key that holds nothing (released
// already, settled, or never held) is not an error.
func (s *Service) ReleaseHold(ctx context.Context, account, key string) error {
	if err := checkAccount(account); err != nil {
		return err
	}
	if err := checkChargeKey(account, key); err != nil {
		return err
	}
	_, err := s.do(ctx, account, &step.Command{Kind: step.ReleaseHold, Now: s.stamp(), Key: key})
	return err
}

// checkChargeKey bounds a key that a charge record may be stored under.
func checkChargeKey(account, key string) error {
	if key == "" || len(ChargeKeyPrefix)+len(key) > 128 {
		return fmt.Errorf("%w: charge for %s: an idempotency key of 1-%d bytes is required", ErrInvalid, account, 128-len(ChargeKeyPrefix))
	}
	return nil
}
