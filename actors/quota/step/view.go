package step

import (
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// view is the admin view under plan p. Like any step it rolls the counters and prunes the
// windows to now.
func (a *Account) view(c *Command, now int64, r *Result) *State {
	p := &c.Plan
	a.roll(p, now, r)
	length, _ := p.windowSchedule()
	st := &State{
		Balance: money.Amount(a.Rec.Balance), Spent: money.Amount(a.Rec.Spent), Held: a.Held, InFlight: len(a.Calls),
		Window: Counter{Used: a.Rec.WindowUsed, Reserved: a.WinReserved, Limit: p.WindowRequests * 1000, ResetsAt: a.Rec.WindowStart + length},
		Weekly: Counter{Used: a.Rec.WeekUsed, Reserved: a.WeekReserved, Limit: p.WeeklyRequests * 1000, ResetsAt: a.Rec.WeekStart + Week},
		Images: a.daily(persistence.MediaImages, p.ImageDailyLimit),
		Video:  a.daily(persistence.MediaVideo, p.VideoDailySeconds),
	}
	if !p.BurstPerKey && p.BurstRPM > 0 {
		st.Burst = a.Burst.budget(p.BurstRPM, now)
	}
	if c.Key != "" && c.KeyLimits != nil {
		st.Key = a.keyView(c.Key, c.KeyLimits, now)
	}
	for i := range a.Keys {
		ks := &a.Keys[i]
		k := KeyView{KeyID: ks.ID}
		switch {
		case p.Throttle.enabled() && ks.ThrottledUntil > now:
			k.Burst, k.ThrottledUntil = ks.Recent.budget(p.Throttle.RPM, now), ks.ThrottledUntil
		case p.BurstPerKey && p.BurstRPM > 0:
			k.Burst = ks.Recent.budget(p.BurstRPM, now)
		}
		if ks.Act.Width > 0 {
			ks.Act.advance(now, ks.Act.Width)
			k.RecentCalls = ks.Act.sum()
		}
		ks.Recent.prune(now)
		if len(ks.Recent) > 0 || k.RecentCalls > 0 || k.ThrottledUntil != 0 {
			st.Keys = append(st.Keys, k)
		}
	}
	return st
}
