package quota

import (
	"fmt"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// daily is the current day's counter of one media kind.
func (a *accountActor) daily(kind string, limit int64) Daily {
	d := Daily{Limit: limit, ResetsAt: time.Unix(a.rec.Day+day, 0).UTC(), Used: a.rec.Images}
	if kind == persistence.MediaVideo {
		d.Used = a.rec.Video
	}
	for _, h := range a.rec.Media {
		if h.Kind == kind && h.Day == a.rec.Day {
			d.Reserved += h.Amount
		}
	}
	return d
}

// media reserves, commits or releases daily images or video seconds; durable before the answer.
func (a *accountActor) media(m *mediaMsg) {
	now := a.svc.now().UnixNano()
	a.rollDay(floorSec(now))
	if m.op != mediaReserve {
		if !a.endMedia(m.kind, m.id, m.op == mediaCommit, m.n) {
			m.reply.send(MediaDecision{}, fmt.Errorf("%w: %s %s/%d", ErrUnknownReservation, m.kind, a.acct, m.id))
			return
		}
		a.await(func(err error) { m.reply.send(MediaDecision{Admitted: err == nil}, err) })
		return
	}
	limit, refusal := m.plan.ImageDailyLimit, LimitImages
	if m.kind == persistence.MediaVideo {
		limit, refusal = m.plan.VideoDailySeconds, LimitVideo
	}
	d := a.daily(m.kind, limit)
	if limit > 0 && d.Used+d.Reserved+m.n > limit {
		m.reply.send(MediaDecision{Refused: refusal, ResetsAt: d.ResetsAt, RetryAfter: d.ResetsAt.Sub(time.Unix(0, now)), Daily: d}, nil)
		return
	}
	a.nextID++
	a.rec.Media = append(a.rec.Media, persistence.MediaHold{ID: a.nextID, Kind: m.kind, Amount: m.n, Day: a.rec.Day})
	a.pend.dirty = true
	d.Reserved += m.n
	dec := MediaDecision{Admitted: true, Reservation: MediaReservation{Account: a.acct, Kind: m.kind, ID: a.nextID}, Daily: d}
	a.await(func(err error) {
		if err != nil {
			dec = MediaDecision{}
		}
		m.reply.send(dec, err)
	})
}
