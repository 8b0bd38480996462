package quota

import (
	"github.com/modelgate/modelgate/actors/quota/step"
)

// addCredits applies a top-up once per idempotency key; the answer waits until it is durable.
func (a *accountActor) addCredits(m *creditMsg) {
	c := step.Command{Kind: step.AddCredits, Now: a.now(), Key: m.key, Amount: m.amount}
	r, err := a.applyOnce(&c)
	switch {
	case err != nil:
		m.reply.send(creditResult{balance: r.Balance}, err)
	case r.Repeat:
		a.answerWhenWritten(func(err error) { m.reply.send(creditResult{balance: r.Balance}, err) }, m.key)
	default:
		a.await(func(err error) { m.reply.send(creditResult{balance: r.Balance, added: err == nil}, err) })
	}
}

// applyOnce applies a command under an idempotency key (a top-up or a charge), with the
// grant already recorded under it, written or not.
func (a *accountActor) applyOnce(c *step.Command) (step.Result, error) {
	g, found, err := a.grantFor(c.Key)
	if err != nil {
		return step.Result{}, err
	}
	if found {
		c.Prior = &g
	}
	r := a.apply(c)
	return r, a.failure(c, &r)
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
