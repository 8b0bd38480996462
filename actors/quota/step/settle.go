package step

import (
	"slices"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// settle applies an admitted call's outcome.
func (a *Account) settle(c *Command, now int64, r *Result) {
	i, ok := a.call(c.ID)
	if !ok {
		if c.Late {
			a.settleLate(c, now, r)
			return
		}
		r.Fail = UnknownReservation
		return
	}
	h := a.Calls[i]
	a.roll(&h.Plan, now, r) // while h is in Calls: a roll counts what the calls reserve
	a.release(&h)
	a.Calls = slices.Delete(a.Calls, i, i+1)
	a.finish(&h, c, now, r, true)
}

// settleLate bills a call whose reservation was never recorded (Command.Late): admitted
// now, by the rule an admission applies, but never refused (the call has been served) —
// in the plan when its units fit the window and the week, else paid from credits down to
// the plan's floor as any paid call. It took no slot in the burst windows, so it gives none
// back. The reservation is remembered as Lost for the admission's TTL (Command.TTL): its
// admission, should it apply after all, then reserves nothing.
func (a *Account) settleLate(c *Command, now int64, r *Result) {
	h := Call{ID: c.ID, Plan: c.Plan, Units: c.Reserved, Key: c.Key, At: c.At}
	if h.Units <= 0 {
		h.Units = 1000
	}
	if l := c.KeyLimits; l != nil && l.Budget > 0 {
		h.Budgeted = true
	}
	if !a.lost(c.ID, now) {
		a.remember(c.ID, max(now, c.At)+c.TTL)
	}
	a.roll(&h.Plan, now, r)
	if win, week := a.fitsEach(&h.Plan, h.Units); win && week {
		h.InPlan, h.WinStart, h.WeekStart = true, a.Rec.WindowStart, a.Rec.WeekStart
	} else {
		h.Paid = true
	}
	a.finish(&h, c, now, r, false)
}

// finish applies the outcome of call h, taken out of Calls (occupied: it took its slots in
// the burst windows at its admission).
func (a *Account) finish(h *Call, c *Command, now int64, r *Result, occupied bool) {
	r.Paid = h.Paid
	var units int64
	if c.Counts {
		r.Counted = true
		if h.InPlan {
			units = h.Units
			if c.Units > 0 && c.Units < units { // the model that served counts less than reserved
				units = c.Units
			}
			if h.WinStart == a.Rec.WindowStart {
				a.Rec.WindowUsed += units
			}
			if h.WeekStart == a.Rec.WeekStart {
				a.Rec.WeekUsed += units
			}
			r.Dirty = true
		}
		a.settleKey(h, c.Amount, now, r)
		if h.Paid {
			floor := -int64(h.Plan.Overdraft)
			r.Charged = money.Amount(max(0, min(int64(c.Amount), a.Rec.Balance-floor)))
			if r.Charged > 0 {
				a.Rec.Balance -= int64(r.Charged)
				a.Rec.Spent += int64(r.Charged)
				r.Dirty = true
			}
		}
	} else if occupied {
		a.unoccupy(h, r)
	}
	if c.Media != "" && a.endMedia(c.Media, c.MediaID, c.N > 0, c.N) {
		r.Dirty = true
	}
	r.Balance = money.Amount(a.Rec.Balance)
	if c.Log != nil {
		e := *c.Log
		if e.KeyID == "" {
			e.KeyID = h.Key
		}
		e.Counted, e.AllowanceUnits = r.Counted, units
		a.appendLog(r, &e, r.Charged)
	}
}

// appendLog makes e, charged cost, the next entry of the account's request log.
func (a *Account) appendLog(r *Result, e *persistence.LogEntry, charged money.Amount) {
	a.Rec.LogSeq++
	e.Cost, e.Seq = int64(charged), a.Rec.LogSeq
	r.Log, r.Dirty = e, true
}

// record logs a call answered without an admission. A client error counts as a call of its
// units: in the plan when they fit (as an admission would reserve them), else beyond it at
// no cost, since a client error costs nothing; never refused. It takes its slot in the burst
// windows and the throttle's load history at its arrival, the entry's time. A refusal only
// leaves its entry.
func (a *Account) record(c *Command, now int64, r *Result) {
	if c.Log == nil {
		r.Fail = Invalid
		return
	}
	e := *c.Log
	e.Counted, e.AllowanceUnits = false, 0
	if c.Counts {
		p, units := &c.Plan, c.Units
		if units == 0 {
			units = 1000
		}
		a.roll(p, now, r)
		if win, week := a.fitsEach(p, units); win && week {
			a.Rec.WindowUsed += units
			a.Rec.WeekUsed += units
			e.AllowanceUnits = units
		}
		ks := a.key(c.Key)
		a.occupy(p, c, ks, a.window(p, ks), max(0, e.Time), now, r)
		e.Counted = true
	}
	a.appendLog(r, &e, 0)
}

// endMedia commits (n produced) or releases a daily media reservation. A reservation made
// on an earlier day commits to nothing: that day's counter is gone.
func (a *Account) endMedia(kind string, id uint64, commit bool, n int64) bool {
	i := slices.IndexFunc(a.Rec.Media, func(h persistence.MediaHold) bool { return h.ID == id && h.Kind == kind })
	if i < 0 {
		return false
	}
	h := a.Rec.Media[i]
	a.Rec.Media = slices.Delete(a.Rec.Media, i, i+1)
	if commit && h.Day == a.Rec.Day {
		if kind == persistence.MediaVideo {
			a.Rec.Video += n
		} else {
			a.Rec.Images += n
		}
	}
	return true
}

// ReleaseOrphans releases the calls whose admitting node has started again since (live
// false for their node and incarnation): that node's earlier process, which alone would
// have settled them, is gone, and a restart must not leave its calls holding the
// account's credit and allowance until they expire. Like the expiry, it runs before an
// account's next step or view, at the same log position on every replica. It returns the
// ids released.
func ReleaseOrphans(a *Account, live func(node, inc uint64) bool) []uint64 {
	var released []uint64
	kept := a.Calls[:0]
	for _, h := range a.Calls {
		if h.Node != 0 && !live(h.Node, h.Inc) {
			a.release(&h)
			released = append(released, h.ID)
			continue
		}
		kept = append(kept, h)
	}
	clear(a.Calls[len(kept):])
	a.Calls = kept
	return released
}

// expire releases reservations whose settle never came and forgets keys with nothing left
// in their windows.
func (a *Account) expire(now int64, r *Result) {
	kept := a.Calls[:0]
	for _, h := range a.Calls {
		if h.Expires <= now {
			a.release(&h)
			r.Expired = append(r.Expired, h.ID)
			continue
		}
		kept = append(kept, h)
	}
	clear(a.Calls[len(kept):])
	a.Calls = kept
	media := a.Rec.Media[:0]
	for _, h := range a.Rec.Media {
		if h.Expires != 0 && h.Expires <= now {
			r.Dirty = true
			continue
		}
		media = append(media, h)
	}
	clear(a.Rec.Media[len(media):])
	a.Rec.Media = media
	keys := a.Keys[:0]
	for _, ks := range a.Keys {
		ks.Recent.prune(now)
		ks.RPM.prune(now)
		record := keyRecordOf(&ks)
		if ks.Act.Width > 0 {
			ks.Act.advance(now, ks.Act.Width)
		}
		if len(ks.Recent) > 0 || len(ks.RPM) > 0 || ks.ThrottledUntil > now || ks.Act.sum() > 0 {
			if !keyRecordsEqual(record, keyRecordOf(&ks)) {
				r.Advanced = append(r.Advanced, ks.ID)
			}
			keys = append(keys, ks)
			continue
		}
		if ks.Epoch != 0 || ks.Act.Width != 0 || ks.ThrottledUntil != 0 {
			r.Forgotten = append(r.Forgotten, ks.ID) // its stored state is deleted
		}
	}
	clear(a.Keys[len(keys):])
	a.Keys = keys
}
