package quota

import (
	"context"
	"fmt"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// ChargeKeyPrefix namespaces charges among an account's idempotency records: a charge is
// stored as a persistence.CreditGrant with a negative Amount under ChargeKeyPrefix+key, in
// the same synced batch as the new balance. A top-up (AddCredits) under that same key is
// therefore an ErrIdempotencyConflict, never a second credit.
const ChargeKeyPrefix = "charge/"

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
	m := &chargeMsg{overdraft: overdraft, amount: amount, key: ChargeKeyPrefix + idempotencyKey, fromHold: fromHold, reply: newReply[Settlement]()}
	if log != nil {
		e, err := logEntry("charge", account, log)
		if err != nil {
			return Settlement{}, err
		}
		m.log = e
	}
	return ask(ctx, s, account, m, m.reply)
}

type chargeMsg struct {
	overdraft money.Amount
	amount    money.Amount
	key       string // with ChargeKeyPrefix
	fromHold  bool   // at most what the key holds (holds.go), and the hold ends
	log       *persistence.LogEntry
	reply     reply[Settlement]
}

func (m *chargeMsg) Fail(err error) { m.reply.send(Settlement{}, err) }

// charge applies a Charge: look up the key, debit down to the floor, and write the balance,
// the charge record and the log entry in one batch before answering.
func (a *accountActor) charge(m *chargeMsg) {
	g, found, err := a.grantFor(m.key)
	switch {
	case err != nil:
		m.reply.send(Settlement{}, err)
		return
	case found && g.Amount > 0:
		m.reply.send(Settlement{}, fmt.Errorf("%w: key %q is a top-up, not a charge", ErrIdempotencyConflict, m.key))
		return
	case found:
		s := Settlement{Counted: true, Paid: true, Charged: money.Amount(-g.Amount), Balance: money.Amount(a.rec.Balance)}
		a.answerWhenWritten(func(err error) { m.reply.send(s, err) }, m.key)
		return
	}
	limit := a.rec.Balance + int64(m.overdraft) // down to the overdraft floor
	if m.fromHold {
		held, _ := a.takeHold(m.key)
		limit = min(limit, held)
	}
	charged := max(0, min(int64(m.amount), limit))
	a.rec.Balance -= charged
	a.rec.Spent += charged
	if m.log != nil {
		a.appendLog(m.log, money.Amount(charged))
	}
	a.addGrant(m.key, persistence.CreditGrant{Amount: -charged, At: a.svc.now().Unix(), Balance: a.rec.Balance})
	s := Settlement{Counted: true, Paid: true, Charged: money.Amount(charged), Balance: money.Amount(a.rec.Balance)}
	a.await(func(err error) { m.reply.send(s, err) })
}
