package quota

import (
	"math/rand/v2"

	"github.com/modelgate/modelgate/actors"
	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/actors/quota/step"
)

// accountActor is the only writer of one account's quota state and request log, for one
// incarnation. Every decision is the quota step's (step.Apply) over st, stamped with the
// service's clock; the actor persists what a step changed through its ledger. Its state runs
// ahead of the disk by the writes in flight (ledger.go); every answer that depends on a
// change is sent only once the change is durable. It runs on a mailbox, not a Hollywood
// actor: there is one per active account (docs/decisions.md, "Memory and the per-call
// account read").
type accountActor struct {
	box  actors.Mailbox
	svc  *Service
	acct string

	loaded       bool
	everLoaded   bool // a load happened in this incarnation
	windowsReady bool // the sliding windows hold the log's recent counted calls (fillWindows)
	// The ledger's (ledger.go) flags, beside the others: the actor stays in its size class.
	writing     bool // a write is in flight
	flushQueued bool // a flushMsg is on its way
	// life is the passivation handshake's count of routed messages; retired once passivated:
	// what still reaches it is sent on (handle).
	life placement.Passivation
	st   step.Account // the quota state; st.Rec is the durable part, as it will be once written

	ledger

	retiring *retireMsg // Close's retire, waiting for the writes in flight
}

func newAccountActor(s *Service, acct string) *accountActor {
	a := &accountActor{svc: s, acct: acct}
	// A fresh incarnation numbers its reservations from a random point, so a settle meant
	// for an earlier one finds nothing; below 2^62, so the ids never wrap.
	a.st.NextID = rand.Uint64N(1 << 62)
	a.ledger.reset()
	return a
}

// send queues m for the actor (a message to itself, or one the directory routed).
func (a *accountActor) send(m any) { a.box.Send(a, m) }

// ActorName names the actor in a panic's log line (actors.Handler).
func (a *accountActor) ActorName() string { return Kind + "/" + a.acct }

// Receive handles one message (actors.Handler).
func (a *accountActor) Receive(m any) {
	switch m := m.(type) {
	case tick:
		a.onTick()
	case flushMsg:
		a.flushQueued = false
		a.submit()
		a.resumeRetire()
	case writtenMsg:
		a.onWritten(m)
	case retireAgain:
		a.retire(m.m)
	case routed:
		a.handle(m)
	}
}

// handle serves a request that came through the directory.
func (a *accountActor) handle(m routed) {
	if a.life.Retired() { // cannot happen under the directory handshake; re-route rather than lose it
		if r, ok := m.(*retireMsg); ok {
			r.reply.send(struct{}{}, nil)
			return
		}
		if err := a.svc.send(a.acct, m); err != nil {
			m.Fail(err)
		}
		return
	}
	a.life.Arrived()
	if !a.loaded {
		if err := a.load(); err != nil {
			m.Fail(err)
			return
		}
	}
	switch m := m.(type) {
	case *stepMsg:
		a.step(m)
	case *retireMsg:
		a.retire(m)
	}
}

// now is the service's clock, which stamps every command.
func (a *accountActor) now() int64 { return a.svc.now().UnixNano() }

// apply runs one step and queues what it changed for the next write.
func (a *accountActor) apply(c *step.Command) step.Result {
	r := step.Apply(&a.st, c)
	if r.Dirty {
		a.next().dirty = true
	}
	if r.Log != nil {
		p := a.next()
		p.logs = append(p.logs, *r.Log)
	}
	if r.Grant.Key != "" {
		a.addGrant(r.Grant)
	}
	for _, id := range r.KeysToWrite() { // nil records are written as deletes
		a.keyChanged(id)
	}
	if len(r.Forgotten) > 0 {
		a.scheduleFlush()
	}
	if len(a.st.Calls) == 0 {
		a.st.Calls = nil // an idle account keeps no array of calls (208 bytes a call)
	}
	return r
}

// load reads the account's record and its keys' throttle state on the first request of
// this incarnation, or after a failed write threw away what was not on disk. The burst
// windows come from the request log, once a plan says they are needed (fillWindows).
func (a *accountActor) load() error {
	rec, _, err := a.svc.store.LoadQuota(a.acct)
	if err != nil {
		return err
	}
	keyStates, err := a.svc.store.LoadKeyQuotas(a.acct)
	if err != nil {
		return err
	}
	first := !a.everLoaded
	a.everLoaded = true
	a.st.Restore(rec, keyStates) // the calls in flight keep their reservations
	a.windowsReady = false
	// An image call never outlives the actor that admitted it (it passivates only when no
	// call is in flight), so an image reservation found on disk is what a crash left behind.
	if first && a.st.DropImageHolds() {
		a.next().dirty = true
	}
	a.loaded = true
	return nil
}

// fillWindows fills the sliding windows, once per load, with the counted calls of the last
// minute: the request log's entries are the durable record of every slot (their time is the
// slot), plus the calls in flight. A plan without burst limit or throttle, for a key without
// an rpm of its own, reads no window: they stay empty (nothing is added to a window no limit
// reads) until a command that reads one fills them.
func (a *accountActor) fillWindows(c *step.Command) error {
	p, now := &c.Plan, c.Now
	if a.windowsReady {
		return nil
	}
	if !p.NeedsWindows() && (c.KeyLimits == nil || c.KeyLimits.RPM == 0) {
		return nil
	}
	slots, err := a.svc.store.CountedSince(a.acct, max(a.st.Last, now)-step.BurstSpan+1)
	if err != nil {
		return err
	}
	a.st.FillWindows(p, slots)
	a.windowsReady = true
	return nil
}
