package quota

import (
	"context"
	"fmt"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// ChargeKeyPrefix namespaces charges among an account's idempotency records: a charge is
// stored as a persistence.CreditGrant with a negative Amount under ChargeKeyPrefix+key, in
// the same synced batch as the new balance. A top-up (AddCredits) under that same key is
// therefore an ErrIdempotencyConflict, never a second credit.
const ChargeKeyPrefix = step.ChargeKeyPrefix

// Charge debits amount from the account's credits once per idempotency key, with no
// reservation before it: the way a finished video task is billed, which must survive a
// restart (a reservation does not). The same key again charges nothing and returns the
// first charge (Charged) with the current balance, whatever amount it carries. The balance
// never goes below the plan's overdraft floor (-plan.Overdraft; a nil plan has none):
// Charged is the part of amount that fitted, possibly 0. log, when set, is written in the
// same batch with AccountID filled in and Cost set to Charged (on a repeat it is not written
// again); it counts nothing (the call that started the work did). Nothing is acknowledged
// before it is durable.
func (s *Service) Charge(ctx context.Context, account string, plan *catalog.Plan, amount money.Amount, idempotencyKey string, log *persistence.LogEntry) (Settlement, error) {
	return s.charge(ctx, account, plan, amount, idempotencyKey, log, false)
}

// charge is Charge, and SettleHold when fromHold: then the charge is at most what the key
// holds, and the hold ends with it.
func (s *Service) charge(ctx context.Context, account string, plan *catalog.Plan, amount money.Amount, idempotencyKey string, log *persistence.LogEntry, fromHold bool) (Settlement, error) {
	if err := checkAccount(account); err != nil {
		return Settlement{}, err
	}
	if amount < 0 {
		return Settlement{}, fmt.Errorf("%w: charge for %s: amount %s is negative", ErrInvalid, account, amount)
	}
	if err := checkChargeKey(account, idempotencyKey); err != nil {
		return Settlement{}, err
	}
	var overdraft money.Amount
	if plan != nil {
		overdraft = plan.Overdraft
	}
	c := &step.Command{Kind: step.Charge, Now: s.stamp(), Plan: step.Plan{Overdraft: overdraft}, Key: ChargeKeyPrefix + idempotencyKey,
		Amount: amount, FromHold: fromHold}
	if log != nil {
		e, err := logEntry("charge", account, log)
		if err != nil {
			return Settlement{}, err
		}
		c.Log = e
	}
	r, err := s.do(ctx, account, c)
	return settlement(&r), err
}
