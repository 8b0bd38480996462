package quota

import (
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// admit is the one step: check burst, throttle, window, weekly and credits; reserve or
// refuse. It fills d (owned by the caller's reply, to keep this frame small).
func (a *accountActor) admit(r *AdmitRequest, d *Decision) error {
	p, now := r.Plan, a.svc.now().UnixNano()
	at := now
	if !r.At.IsZero() {
		at = r.At.UnixNano()
	}
	a.roll(p, now)
	if err := a.rebuildBurst(p, now); err != nil {
		return err
	}
	ks := a.key(r.KeyID)
	win := a.window(p, ks)
	if p.BurstRPM > 0 {
		if w := win.wait(p.BurstRPM, now); w > 0 {
			d.Refused, d.RetryAfter, d.MaxRPM, d.Burst = LimitBurst, w, p.BurstRPM, win.budget(p.BurstRPM, now)
			return nil
		}
	}
	if p.Throttle.Enabled() && ks.throttledUntil > now {
		if w := ks.recent.wait(p.Throttle.RPM, now); w > 0 {
			d.Refused, d.RetryAfter, d.MaxRPM, d.Burst = LimitThrottle, w, p.Throttle.RPM, ks.recent.budget(p.Throttle.RPM, now)
			return nil
		}
	}
	h := &callHold{plan: p, units: r.Units, expires: now + int64(a.svc.cfg.ReservationTTL), key: r.KeyID, at: at, epoch: ks.epoch}
	winFits, weekFits := a.fitsEach(p, r.Units)
	if winFits && weekFits {
		h.inPlan, h.winStart, h.weekStart = true, a.rec.WindowStart, a.rec.WeekStart
	} else {
		avail := money.Amount(a.rec.Balance) + p.Overdraft - a.held
		if avail <= 0 || avail < r.EstimatedCost {
			a.refuseAllowance(d, p, winFits, weekFits, now)
			if avail > 0 {
				d.Refused = LimitCredits
			}
			d.Burst = a.budget(p, ks, win, now) // unchanged: a refused call takes no slot
			d.MaxRPM = d.Burst.Limit
			return nil
		}
		h.paid, h.hold = true, r.EstimatedCost
	}
	a.reserve(h)
	a.occupy(p, r.KeyID, ks, win, at)
	a.nextID++
	a.calls[a.nextID] = h
	d.Admitted, d.Reservation, d.Paid = true, Reservation{Account: a.acct, ID: a.nextID}, h.paid
	d.Burst = a.budget(p, ks, win, now)
	d.MaxRPM = d.Burst.Limit
	return nil
}

// window is the burst window a call of key ks is checked against under p.
func (a *accountActor) window(p *catalog.Plan, ks *keyState) *slide {
	if p.BurstScope == catalog.BurstScopeKey {
		return &ks.recent
	}
	return &a.burst
}

// fitsEach reports whether units more fit the window and the weekly allowance, with the
// reservations of the calls in flight.
func (a *accountActor) fitsEach(p *catalog.Plan, units int64) (win, week bool) {
	winLimit, weekLimit := p.WindowRequests*1000, p.WeeklyRequests*1000
	return winLimit == 0 || a.rec.WindowUsed+a.winReserved+units <= winLimit,
		weekLimit == 0 || a.rec.WeekUsed+a.weekReserved+units <= weekLimit
}

// reserve holds what an admitted call may use: its units in the plan, or its estimated cost.
func (a *accountActor) reserve(h *callHold) {
	if h.inPlan {
		if h.winStart == a.rec.WindowStart {
			a.winReserved += h.units
		}
		if h.weekStart == a.rec.WeekStart {
			a.weekReserved += h.units
		}
	}
	if h.paid {
		a.held += h.hold
	}
}

// release gives a call's reservation back.
func (a *accountActor) release(h *callHold) {
	if h.inPlan {
		if h.winStart == a.rec.WindowStart {
			a.winReserved -= h.units
		}
		if h.weekStart == a.rec.WeekStart {
			a.weekReserved -= h.units
		}
	}
	if h.paid {
		a.held -= h.hold
	}
}

// refuseAllowance is the 402: the allowance that is used up, and when it returns (the later
// of the two when both are).
func (a *accountActor) refuseAllowance(d *Decision, p *catalog.Plan, winFits, weekFits bool, now int64) {
	length, _ := windowSchedule(p)
	d.Refused = LimitWindow
	reset := a.rec.WindowStart + length
	if !weekFits && (winFits || a.rec.WeekStart+week > reset) {
		d.Refused, reset = LimitWeekly, a.rec.WeekStart+week
	}
	d.ResetsAt = time.Unix(reset, 0).UTC()
	d.RetryAfter = d.ResetsAt.Sub(time.Unix(0, now))
}

// occupy notes a counted call at its slot at in the burst windows and the throttle's load
// history, and throttles the key when its load reaches the plan's trigger.
func (a *accountActor) occupy(p *catalog.Plan, keyID string, ks *keyState, win *slide, at int64) {
	if p.BurstScope != catalog.BurstScopeKey {
		win.add(at, p.BurstRPM)
	}
	t := p.Throttle
	if t.Enabled() {
		now := a.svc.now().UnixNano()
		if ks.throttledUntil <= now { // a throttled key's calls start no new history
			if ks.act.add(at, throttleWidth(t)) >= max(1, t.Trigger) {
				ks.throttledUntil = now + int64(t.Duration)
				ks.act = activity{}
				ks.epoch++
			}
		}
		a.keyChanged(keyID)
	}
	ks.recent.add(at, keyWindowKeep(p))
}

// keyWindowKeep is how many slots a key's own window keeps under p: its burst limit when the
// burst is per key, and the throttle's cap.
func keyWindowKeep(p *catalog.Plan) int64 {
	var keep int64
	if p.BurstScope == catalog.BurstScopeKey {
		keep = p.BurstRPM
	}
	if p.Throttle.Enabled() {
		keep = max(keep, p.Throttle.RPM)
	}
	return keep
}

// unoccupy takes a refunded call out of the sliding windows and the throttle's load
// history: an upstream failure counts toward no limit (and a 529 storm throttles no one).
func (a *accountActor) unoccupy(h *callHold) {
	if h.plan.BurstScope != catalog.BurstScopeKey {
		a.burst.remove(h.at)
	}
	if ks := a.keys[h.key]; ks != nil {
		ks.recent.remove(h.at)
		if ks.epoch == h.epoch && ks.act.remove(h.at) {
			a.keyChanged(h.key)
		}
	}
}

// budget is the per-minute cap in force for the key after this call.
func (a *accountActor) budget(p *catalog.Plan, ks *keyState, win *slide, now int64) Budget {
	if p.Throttle.Enabled() && ks.throttledUntil > now {
		return ks.recent.budget(p.Throttle.RPM, now)
	}
	if p.BurstRPM > 0 {
		return win.budget(p.BurstRPM, now)
	}
	return Budget{Reset: time.Unix(0, now).UTC()}
}
