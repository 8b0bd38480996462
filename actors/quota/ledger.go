package quota

import (
	"log/slog"
	"slices"

	"github.com/modelgate/modelgate/persistence"
)

// The account's writes. A change is applied in memory at once; the answers that depend on it
// wait until it is on disk. At most one write of the account is in flight: what changes
// meanwhile is gathered in pend and written next, one batch for all of it, and the store
// commits the writes of every account queued during one fsync together (a group commit).
// A write that fails throws away everything not on disk: the account reloads its durable
// state, and every answer that waited on the lost changes gets the error.

// ledger is the part of the actor that tracks its writes.
type ledger struct {
	// pend is the next write, made by the first change after a write went: nil while
	// nothing waits (every active account's actor is idle most of the time).
	pend      *pendingWrite
	unwritten map[string]persistence.CreditGrant // grants not yet on disk, by idempotency key
}

// pendingWrite is what the next write carries.
type pendingWrite struct {
	dirty   bool // the record changed
	logs    []persistence.LogEntry
	grants  []persistence.GrantWrite
	keys    map[string]bool // keys whose throttle state changed (written, or deleted when gone)
	waiters []func(error)   // answers sent once the write is durable (or failed)
}

func (p *pendingWrite) empty() bool {
	return p == nil || !p.dirty && len(p.logs) == 0 && len(p.grants) == 0 && len(p.keys) == 0 && len(p.waiters) == 0
}

// next is the write being gathered.
func (l *ledger) next() *pendingWrite {
	if l.pend == nil {
		l.pend = new(pendingWrite)
	}
	return l.pend
}

func (l *ledger) reset() {
	l.pend = nil
	l.unwritten = nil // made by the first grant: most accounts have none in flight
}

// idle reports that nothing is waiting to be written or being written.
func (a *accountActor) idle() bool { return !a.writing && !a.flushQueued && a.pend.empty() }

// await answers through done once everything changed so far is durable.
func (a *accountActor) await(done func(error)) {
	p := a.next()
	p.waiters = append(p.waiters, done)
	a.scheduleFlush()
}

// scheduleFlush writes what is pending once the messages queued now are handled: they
// share the write.
func (a *accountActor) scheduleFlush() {
	if !a.flushQueued {
		a.flushQueued = true
		a.send(flushMsg{})
	}
}

// keyChanged marks a key's throttle state for the next write.
func (a *accountActor) keyChanged(id string) {
	p := a.next()
	if p.keys == nil {
		p.keys = map[string]bool{}
	}
	p.keys[id] = true
}

// addGrant queues a top-up or a charge under its idempotency key.
func (a *accountActor) addGrant(g persistence.GrantWrite) {
	if a.unwritten == nil {
		a.unwritten = map[string]persistence.CreditGrant{}
	}
	a.unwritten[g.Key] = g.Grant
	p := a.next()
	p.grants = append(p.grants, g)
	p.dirty = true
}

// grantFor is the grant recorded under an idempotency key, written or not.
func (a *accountActor) grantFor(key string) (persistence.CreditGrant, bool, error) {
	if g, ok := a.unwritten[key]; ok {
		return g, true, nil
	}
	return a.svc.store.CreditGrantFor(a.acct, key)
}

// submit hands what is pending to the store, unless a write is in flight (then it goes
// when that one is done). The answers waiting on it are sent from the store's goroutine
// as soon as the write is durable, the actor hearing of it after (writtenMsg); after a
// failure the actor answers them itself, once it has gone back to what is on disk.
func (a *accountActor) submit() {
	if a.writing || a.pend.empty() {
		return
	}
	p := a.pend
	a.pend = nil
	if !p.dirty && len(p.logs) == 0 && len(p.grants) == 0 && len(p.keys) == 0 {
		for _, w := range p.waiters { // nothing to write: what they wait on is durable already
			w(nil)
		}
		return
	}
	rec := a.st.Rec
	rec.Media, rec.Holds = slices.Clone(rec.Media), slices.Clone(rec.Holds)
	w := persistence.QuotaWrite{Account: a.acct, State: &rec, Grants: p.grants, Log: p.logs}
	for id := range p.keys {
		w.Keys = append(w.Keys, persistence.KeyQuotaWrite{KeyID: id, State: a.st.KeyRecord(id)})
	}
	a.writing = true
	waiters, grants := p.waiters, p.grants
	a.svc.store.SubmitQuota(w, func(err error) {
		if err != nil { // answered by the actor once it is back to what is on disk
			a.send(writtenMsg{err: err, waiters: waiters})
			return
		}
		for _, w := range waiters {
			w(nil)
		}
		a.send(writtenMsg{grants: grants})
	})
}

// onWritten follows a write's outcome: the next write goes, or after a failure everything
// not on disk is thrown away.
func (a *accountActor) onWritten(m writtenMsg) {
	a.writing = false
	if m.err == nil {
		for _, g := range m.grants {
			delete(a.unwritten, g.Key)
		}
	} else {
		if !persistence.IsDiskFull(m.err) { // a full disk is logged once by the store, not per write
			slog.Error("quota write failed; the account returns to what is on disk", "account", a.acct, "err", m.err)
		}
		waiters := m.waiters
		if a.pend != nil { // the later ones were built on the lost changes
			waiters = append(waiters, a.pend.waiters...)
		}
		a.reset()
		if lerr := a.load(); lerr != nil {
			a.loaded = false // the next message tries again
		}
		for _, w := range waiters { // after the rollback: an answer never precedes it
			w(m.err)
		}
	}
	a.submit()
	a.resumeRetire()
}

// resumeRetire carries on with Close's retire once the writes are done.
func (a *accountActor) resumeRetire() {
	if m := a.retiring; m != nil && a.idle() {
		a.retire(m)
	}
}
