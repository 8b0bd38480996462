package quota

import (
	"math/rand/v2"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// accountActor is the only writer of one account's quota state and request log, for one
// incarnation. Its state runs ahead of the disk by the writes in flight (ledger.go); every
// answer that depends on a change is sent only once the change is durable.
type accountActor struct {
	svc  *Service
	id   string // locator id of this incarnation: account#gen
	acct string

	loaded     bool
	everLoaded bool                    // a load happened in this incarnation
	rec        persistence.QuotaRecord // the durable part, as it will be once written

	winReserved, weekReserved int64        // in-plan reservations of rec.WindowStart / rec.WeekStart
	held                      money.Amount // estimated costs held for in-flight paid calls
	calls                     map[uint64]*callHold
	nextID                    uint64

	burst      slide // the account-wide burst window
	burstReady bool  // the burst windows hold the log's recent counted calls (rebuildBurst)
	keys       map[string]*keyState

	ledger

	received, seenAtTick uint64 // routed messages received; the count at the last tick
	engine               *actor.Engine
	pid                  *actor.PID
	timer                *time.Timer
	retiring             *retireMsg // Close's retire, waiting for the writes in flight
	retired              bool
}

// callHold is one admitted, unsettled call.
type callHold struct {
	plan                *catalog.Plan
	units               int64
	inPlan              bool
	winStart, weekStart int64        // the periods its units were reserved in
	paid                bool         // beyond the plan
	hold                money.Amount // estimated cost held
	expires             int64        // unix ns
	key                 string       // the calling key
	at                  int64        // its slot in the sliding windows (unix ns): the call's arrival
	epoch               uint32       // the key's load-history epoch it was counted in
}

// keyState is one key's sliding window (burst per key, and the throttle cap) and load.
type keyState struct {
	recent         slide
	act            activity
	epoch          uint32 // bumped when the load history starts over (a throttle begins)
	throttledUntil int64  // unix ns
}

func newAccountActor(s *Service, id string) *accountActor {
	acct := id
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		acct = id[:i]
	}
	a := &accountActor{svc: s, id: id, acct: acct, calls: map[uint64]*callHold{}, keys: map[string]*keyState{}, nextID: rand.Uint64()}
	a.ledger.reset()
	return a
}

func (a *accountActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case actor.Started:
		a.engine, a.pid = c.Engine(), c.PID()
		a.arm()
	case actor.Stopped:
		if a.timer != nil {
			a.timer.Stop()
		}
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
	if a.retired { // cannot happen under the directory handshake; re-route rather than lose it
		if r, ok := m.(*retireMsg); ok {
			r.reply.send(struct{}{}, nil)
			return
		}
		if err := a.svc.send(a.acct, m); err != nil {
			m.Fail(err)
		}
		return
	}
	a.received++
	if !a.loaded {
		if err := a.load(); err != nil {
			m.Fail(err)
			return
		}
	}
	switch m := m.(type) {
	case *admitMsg:
		a.onAdmit(m)
	case *settleMsg:
		a.settle(m)
	case *recordMsg:
		a.record(m)
	case *creditMsg:
		a.addCredits(m)
	case *stateMsg:
		a.onState(m)
	case *mediaMsg:
		a.media(m)
	case *chargeMsg:
		a.charge(m)
	case *holdMsg:
		a.hold(m)
	case *releaseHoldMsg:
		a.releaseHold(m)
	case *retireMsg:
		a.retire(m)
	}
}

// The handlers stay out of handle's frame (see routed).
//
//go:noinline
func (a *accountActor) onAdmit(m *admitMsg) {
	res := new(result[Decision]) // on the heap: it is about to travel anyway
	res.err = a.admit(&m.req, &res.v)
	m.reply.put(res)
}

//go:noinline
func (a *accountActor) onState(m *stateMsg) {
	st, err := a.state(m.plan)
	m.reply.send(st, err)
}

