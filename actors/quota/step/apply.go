package step

import (
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// Apply performs one command on the account and returns what it decided and what to
// persist. It reads nothing but a and c, and changes nothing but a.
func Apply(a *Account, c *Command) Result {
	var r Result
	if c.Kind == 0 || c.Kind >= maxKind || c.Now < 0 || c.At < 0 || c.Units < 0 || c.Amount < 0 || c.N < 0 || c.TTL < 0 {
		r.Fail = Invalid
		return r
	}
	now := max(a.Last, c.Now)
	a.Last = now
	switch c.Kind {
	case Admit:
		a.admit(c, now, &r)
	case Settle:
		a.settle(c, now, &r)
	case Record:
		a.record(c, now, &r)
	case AddCredits:
		a.addCredits(c, now, &r)
	case Reverse:
		a.reverse(c, now, &r)
	case Charge:
		a.charge(c, now, &r)
	case Hold:
		a.hold(c, now, &r)
	case ReleaseHold:
		if _, found := a.takeHold(c.Key); found {
			r.Dirty = true
		}
	case MediaReserve:
		a.mediaReserve(c, now, &r)
	case MediaCommit, MediaRelease:
		a.rollDay(floorSec(now), &r)
		if !a.endMedia(c.Media, c.ID, c.Kind == MediaCommit, c.N) {
			r.Fail = UnknownReservation
			return r
		}
		r.Admitted, r.Dirty = true, true
	case Expire:
		a.expire(now, &r)
	case View:
		r.View = a.view(c, now, &r)
	}
	return r
}

// roll moves the counters to the periods that hold now: a new window, week or day starts
// from zero. In-flight reservations of an earlier period no longer count against it.
func (a *Account) roll(p *Plan, now int64, r *Result) {
	sec := floorSec(now)
	length, anchor := p.windowSchedule()
	if ws := PeriodStart(sec, anchor, length); ws != a.Rec.WindowStart {
		a.Rec.WindowStart, a.Rec.WindowUsed = ws, 0
		a.WinReserved = a.reservedIn(func(h *Call) bool { return h.WinStart == ws })
	}
	if wk := weekStart(sec); wk != a.Rec.WeekStart {
		a.Rec.WeekStart, a.Rec.WeekUsed = wk, 0
		a.WeekReserved = a.reservedIn(func(h *Call) bool { return h.WeekStart == wk })
	}
	a.rollDay(sec, r)
}

// reservedIn is what the in-plan calls reserved in a period hold. Usually nothing: a call
// admitted in an earlier period does not count in a new one. But a plan change can move the
// window's schedule back to the period a call in flight was admitted in.
func (a *Account) reservedIn(period func(*Call) bool) int64 {
	var n int64
	for i := range a.Calls {
		if h := &a.Calls[i]; h.InPlan && period(h) {
			n += h.Units
		}
	}
	return n
}

func (a *Account) rollDay(sec int64, r *Result) {
	d := dayStart(sec)
	if d == a.Rec.Day {
		return
	}
	a.Rec.Day, a.Rec.Images, a.Rec.Video = d, 0, 0
	// Reservations older than yesterday are forgotten; yesterday's may still commit (to nothing).
	kept := a.Rec.Media[:0]
	for _, h := range a.Rec.Media {
		if h.Day >= d-Day {
			kept = append(kept, h)
		}
	}
	if len(kept) != len(a.Rec.Media) {
		r.Dirty = true
	}
	a.Rec.Media = kept
}

// admit checks burst, throttle, window, weekly and credits; reserves or refuses.
func (a *Account) admit(c *Command, now int64, r *Result) {
	p := &c.Plan
	at := c.At
	if at == 0 {
		at = now
	}
	units := c.Units
	if units == 0 {
		units = 1000
	}
	a.roll(p, now, r)
	ks := a.key(c.Key)
	win := a.window(p, ks)
	if c.Res != 0 {
		i, again := a.call(c.Res)
		if again || a.lost(c.Res, now) { // this admission again (a retry), or one already billed Late
			r.Admitted, r.ID = true, c.Res
			r.Paid = again && a.Calls[i].Paid
			r.Burst = a.budget(p, c.KeyLimits, ks, win, now)
			r.MaxRPM = r.Burst.Limit
			return
		}
	}
	if p.BurstRPM > 0 {
		if w := win.wait(p.BurstRPM, now); w > 0 {
			r.Refused, r.RetryAfter, r.MaxRPM, r.Burst = LimitBurst, w, p.BurstRPM, win.budget(p.BurstRPM, now)
			return
		}
	}
	if p.Throttle.enabled() && ks.ThrottledUntil > now {
		if w := ks.Recent.wait(p.Throttle.RPM, now); w > 0 {
			r.Refused, r.RetryAfter, r.MaxRPM, r.Burst = LimitThrottle, w, p.Throttle.RPM, ks.Recent.budget(p.Throttle.RPM, now)
			return
		}
	}
	if a.checkKey(c, ks, now, r) {
		if r.Refused != LimitKeyRPM {
			r.Burst = a.budget(p, c.KeyLimits, ks, win, now)
			r.MaxRPM = r.Burst.Limit
		}
		return
	}
	h := Call{Plan: *p, Units: units, Expires: now + c.TTL, Key: c.Key, At: at, Epoch: ks.Epoch, Node: c.Node, Inc: c.Inc}
	if l := c.KeyLimits; l != nil && l.Budget > 0 {
		h.Budgeted, h.KeyHold = true, c.Amount
	}
	winFits, weekFits := a.fitsEach(p, units)
	if winFits && weekFits {
		h.InPlan, h.WinStart, h.WeekStart = true, a.Rec.WindowStart, a.Rec.WeekStart
	} else {
		avail := money.Amount(a.Rec.Balance) + p.Overdraft - a.Held
		if avail <= 0 || avail < c.Amount {
			a.refuseAllowance(r, p, winFits, weekFits, now)
			if avail > 0 {
				r.Refused = LimitCredits
			}
			r.Burst = a.budget(p, c.KeyLimits, ks, win, now) // unchanged: a refused call takes no slot
			r.MaxRPM = r.Burst.Limit
			return
		}
		h.Paid, h.Hold = true, c.Amount
	}
	a.reserve(&h)
	a.occupy(p, c, ks, win, at, now, r)
	if h.ID = c.Res; h.ID == 0 {
		a.NextID++
		h.ID = a.NextID
	}
	a.addCall(h)
	r.Admitted, r.ID, r.Paid = true, h.ID, h.Paid
	r.Burst = a.budget(p, c.KeyLimits, ks, win, now)
	r.MaxRPM = r.Burst.Limit
}

// window is the burst window a call of key ks is checked against under p.
func (a *Account) window(p *Plan, ks *Key) *Slide {
	if p.BurstPerKey {
		return &ks.Recent
	}
	return &a.Burst
}

// fitsEach reports whether units more fit the window and the weekly allowance, with the
// reservations of the calls in flight.
func (a *Account) fitsEach(p *Plan, units int64) (win, week bool) {
	return fits(a.Rec.WindowUsed+a.WinReserved+units, p.WindowRequests),
		fits(a.Rec.WeekUsed+a.WeekReserved+units, p.WeeklyRequests)
}

// fits says whether a count of thousandths stays within a plan limit of calls (0: none).
func fits(count, limit int64) bool { return limit == 0 || count <= limit*1000 }

// reserve holds what an admitted call may use: its units in the plan, or its estimated cost.
func (a *Account) reserve(h *Call) {
	if h.InPlan {
		if h.WinStart == a.Rec.WindowStart {
			a.WinReserved += h.Units
		}
		if h.WeekStart == a.Rec.WeekStart {
			a.WeekReserved += h.Units
		}
	}
	if h.Paid {
		a.Held += h.Hold
	}
}

// release gives a call's reservation back.
func (a *Account) release(h *Call) {
	if h.InPlan {
		if h.WinStart == a.Rec.WindowStart {
			a.WinReserved -= h.Units
		}
		if h.WeekStart == a.Rec.WeekStart {
			a.WeekReserved -= h.Units
		}
	}
	if h.Paid {
		a.Held -= h.Hold
	}
}

// refuseAllowance is the 402: the allowance that is used up, and when it returns (the later
// of the two when both are).
func (a *Account) refuseAllowance(r *Result, p *Plan, winFits, weekFits bool, now int64) {
	length, _ := p.windowSchedule()
	r.Refused = LimitWindow
	reset := a.Rec.WindowStart + length
	if !weekFits && (winFits || a.Rec.WeekStart+Week > reset) {
		r.Refused, reset = LimitWeekly, a.Rec.WeekStart+Week
	}
	r.ResetsAt = reset
	r.RetryAfter = reset*1e9 - now
}

// occupy notes a counted call of c's key at its slot at in the burst windows, the key's
// own rpm window and the throttle's load history, and throttles the key when its load
// reaches the plan's trigger.
func (a *Account) occupy(p *Plan, c *Command, ks *Key, win *Slide, at, now int64, r *Result) {
	keyID := c.Key
	if l := c.KeyLimits; l != nil && l.RPM > 0 {
		ks.RPM.add(at, l.RPM)
	}
	if !p.BurstPerKey {
		win.add(at, p.BurstRPM)
	}
	t := p.Throttle
	if t.enabled() {
		if ks.ThrottledUntil <= now { // a throttled key's calls start no new history
			if ks.Act.add(at, t.Width) >= max(1, t.Trigger) {
				ks.ThrottledUntil = now + t.Duration
				ks.Act = Activity{}
				ks.Epoch++
			}
		}
		r.KeyChanged = keyID
	}
	ks.Recent.add(at, p.keyWindowKeep())
}

// unoccupy takes a refunded call out of the sliding windows and the throttle's load
// history: an upstream failure counts toward no limit (and a 529 storm throttles no one).
func (a *Account) unoccupy(h *Call, r *Result) {
	if !h.Plan.BurstPerKey {
		a.Burst.remove(h.At)
	}
	if ks := a.findKey(h.Key); ks != nil {
		ks.Recent.remove(h.At)
		ks.RPM.remove(h.At)
		if ks.Epoch == h.Epoch && ks.Act.remove(h.At) {
			r.KeyChanged = h.Key
		}
	}
}

// budget is the per-minute cap in force for the key after this call: the plan's (the
// throttle's when throttled), or the key's own rpm when that leaves fewer calls.
func (a *Account) budget(p *Plan, l *persistence.KeyLimits, ks *Key, win *Slide, now int64) Budget {
	b := Budget{Reset: now}
	switch {
	case p.Throttle.enabled() && ks.ThrottledUntil > now:
		b = ks.Recent.budget(p.Throttle.RPM, now)
	case p.BurstRPM > 0:
		b = win.budget(p.BurstRPM, now)
	}
	if l != nil && l.RPM > 0 {
		if kb := ks.RPM.budget(l.RPM, now); b.Limit == 0 || kb.Remaining < b.Remaining {
			return kb
		}
	}
	return b
}
