package quota

import (
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// accountActor is the only writer of one account's quota state, for one incarnation.
type accountActor struct {
	svc  *Service
	id   string // locator id of this incarnation: account#gen
	acct string

	loaded bool
	rec    persistence.QuotaRecord // the durable part (its burst and throttle fields kept nil here)
	dirty  bool                    // rec has changes not yet written

	winReserved, weekReserved int64        // in-plan reservations of rec.WindowStart / rec.WeekStart
	held                      money.Amount // estimated costs held for in-flight paid calls
	calls                     map[uint64]*callHold
	nextID                    uint64

	burst slide // the account-wide burst window
	keys  map[string]*keyState

	logs        []persistence.LogEntry // written with the next write
	waiters     []waiter               // settles answered after the next write
	flushQueued bool
	moneyMoved  bool // a settle since the last write charged credits: the next write syncs
	flushNow    bool // an immediate flush is on its way
	writeFailed bool // the last write failed: a retry is scheduled (writeRetry)

	received, seenAtTick uint64 // routed messages received; the count at the last tick
	engine               *actor.Engine
	pid                  *actor.PID
	timer                *time.Timer
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
	at                  int64        // admission time (unix ns): its slot in the sliding windows
	epoch               uint32       // the key's load-history epoch it was counted in
}

// keyState is one key's sliding window (burst per key, and the throttle cap) and load.
type keyState struct {
	recent         slide
	act            activity
	epoch          uint32 // bumped when the load history starts over (a throttle begins)
	throttledUntil int64  // unix ns
}

type waiter struct {
	reply reply[Settlement]
	s     Settlement
}

func newAccountActor(s *Service, id string) *accountActor {
	acct := id
	if i := strings.LastIndexByte(id, '#'); i >= 0 {
		acct = id[:i]
	}
	return &accountActor{svc: s, id: id, acct: acct, calls: map[uint64]*callHold{}, keys: map[string]*keyState{}, nextID: rand.Uint64()}
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
		a.flushQueued, a.flushNow = false, false
		a.persist(false, "", nil)
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
	a.admit(&m.req, &res.v)
	m.reply.put(res)
}

//go:noinline
func (a *accountActor) onState(m *stateMsg) { m.reply.send(a.state(m.plan), nil) }

// load reads the account's record on the first request of this incarnation.
func (a *accountActor) load() error {
	if a.loaded {
		return nil
	}
	rec, _, err := a.svc.store.LoadQuota(a.acct)
	if err != nil {
		return err
	}
	now := a.svc.now().UnixNano()
	a.burst.ts = append(a.burst.ts[:0], rec.AccountBurst...)
	a.burst.prune(now)
	for key, ts := range rec.KeyBurst {
		s := &a.key(key).recent
		s.ts = append(s.ts[:0], ts...)
		s.prune(now)
	}
	for key, until := range rec.Throttled {
		if until > now {
			a.key(key).throttledUntil = until
		}
	}
	rec.AccountBurst, rec.KeyBurst, rec.Throttled = nil, nil, nil
	a.rec, a.loaded = rec, true
	a.held += heldTotal(rec.Holds) // credit holds outlive an incarnation (holds.go)
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
		a.dirty = true
	}
	a.rec.Media = kept
}

