package quota

import (
	"github.com/modelgate/modelgate/actors/quota/step"
)

// settle applies an admitted call's outcome; the answer waits until it is durable.
func (a *accountActor) settle(m *settleMsg) {
	c := step.Command{Kind: step.Settle, Now: a.now(), ID: m.res.ID, Counts: m.out.Counts, Amount: m.out.Cost, Log: m.out.Log}
	if u := m.out.Media; u != nil {
		c.Media, c.MediaID, c.N = u.Reservation.Kind, u.Reservation.ID, u.N
	}
	r := a.apply(&c)
	if err := a.failure(&c, &r); err != nil {
		m.reply.send(Settlement{}, err)
		return
	}
	s := Settlement{Counted: r.Counted, Paid: r.Paid, Charged: r.Charged, Balance: r.Balance}
	a.await(func(err error) { m.reply.send(s, err) })
}

// record logs a call answered without an admission (Unadmitted); the answer waits until
// the entry and the counts are durable.
func (a *accountActor) record(m *recordMsg) {
	c := step.Command{Kind: step.Record, Now: a.now(), Key: m.req.KeyID, Units: m.req.Units, Log: m.req.Log}
	if p := m.req.Plan; m.req.Counts && p != nil {
		c.Counts, c.Plan = true, step.PlanOf(p)
		if err := a.fillWindows(&c.Plan, c.Now); err != nil {
			m.reply.send(struct{}{}, err)
			return
		}
	}
	r := a.apply(&c)
	if err := a.failure(&c, &r); err != nil {
		m.reply.send(struct{}{}, err)
		return
	}
	a.await(func(err error) { m.reply.send(struct{}{}, err) })
}
