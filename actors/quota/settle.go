package quota

import (
	"fmt"
	"slices"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// settle applies an admitted call's outcome; the answer waits until it is durable.
func (a *accountActor) settle(m *settleMsg) {
	h, ok := a.calls[m.res.ID]
	if !ok {
		a.unknownReservation(m)
		return
	}
	delete(a.calls, m.res.ID)
	a.roll(h.plan, a.svc.now().UnixNano())
	a.release(h)
	s := Settlement{Paid: h.paid}
	var units int64
	if m.out.Counts {
		s.Counted = true
		if h.inPlan {
			units = h.units
			if h.winStart == a.rec.WindowStart {
				a.rec.WindowUsed += h.units
			}
			if h.weekStart == a.rec.WeekStart {
				a.rec.WeekUsed += h.units
			}
			a.pend.dirty = true
		}
		if h.paid {
			floor := -int64(h.plan.Overdraft)
			s.Charged = money.Amount(max(0, min(int64(m.out.Cost), a.rec.Balance-floor)))
			if s.Charged > 0 {
				a.rec.Balance -= int64(s.Charged)
				a.rec.Spent += int64(s.Charged)
				a.pend.dirty = true
			}
		}
	} else {
		a.unoccupy(h)
	}
	if u := m.out.Media; u != nil {
		a.endMedia(u.Reservation.Kind, u.Reservation.ID, u.N > 0, u.N)
	}
	s.Balance = money.Amount(a.rec.Balance)
	if e := m.out.Log; e != nil {
		if e.KeyID == "" {
			e.KeyID = h.key
		}
		e.Counted, e.AllowanceUnits = s.Counted, units
		a.appendLog(e, s.Charged)
	}
	a.await(func(err error) { m.reply.send(s, err) })
}

//go:noinline
func (a *accountActor) unknownReservation(m *settleMsg) {
	m.reply.send(Settlement{}, fmt.Errorf("%w: %s/%d", ErrUnknownReservation, a.acct, m.res.ID))
}

// record logs a call answered without an admission. A client error counts as a call of its
// units: in the plan when they fit (as an admission would reserve them), else beyond it at
// no cost, since a client error costs nothing; never refused. It takes its slot in the burst
// windows and the throttle's load history at its arrival, the entry's time. A refusal only
// leaves its entry.
func (a *accountActor) record(m *recordMsg) {
	e := m.req.Log
	if p := m.req.Plan; m.req.Counts && p != nil {
		now := a.svc.now().UnixNano()
		a.roll(p, now)
		if err := a.rebuildBurst(p, now); err != nil {
			m.reply.send(struct{}{}, err)
			return
		}
		if win, week := a.fitsEach(p, m.req.Units); win && week {
			a.rec.WindowUsed += m.req.Units
			a.rec.WeekUsed += m.req.Units
			e.AllowanceUnits = m.req.Units
		}
		ks := a.key(m.req.KeyID)
		a.occupy(p, m.req.KeyID, ks, a.window(p, ks), e.Time)
		e.Counted = true
	}
	a.appendLog(e, 0)
	a.await(func(err error) { m.reply.send(struct{}{}, err) })
}

// endMedia commits (n produced) or releases a daily media reservation. A reservation made
// on an earlier day commits to nothing: that day's counter is gone.
func (a *accountActor) endMedia(kind string, id uint64, commit bool, n int64) bool {
	i := slices.IndexFunc(a.rec.Media, func(h persistence.MediaHold) bool { return h.ID == id && h.Kind == kind })
	if i < 0 {
		return false
	}
	h := a.rec.Media[i]
	a.rec.Media = slices.Delete(a.rec.Media, i, i+1)
	if commit && h.Day == a.rec.Day {
		if kind == persistence.MediaVideo {
			a.rec.Video += n
		} else {
			a.rec.Images += n
		}
	}
	a.pend.dirty = true
	return true
}
