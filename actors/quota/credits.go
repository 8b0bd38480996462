package quota

import (
	"fmt"
	"math"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// addCredits applies a top-up once per idempotency key; the answer waits until it is durable.
func (a *accountActor) addCredits(m *creditMsg) {
	g, found, err := a.grantFor(m.key)
	switch {
	case err != nil:
		m.reply.send(creditResult{}, err)
		return
	case found && g.Amount != int64(m.amount):
		m.reply.send(creditResult{balance: money.Amount(a.rec.Balance)}, fmt.Errorf("%w: key %q added %s, not %s",
			ErrIdempotencyConflict, m.key, money.Amount(g.Amount), m.amount))
		return
	case found:
		balance := money.Amount(a.rec.Balance)
		a.answerWhenWritten(func(err error) { m.reply.send(creditResult{balance: balance}, err) }, m.key)
		return
	}
	if a.rec.Balance > math.MaxInt64-int64(m.amount) {
		m.reply.send(creditResult{}, fmt.Errorf("%w: balance would overflow", ErrInvalid))
		return
	}
	a.rec.Balance += int64(m.amount)
	a.addGrant(m.key, persistence.CreditGrant{Amount: int64(m.amount), At: a.svc.now().Unix(), Balance: a.rec.Balance})
	balance := money.Amount(a.rec.Balance)
	a.await(func(err error) { m.reply.send(creditResult{balance: balance, added: err == nil}, err) })
}

// answerWhenWritten answers a repeated top-up or charge: at once when its grant is on disk,
// else once it is (a repeat must not be told "done" before the first is durable).
func (a *accountActor) answerWhenWritten(done func(error), key string) {
	if _, unwritten := a.unwritten[key]; unwritten {
		a.await(done)
		return
	}
	done(nil)
}