// admit is the one step: check burst, throttle, window, weekly and credits; reserve or
// refuse. It fills d (owned by the caller's reply, to keep this frame small).
func (a *accountActor) admit(r *AdmitRequest, d *Decision) {
	p, now := r.Plan, a.svc.now().UnixNano()
	a.roll(p, now)
	ks := a.key(r.KeyID)
	win := &a.burst
	if p.BurstScope == catalog.BurstScopeKey {
		win = &ks.recent
	}
	if p.BurstRPM > 0 {
		if w := win.wait(p.BurstRPM, now); w > 0 {
			d.Refused, d.RetryAfter, d.MaxRPM, d.Burst = LimitBurst, w, p.BurstRPM, win.budget(p.BurstRPM, now)
			return
		}
	}
	if p.Throttle.Enabled() && ks.throttledUntil > now {
		if w := ks.recent.wait(p.Throttle.RPM, now); w > 0 {
			d.Refused, d.RetryAfter, d.MaxRPM, d.Burst = LimitThrottle, w, p.Throttle.RPM, ks.recent.budget(p.Throttle.RPM, now)
			return
		}
	}
	h := &callHold{plan: p, units: r.Units, expires: now + int64(a.svc.cfg.ReservationTTL), key: r.KeyID, at: now, epoch: ks.epoch}
	winLimit, weekLimit := p.WindowRequests*1000, p.WeeklyRequests*1000
	winFits := winLimit == 0 || a.rec.WindowUsed+a.winReserved+r.Units <= winLimit
	weekFits := weekLimit == 0 || a.rec.WeekUsed+a.weekReserved+r.Units <= weekLimit
	if winFits && weekFits {
		h.inPlan, h.winStart, h.weekStart = true, a.rec.WindowStart, a.rec.WeekStart
		a.winReserved += r.Units
		a.weekReserved += r.Units
	} else {
		avail := money.Amount(a.rec.Balance) + p.Overdraft - a.held
		if avail <= 0 || avail < r.EstimatedCost {
			a.refuseAllowance(d, p, winFits, weekFits, now)
			if avail > 0 {
				d.Refused = LimitCredits
			}
			d.Burst = a.budget(p, ks, win, now) // unchanged: a refused call takes no slot
			d.MaxRPM = d.Burst.Limit
			return
		}
		h.paid, h.hold = true, r.EstimatedCost
		a.held += r.EstimatedCost
	}
	a.record(p, ks, win, now)
	a.nextID++
	a.calls[a.nextID] = h
	d.Admitted, d.Reservation, d.Paid = true, Reservation{Account: a.acct, ID: a.nextID}, h.paid
	d.Burst = a.budget(p, ks, win, now)
	d.MaxRPM = d.Burst.Limit
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

// record notes an admitted call in the burst windows and the throttle's load history, and
// throttles the key when its load reaches the plan's trigger.
func (a *accountActor) record(p *catalog.Plan, ks *keyState, win *slide, now int64) {
	var keyKeep int64
	if p.BurstScope == catalog.BurstScopeKey {
		keyKeep = p.BurstRPM
	} else {
		win.add(now, p.BurstRPM)
	}
	t := p.Throttle
	if t.Enabled() {
		keyKeep = max(keyKeep, t.RPM)
		if ks.throttledUntil <= now { // a throttled key's calls start no new history
			if ks.act.add(now, throttleWidth(t)) >= max(1, t.Trigger) {
				ks.throttledUntil = now + int64(t.Duration)
				ks.act = activity{}
				ks.epoch++
			}
		}
	}
	ks.recent.add(now, keyKeep)
}

// unrecord takes a refunded call out of the sliding windows and the throttle's load
// history: an upstream failure counts toward no limit (and a 529 storm throttles no one).
func (a *accountActor) unrecord(h *callHold) {
	if h.plan.BurstScope != catalog.BurstScopeKey {
		a.burst.remove(h.at)
	}
	if ks := a.keys[h.key]; ks != nil {
		ks.recent.remove(h.at)
		if ks.epoch == h.epoch {
			ks.act.remove(h.at)
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

// settle applies an outcome; counted settles and log entries are answered after the write.
func (a *accountActor) settle(m *settleMsg) {
	h, ok := a.calls[m.res.ID]
	if !ok {
		a.unknownReservation(m)
		return
	}
	delete(a.calls, m.res.ID)
	a.roll(h.plan, a.svc.now().UnixNano())
	a.release(h)
	if !m.out.Counts {
		a.unrecord(h)
	}
	s := Settlement{Paid: h.paid}
	if m.out.Counts {
		s.Counted = true
		if h.inPlan {
			if h.winStart == a.rec.WindowStart {
				a.rec.WindowUsed += h.units
			}
			if h.weekStart == a.rec.WeekStart {
				a.rec.WeekUsed += h.units
			}
			a.dirty = true
		}
		if h.paid {
			floor := -int64(h.plan.Overdraft)
			s.Charged = money.Amount(max(0, min(int64(m.out.Cost), a.rec.Balance-floor)))
			if s.Charged > 0 {
				a.rec.Balance -= int64(s.Charged)
				a.rec.Spent += int64(s.Charged)
				a.dirty, a.moneyMoved = true, true
			}
		}
	}
	s.Balance = money.Amount(a.rec.Balance)
	if m.out.Log != nil {
		a.appendLog(m.out.Log, s.Charged)
	}
	if !a.dirty && len(a.logs) == 0 {
		m.reply.send(s, nil)
		return
	}
	a.waiters = append(a.waiters, waiter{m.reply, s})
	a.scheduleFlush(a.moneyMoved)
}

// countsFlushDelay is how long settles that moved no money wait to share one write: they
// need no fsync and nobody waits on them (the answer went out before the settle), so many
// calls share one write instead of paying one each.
const countsFlushDelay = 20 * time.Millisecond

// scheduleFlush writes the pending settles: at once when money moved (the charge must be
// durable before it is acknowledged), else a moment later.
func (a *accountActor) scheduleFlush(now bool) {
	switch {
	case now && !a.flushNow:
		a.flushQueued, a.flushNow = true, true
		a.engine.Send(a.pid, flushMsg{}) // behind every message queued now: one sync for all
	case !a.flushQueued:
		a.flushQueued = true
		eng, pid := a.engine, a.pid
		time.AfterFunc(countsFlushDelay, func() { eng.Send(pid, flushMsg{}) })
	}
}

//go:noinline
func (a *accountActor) unknownReservation(m *settleMsg) {
	m.reply.send(Settlement{}, fmt.Errorf("%w: %s/%d", ErrUnknownReservation, a.acct, m.res.ID))
}

// appendLog queues a settle's log entry, with the cost it was charged.
//
//go:noinline
func (a *accountActor) appendLog(e *persistence.LogEntry, charged money.Amount) {
	a.logs = append(a.logs, *e)
	a.logs[len(a.logs)-1].Cost = int64(charged)
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

func (a *accountActor) addCredits(m *creditMsg) {
	g, found, err := a.svc.store.CreditGrantFor(a.acct, m.key)
	switch {
	case err != nil:
		m.reply.send(creditResult{}, err)
		return
	case found && g.Amount != int64(m.amount):
		m.reply.send(creditResult{balance: money.Amount(a.rec.Balance)}, fmt.Errorf("%w: key %q added %s, not %s",
			ErrIdempotencyConflict, m.key, money.Amount(g.Amount), m.amount))
		return
	case found:
		m.reply.send(creditResult{balance: money.Amount(a.rec.Balance)}, nil)
		return
	}
	if a.rec.Balance > math.MaxInt64-int64(m.amount) {
		m.reply.send(creditResult{}, fmt.Errorf("%w: balance would overflow", ErrInvalid))
		return
	}
	a.rec.Balance += int64(m.amount)
	grant := &persistence.CreditGrant{Amount: int64(m.amount), At: a.svc.now().Unix(), Balance: a.rec.Balance}
	if err := a.persist(false, m.key, grant); err != nil {
		a.rec.Balance -= int64(m.amount)
		m.reply.send(creditResult{}, err)
		return
	}
	m.reply.send(creditResult{balance: money.Amount(a.rec.Balance), added: true}, nil)
}

// persist writes the record (with the burst and throttle history when full, with a top-up
// when grant is set) and the pending log entries in one synced batch, then answers the
// waiting settles with the outcome.
func (a *accountActor) persist(full bool, key string, grant *persistence.CreditGrant) error {
	if !full && grant == nil && !a.dirty && len(a.logs) == 0 {
		a.answer(nil)
		return nil
	}
	rec := a.rec
	if full {
		a.volatile(&rec, a.svc.now().UnixNano())
	}
	err := a.svc.store.WriteQuota(persistence.QuotaWrite{Account: a.acct, State: &rec, GrantKey: key, Grant: grant, Log: a.logs,
		NoSync: grant == nil && !a.moneyMoved && !full})
	if err == nil {
		a.dirty, a.logs, a.moneyMoved = false, nil, false
		if a.writeFailed {
			a.writeFailed = false
			slog.Info("quota writes succeed again", "account", a.acct)
		}
	} else {
		a.retryWrite(err)
	}
	a.answer(err)
	return err
}

// writeRetry is how soon a failed write is tried again.
const writeRetry = time.Second

// retryWrite schedules another try of a write the store refused (a full disk): the state and
// the log entries stay pending, and reach the disk as soon as it takes writes again, without
// waiting for the account's next call. Logged once per spell of failures.
func (a *accountActor) retryWrite(err error) {
	if !a.writeFailed {
		a.writeFailed = true
		slog.Error("quota write failed; retrying every second", "account", a.acct, "err", err)
	}
	if !a.flushQueued {
		a.flushQueued = true
		eng, pid := a.engine, a.pid
		time.AfterFunc(writeRetry, func() { eng.Send(pid, flushMsg{}) })
	}
}

func (a *accountActor) answer(err error) {
	for _, w := range a.waiters {
		w.reply.send(w.s, err)
	}
	a.waiters = a.waiters[:0]
}

// volatile puts the burst and throttle history worth keeping across a passivation in rec.
func (a *accountActor) volatile(rec *persistence.QuotaRecord, now int64) {
	if a.burst.prune(now); len(a.burst.ts) > 0 {
		rec.AccountBurst = append([]int64(nil), a.burst.ts...)
	}
	for id, ks := range a.keys {
		if ks.recent.prune(now); len(ks.recent.ts) > 0 {
			if rec.KeyBurst == nil {
				rec.KeyBurst = map[string][]int64{}
			}
			rec.KeyBurst[id] = append([]int64(nil), ks.recent.ts...)
		}
		if ks.throttledUntil > now {
			if rec.Throttled == nil {
				rec.Throttled = map[string]int64{}
			}
			rec.Throttled[id] = ks.throttledUntil
		}
	}
}

// state is the admin view under plan p.
func (a *accountActor) state(p *catalog.Plan) QuotaState {
	now := a.svc.now().UnixNano()
	a.roll(p, now)
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
	return st
}

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
	if m.op == mediaReserve {
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
		a.dirty = true
		if err := a.persist(false, "", nil); err != nil {
			a.rec.Media = a.rec.Media[:len(a.rec.Media)-1]
			m.reply.send(MediaDecision{}, err)
			return
		}
		d.Reserved += m.n
		m.reply.send(MediaDecision{Admitted: true, Reservation: MediaReservation{Account: a.acct, Kind: m.kind, ID: a.nextID}, Daily: d}, nil)
		return
	}
	i := slices.IndexFunc(a.rec.Media, func(h persistence.MediaHold) bool { return h.ID == m.id && h.Kind == m.kind })
	if i < 0 {
		m.reply.send(MediaDecision{}, fmt.Errorf("%w: %s %s/%d", ErrUnknownReservation, m.kind, a.acct, m.id))
		return
	}
	h := a.rec.Media[i]
	a.rec.Media = slices.Delete(a.rec.Media, i, i+1)
	if m.op == mediaCommit && h.Day == a.rec.Day {
		if m.kind == persistence.MediaVideo {
			a.rec.Video += m.n
		} else {
			a.rec.Images += m.n
		}
	}
	a.dirty = true
	err := a.persist(false, "", nil)
	m.reply.send(MediaDecision{Admitted: err == nil}, err)
}

// arm schedules the next idle check.
func (a *accountActor) arm() {
	eng, pid := a.engine, a.pid
	a.timer = time.AfterFunc(a.svc.cfg.IdleTimeout, func() { eng.Send(pid, tick{}) })
}

// onTick expires abandoned reservations, forgets idle keys, and passivates an actor that
// received nothing since the last tick and holds no call in flight.
func (a *accountActor) onTick() {
	if a.retired {
		return
	}
	now := a.svc.now().UnixNano()
	a.expire(now)
	a.forgetIdleKeys(now)
	idle := a.received == a.seenAtTick
	a.seenAtTick = a.received
	if idle && len(a.calls) == 0 && !a.flushQueued && len(a.waiters) == 0 && a.passivate(now) {
		return
	}
	a.arm()
}

// passivate writes everything (unless nothing changed) and retires through the directory.
// It fails, and the actor carries on, when a message is on its way.
func (a *accountActor) passivate(now int64) bool {
	if a.loaded {
		var probe persistence.QuotaRecord
		if a.volatile(&probe, now); a.dirty || len(a.logs) > 0 || probe.AccountBurst != nil || probe.KeyBurst != nil || probe.Throttled != nil {
			if err := a.persist(true, "", nil); err != nil {
				return false
			}
		}
	}
	if h := a.svc.hookRetire; h != nil {
		h(a.acct, false)
	}
	if !a.svc.dir.Retire(a.acct, a.id, a.received) {
		return false
	}
	if h := a.svc.hookRetire; h != nil {
		h(a.acct, true)
	}
	a.retired = true
	a.svc.stopLater(a.id)
	return true
}

// retire is Service.Close's passivation: it waits for messages in flight instead of
// giving up, and drops in-flight call reservations.
func (a *accountActor) retire(m *retireMsg) {
	if a.retired {
		m.reply.send(struct{}{}, nil)
		return
	}
	if a.loaded && (!m.written || m.writtenAt != a.received) {
		if err := a.persist(true, "", nil); err != nil {
			m.reply.send(struct{}{}, err)
			return
		}
		m.written, m.writtenAt = true, a.received
	}
	if !a.svc.dir.Retire(a.acct, a.id, a.received) {
		a.engine.Send(a.pid, retireAgain{m}) // behind the message still on its way
		return
	}
	a.retired = true
	if a.timer != nil {
		a.timer.Stop()
	}
	a.svc.stopLater(a.id)
	m.reply.send(struct{}{}, nil)
}

// expire releases reservations whose settle never came.
func (a *accountActor) expire(now int64) {
	for id, h := range a.calls {
		if h.expires <= now {
			delete(a.calls, id)
			a.release(h)
			slog.Warn("quota reservation expired unsettled; released", "account", a.acct, "reservation", id)
		}
	}
}

func (a *accountActor) forgetIdleKeys(now int64) {
	for id, ks := range a.keys {
		ks.recent.prune(now)
		if ks.act.width > 0 {
			ks.act.advance(now, ks.act.width)
		}
		if len(ks.recent.ts) == 0 && ks.throttledUntil <= now && ks.act.sum() == 0 {
			delete(a.keys, id)
		}
	}
}
