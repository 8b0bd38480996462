package quota

import (
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
)

// media reserves, commits or releases daily images or video seconds; durable before the answer.
func (a *accountActor) media(m *mediaMsg) {
	c := step.Command{Kind: step.MediaReserve, Now: a.now(), Media: m.kind, ID: m.id, N: m.n}
	switch m.op {
	case mediaReserve:
		c.Plan = step.PlanOf(m.plan)
	case mediaCommit:
		c.Kind = step.MediaCommit
	case mediaRelease:
		c.Kind = step.MediaRelease
	}
	r := a.apply(&c)
	switch {
	case r.Fail != step.OK:
		m.reply.send(MediaDecision{}, a.failure(&c, &r))
	case m.op != mediaReserve:
		a.await(func(err error) { m.reply.send(MediaDecision{Admitted: err == nil}, err) })
	case !r.Admitted:
		m.reply.send(MediaDecision{Refused: Limit(r.Refused), ResetsAt: unixSec(r.ResetsAt), RetryAfter: time.Duration(r.RetryAfter), Daily: daily(r.Daily)}, nil)
	default:
		dec := MediaDecision{Admitted: true, Reservation: MediaReservation{Account: a.acct, Kind: m.kind, ID: r.ID}, Daily: daily(r.Daily)}
		a.await(func(err error) {
			if err != nil {
				dec = MediaDecision{}
			}
			m.reply.send(dec, err)
		})
	}
}
