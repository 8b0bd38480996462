package quota

import (
	"slices"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// state is the admin view under plan p.
func (a *accountActor) state(p *catalog.Plan) (QuotaState, error) {
	now := a.svc.now().UnixNano()
	a.roll(p, now)
	if err := a.rebuildBurst(p, now); err != nil {
		return QuotaState{}, err
	}
	length, _ := windowSchedule(p)
	st := QuotaState{
		Account: a.acct, Plan: p.Name, Balance: money.Amount(a.rec.Balance), Spent: money.Amount(a.rec.Spent),
		Held: a.held, Overdraft: p.Overdraft, InFlight: len(a.calls),
		Window: Allowance{Used: a.rec.WindowUsed, Reserved: a.winReserved, Limit: p.WindowRequests * 1000, ResetsAt: time.Unix(a.rec.WindowStart+length, 0).UTC()},
		Weekly: Allowance{Used: a.rec.WeekUsed, Reserved: a.weekReserved, Limit: p.WeeklyRequests * 1000, ResetsAt: time.Unix(a.rec.WeekStart+week, 0).UTC()},
		Images: a.daily(persistence.MediaImages, p.ImageDailyLimit),
		Video:  a.daily(persistence.MediaVideo, p.VideoDailySeconds),
	}
	if p.BurstScope != catalog.BurstScopeKey && p.BurstRPM > 0 {
		st.Burst = a.burst.budget(p.BurstRPM, now)
	}
	ids := make([]string, 0, len(a.keys))
	for id := range a.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		ks := a.keys[id]
		k := KeyState{KeyID: id}
		switch {
		case p.Throttle.Enabled() && ks.throttledUntil > now:
			k.Burst, k.ThrottledUntil = ks.recent.budget(p.Throttle.RPM, now), time.Unix(0, ks.throttledUntil).UTC()
		case p.BurstScope == catalog.BurstScopeKey && p.BurstRPM > 0:
			k.Burst = ks.recent.budget(p.BurstRPM, now)
		}
		if ks.act.width > 0 {
			ks.act.advance(now, ks.act.width)
			k.RecentCalls = ks.act.sum()
		}
		ks.recent.prune(now)
		if len(ks.recent.ts) > 0 || k.RecentCalls > 0 || !k.ThrottledUntil.IsZero() {
			st.Keys = append(st.Keys, k)
		}
	}
	return st, nil
}