// load reads the account's record and its keys' throttle state on the first request of
// this incarnation, or after a failed write threw away what was not on disk. The burst
// windows come from the request log, once a plan says they are needed (rebuildBurst).
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
	a.rec, a.keys, a.burst, a.burstReady = rec, map[string]*keyState{}, slide{}, false
	for id, q := range keyStates {
		ks := a.key(id)
		ks.epoch, ks.throttledUntil = q.Epoch, q.ThrottledUntil
		ks.act = activity{width: q.Width, last: q.Last}
		copy(ks.act.n[:], q.Buckets)
	}
	if first {
		a.dropOrphanImages()
	}
	// The calls in flight keep their reservations (a reload after a failed write).
	a.winReserved, a.weekReserved, a.held = 0, 0, 0
	for _, h := range a.calls {
		a.reserve(h)
	}
	a.held += heldTotal(a.rec.Holds) // credit holds outlive an incarnation (holds.go)
	a.loaded = true
	return nil
}

// dropOrphanImages releases image reservations found on disk when an incarnation starts: an
// image call never outlives the actor that admitted it (it passivates only when no call is in
// flight), so such a reservation is what a crash left behind. Video reservations stay: a
// video task resumes after a restart.
func (a *accountActor) dropOrphanImages() {
	kept := a.rec.Media[:0]
	for _, h := range a.rec.Media {
		if h.Kind != persistence.MediaImages {
			kept = append(kept, h)
		}
	}
	if len(kept) != len(a.rec.Media) {
		a.pend.dirty = true
	}
	a.rec.Media = kept
}

// rebuildBurst fills the burst windows, once per load, with the counted calls of the last
// minute: the request log's entries are the durable record of every slot (their time is the
// slot), plus the calls in flight. A plan without burst limit or throttle reads no window.
func (a *accountActor) rebuildBurst(p *catalog.Plan, now int64) error {
	if a.burstReady {
		return nil
	}
	if p.BurstRPM == 0 && !p.Throttle.Enabled() {
		a.burstReady = true
		return nil
	}
	slots, err := a.svc.store.CountedSince(a.acct, now-burstSpan+1)
	if err != nil {
		return err
	}
	for _, h := range a.calls {
		slots = append(slots, persistence.CountedCall{Time: h.at, KeyID: h.key})
	}
	keyKeep := keyWindowKeep(p)
	for _, s := range slots {
		if p.BurstScope != catalog.BurstScopeKey {
			a.burst.add(s.Time, p.BurstRPM)
		}
		a.key(s.KeyID).recent.add(s.Time, keyKeep)
	}
	a.burstReady = true
	return nil
}

func (a *accountActor) key(id string) *keyState {
	ks := a.keys[id]
	if ks == nil {
		ks = &keyState{}
		a.keys[id] = ks
	}
	return ks
}

// roll moves the counters to the periods that hold now: a new window, week or day starts
// from zero. In-flight reservations of an earlier period no longer count against it.
func (a *accountActor) roll(p *catalog.Plan, now int64) {
	sec := floorSec(now)
	length, anchor := windowSchedule(p)
	if ws := periodStart(sec, anchor, length); ws != a.rec.WindowStart {
		a.rec.WindowStart, a.rec.WindowUsed, a.winReserved = ws, 0, 0
	}
	if wk := weekStart(sec); wk != a.rec.WeekStart {
		a.rec.WeekStart, a.rec.WeekUsed, a.weekReserved = wk, 0, 0
	}
	a.rollDay(sec)
}

func (a *accountActor) rollDay(sec int64) {
	d := dayStart(sec)
	if d == a.rec.Day {
		return
	}
	a.rec.Day, a.rec.Images, a.rec.Video = d, 0, 0
	// Reservations older than yesterday are forgotten; yesterday's may still commit (to nothing).
	kept := a.rec.Media[:0]
	for _, h := range a.rec.Media {
		if h.Day >= d-day {
			kept = append(kept, h)
		}
	}
	if len(kept) != len(a.rec.Media) {
		a.pend.dirty = true
	}
	a.rec.Media = kept
}
