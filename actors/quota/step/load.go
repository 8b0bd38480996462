package step

import (
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

// The single node keeps an account's durable record and its keys' throttle state in the
// store's own formats (persistence.QuotaRecord, KeyQuota) and its burst windows in the
// request log, as before the step existed; these helpers rebuild an Account from them.
// They run outside Apply, on the node that loads an account; a replica of a replicated
// account never calls them: its windows and calls are part of the Account it stores.

// Restore sets the durable part of a from what the store holds (a first load, or the
// rollback after a failed write) and empties the windows (FillWindows refills them). The
// calls in flight, NextID and Last stay: the calls keep their reservations.
func (a *Account) Restore(rec persistence.QuotaRecord, keys map[string]persistence.KeyQuota) {
	a.Rec, a.Burst, a.Keys = rec, nil, nil
	for id, q := range keys { // key keeps Keys sorted, whatever the map's order
		ks := a.key(id)
		ks.Epoch, ks.ThrottledUntil = q.Epoch, q.ThrottledUntil
		ks.Act = Activity{Width: q.Width, Last: q.Last}
		copy(ks.Act.N[:], q.Buckets)
	}
	a.WinReserved, a.WeekReserved, a.Held = 0, 0, 0
	for i := range a.Calls {
		a.reserve(&a.Calls[i])
	}
	for _, h := range a.Rec.Holds { // credit holds outlive an incarnation
		a.Held += money.Amount(h.Amount)
	}
}

// DropImageHolds releases the image reservations of the record (what a crash left behind
// when an image call never outlives the process that admitted it) and reports whether
// there were any. Video reservations stay: a video task resumes after a restart.
func (a *Account) DropImageHolds() bool {
	kept := a.Rec.Media[:0]
	for _, h := range a.Rec.Media {
		if h.Kind != persistence.MediaImages {
			kept = append(kept, h)
		}
	}
	dropped := len(kept) != len(a.Rec.Media)
	a.Rec.Media = kept
	return dropped
}

// FillWindows puts counted calls (the request log's recent slots) and the calls in flight
// into the sliding windows p reads, and into every key's own rpm window: the step does not
// know which keys have an rpm (their limits come with their commands), so each keeps its
// calls of the last minute, up to the largest rpm a key may have, and the first admission
// with the key's rpm trims them.
func (a *Account) FillWindows(p *Plan, slots []persistence.CountedCall) {
	keep := p.keyWindowKeep()
	add := func(at int64, key string) {
		if !p.BurstPerKey {
			a.Burst.add(at, p.BurstRPM)
		}
		ks := a.key(key)
		ks.Recent.add(at, keep)
		ks.RPM.add(at, persistence.MaxKeyRPM)
	}
	for _, s := range slots {
		add(s.Time, s.KeyID)
	}
	for _, h := range a.Calls {
		add(h.At, h.Key)
	}
}

// Rehold gives call id back the paid estimate a Hold took over (Result.Moved), when the
// write of that hold failed and the rollback dropped it.
func (a *Account) Rehold(id uint64, moved money.Amount) {
	if i, ok := a.call(id); ok && moved > 0 {
		a.Calls[i].Hold = moved
		a.Held += moved
	}
}
