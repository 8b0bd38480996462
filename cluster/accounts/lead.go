package accounts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
)

// Admission from the leader's memory (docs/cluster.md, "One consensus round per call").
// Once leader admission is on (Owner.LeadAdmissions), every quota step of a shard's
// accounts, from whichever node, goes to the node leading the shard (forwarded over the
// internal listener), which queues it on its one Batcher for the shard. The leader keeps,
// for each account with steps queued, the account as those steps will leave it (the
// speculation): the state its replica has applied, then each queued step applied in the
// order queued, which is the order the log will apply them in (one proposal in flight).
// An admission is decided on that state and, while the leader holds its lease, answered at
// once; its entry is committed in the background with the next batch. Everything else (a
// settle, a top-up) waits for its entry, as before.
//
// The lease: a proposal of this leadership that applied was made at t, so no other node
// was elected before t (a quorum accepted it). The leader answers from memory until
// t+LeaderLease; a new leader answers from memory only from LeaderLease (and a margin for
// clocks' rates) after it learned it leads. So two leaders never answer from memory at
// once, and a new leader's state holds every admission its predecessor committed.
//
// What a dead leader loses: the admissions it answered whose batches never committed. A
// leader stops answering from memory once a queued step has waited MaxUncommitted without
// its batch applying, so those are at most the admissions of its last MaxUncommitted. Their
// calls go on; their settles, made Late with the admission's plan (Owner.Do), bill them as
// admitted at the settle, and their ids (chosen by the node that took the call,
// step.Command.Res) are never given to another reservation.
const (
	LeaderLease    = time.Second
	leaseMargin    = 100 * time.Millisecond
	MaxUncommitted = 200 * time.Millisecond
)

// ErrNotLeader is a step sent to a node that does not lead its shard (as it knows): the
// sender asks the engine for the leader again.
var ErrNotLeader = errors.New("accounts: this node does not lead the shard")

// leading is this node's admissions for one shard: inert unless it leads the shard.
type leading struct {
	shard    uint64
	b        *cluster.Batcher
	local    func() *StateMachine // this node's replica of the shard
	isLeader func() bool          // the engine's view now (a leader change's news may lag)
	stats    *LeadStats

	mu       sync.Mutex
	leader   bool
	gen      uint64    // bumped at each change of leadership and each unknown outcome
	since    time.Time // when this node learned it leads
	synced   bool      // a barrier queued in this generation has applied
	leaseAt  time.Time // when the latest proposal of this generation that applied was made
	inflight map[string]int
	spec     map[string]*step.Account
	waiting  []time.Time // when each unanswered step was queued, oldest first
	lastUse  time.Time   // when the last step came
}

func newLeading(shard uint64, b *cluster.Batcher, local func() *StateMachine, isLeader func() bool, stats *LeadStats) *leading {
	return &leading{shard: shard, b: b, local: local, isLeader: isLeader, stats: stats, inflight: map[string]int{}, spec: map[string]*step.Account{}}
}

// speculable are the steps the leader applies to its speculation: they read nothing but
// the account and the command (a top-up or a charge reads its grant from the store, and the
// account is then left out of the speculation until its steps have applied).
func speculable(k step.Kind) bool { return k == step.Admit || k == step.Settle || k == step.Record }

// setLeader is the engine's news that leader leads the shard now.
func (l *leading) setLeader(leads bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if leads == l.leader {
		return
	}
	l.leader = leads
	l.reset()
	if leads {
		l.since = time.Now()
		l.barrier()
	}
}

// reset forgets the speculation: until a barrier of the new generation applies, steps are
// queued and waited for.
func (l *leading) reset() {
	l.gen++
	l.synced = false
	l.leaseAt = time.Time{}
	clear(l.spec)
}

// barrier queues a step that changes nothing: once it applies, every step queued before it
// has applied (or will never apply), so the store is the state to speculate from.
func (l *leading) barrier() {
	gen := l.gen
	raw, _ := (&Command{}).Encode() // no id: every replica answers Invalid and changes nothing
	ctx, cancel := context.WithTimeout(context.Background(), AttemptWait)
	err := l.b.Enqueue(ctx, raw, l.still(gen), func(_ []byte, err error, at time.Time) {
		cancel()
		l.mu.Lock()
		defer l.mu.Unlock()
		if gen != l.gen || !l.leader {
			return
		}
		if err != nil {
			time.AfterFunc(10*time.Millisecond, func() {
				l.mu.Lock()
				defer l.mu.Unlock()
				if gen == l.gen && l.leader {
					l.barrier()
				}
			})
			return
		}
		l.synced = true
		l.leaseAt = at
	})
	if err != nil {
		cancel()
	}
}

// still is whether a step queued in generation gen may be proposed now: only while this
// node leads the shard in that generation. Proposed from a node that has stopped leading,
// the engine would forward it to the next leader, where it could apply after steps that
// came after it (a settle sent Late before its own admission).
func (l *leading) still(gen uint64) func() bool {
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return gen == l.gen && l.leader && l.isLeader()
	}
}

// fast reports whether an admission may be answered from memory now. do asks the engine
// whether this node leads, once per step, under the same hold of l.mu.
func (l *leading) fast(now time.Time) bool {
	return l.leader && l.synced &&
		now.Before(l.leaseAt.Add(LeaderLease)) &&
		now.After(l.since.Add(LeaderLease+leaseMargin)) &&
		(len(l.waiting) == 0 || now.Sub(l.waiting[0]) < MaxUncommitted)
}

// do queues one step of the shard (raw, c decoded) and returns its result: an admission's
// from memory when it may, else the result its entry applied with. ErrNotLeader when this
// node does not lead the shard.
func (l *leading) do(ctx context.Context, c *Command, raw []byte) ([]byte, error) {
	done := make(chan stepAnswer, 1)
	res, now, err := l.start(c, raw, func(res []byte, err error) { done <- stepAnswer{res, err} })
	if now {
		return res, err
	}
	select {
	case r := <-done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start queues one step of the shard (raw, c decoded). When now is true, res and err are its
// answer (an admission answered from memory, a refusal, ErrNotLeader); else then gets its
// answer once its entry has applied (or failed), in the batcher's goroutine.
func (l *leading) start(c *Command, raw []byte, then func(res []byte, err error)) (res []byte, now bool, err error) {
	t := time.Now()
	l.mu.Lock()
	if !l.leader || !l.isLeader() {
		l.mu.Unlock()
		return nil, true, ErrNotLeader
	}
	l.lastUse = t
	early, queue, err := l.speculate(c, t)
	if err != nil {
		l.mu.Unlock()
		return nil, true, err
	}
	if early != nil && !queue { // refused from memory: nothing to commit
		l.mu.Unlock()
		l.stats.FromMemory.Add(1)
		return early, true, nil
	}
	gen, acct := l.gen, c.Account
	qctx, cancel := context.WithTimeout(context.Background(), EndWait)
	err = l.b.Enqueue(qctx, raw, l.still(gen), func(res []byte, err error, at time.Time) {
		cancel()
		l.answered(gen, acct, err, at)
		if early == nil {
			then(res, err)
		}
	})
	if err != nil {
		cancel()
		l.mu.Unlock()
		return nil, true, err
	}
	l.inflight[acct]++
	l.waiting = append(l.waiting, t)
	l.mu.Unlock()
	if early != nil {
		l.stats.FromMemory.Add(1)
		return early, true, nil
	}
	l.stats.Awaited.Add(1)
	return nil, false, nil
}

type stepAnswer struct {
	res []byte
	err error
}

// speculate applies c to the account's speculation when it can. early is the encoded
// answer of an admission that may be answered now; queue is false for one refused (it is
// not proposed, and changes nothing). Called with l.mu held.
func (l *leading) speculate(c *Command, now time.Time) (early []byte, queue bool, err error) {
	sc := c.Step
	sc.Prior = nil
	if !l.synced || c.Task != nil || c.Node != nil || c.Prune != nil || !speculable(sc.Kind) ||
		c.ID == "" || len(c.ID) > maxCommandID || malformed(&sc) || !writable(c.Account, &sc) {
		delete(l.spec, c.Account) // its queued steps are not all in a speculation any more
		return nil, true, nil
	}
	a, ok, err := l.account(c.Account)
	if err != nil || !ok {
		return nil, true, err
	}
	sm := l.local()
	incs, err := sm.incarnationsNow()
	if err != nil {
		return nil, true, err
	}
	fast := sc.Kind == step.Admit && l.fast(now)
	if !fast {
		stepOn(a, &sc, incs)
		return nil, true, nil
	}
	try, err := cloneAccount(a)
	if err != nil {
		return nil, true, err
	}
	r, _ := stepOn(&try, &sc, incs)
	out, err := answerOf(r).Encode()
	if err != nil {
		return nil, true, err
	}
	if !r.Admitted {
		return out, false, nil
	}
	*a = try
	return out, true, nil
}

// account is the speculation of acct, begun from the applied state when none of its steps
// is queued; ok false when some are and not all of them are speculated.
func (l *leading) account(acct string) (*step.Account, bool, error) {
	if a, ok := l.spec[acct]; ok {
		return a, true, nil
	}
	if l.inflight[acct] > 0 {
		return nil, false, nil
	}
	sm := l.local()
	if sm == nil {
		return nil, false, fmt.Errorf("accounts: no replica of shard %d here", l.shard)
	}
	a, err := sm.appliedAccount(acct)
	if err != nil {
		return nil, false, err
	}
	l.spec[acct] = &a
	return &a, true, nil
}

// answered is a queued step's end: an account with nothing queued leaves the speculation
// (its replica has applied it all); an unknown outcome starts a new generation.
func (l *leading) answered(gen uint64, acct string, err error, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiting) > 0 {
		l.waiting = l.waiting[1:]
	}
	if l.inflight[acct]--; l.inflight[acct] <= 0 {
		delete(l.inflight, acct)
		delete(l.spec, acct)
	}
	if gen != l.gen {
		return
	}
	if err != nil {
		l.reset()
		if l.leader {
			l.barrier()
		}
		return
	}
	if at.After(l.leaseAt) {
		l.leaseAt = at
	}
}

// stepOn is what a replica does to an account for one quota step that passed its checks:
// the releases and expiry due first, then the step. It returns the step's result and the
// expiry's.
func stepOn(a *step.Account, sc *step.Command, incs *incarnations) (r, ex step.Result) {
	releaseOrphans(a, incs)
	ex = expireDue(a, sc.Now)
	return step.Apply(a, sc), ex
}

// answerOf is a step's result as the proposer gets it: without the effects, which the
// replica writes.
func answerOf(r step.Result) *step.Result {
	r.Dirty, r.Log, r.Grant, r.KeyChanged, r.Forgotten, r.Advanced = false, nil, persistence.GrantWrite{}, "", nil, nil
	return &r
}

// cloneAccount is a deep copy of a (through its encoding: a step changes slices in place).
func cloneAccount(a *step.Account) (step.Account, error) {
	var c step.Account
	err := c.Decode(a.AppendBinary(nil))
	return c, err
}

// LeadAdmissions turns leader admission on (call it before the node serves calls): every
// quota step goes to its shard's leader, through fwd when that is another node, and this
// node answers for the shards it leads, reading its replica of each through local. Every
// node of a cluster must turn it on, or none: a step proposed around the leader would not
// be in its speculation.
func (o *Owner) LeadAdmissions(self uint64, local func(shard uint64) *StateMachine, fwd Forward) {
	lead := make([]*leading, len(o.batchers))
	for i := range lead {
		shard := o.first + uint64(i)
		isLeader := func() bool { l, ok := o.rep.Leader(shard); return ok && l == self }
		lead[i] = newLeading(shard, o.batchers[i], func() *StateMachine { return local(shard) }, isLeader, &o.Stats)
	}
	o.self, o.forward, o.lead = self, fwd, lead
	if o.route != nil {
		o.route.self = self
	}
	stop := make(chan struct{})
	o.stopRenew = sync.OnceFunc(func() { close(stop) })
	supervise.Go("accounts.renew-leases", func() { o.renewLeases(stop) })
	o.rep.OnLeaderChange(func(shard, leader uint64) {
		if l := o.leadingOf(shard); l != nil {
			l.setLeader(leader == self)
		}
	})
	for _, l := range lead {
		l.setLeader(l.isLeader())
	}
}

// renewLeases keeps the lease of each shard this node leads and has admitted in lately:
// an idle leader's lease would lapse, and its next admission would wait for its entry.
func (o *Owner) renewLeases(stop <-chan struct{}) {
	tick := time.NewTicker(LeaderLease / 4)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			for _, l := range o.lead {
				l.renew(now)
			}
		}
	}
}

// renewIdle is how long after its last step a shard's leader still renews its lease.
const renewIdle = 10 * time.Second

// renew queues a barrier when the lease is half gone and the shard was used lately.
func (l *leading) renew(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.leader && l.synced && now.Sub(l.lastUse) < renewIdle && now.Sub(l.leaseAt) > LeaderLease/2 && len(l.waiting) == 0 {
		l.barrier()
	}
}

func (o *Owner) leadingOf(shard uint64) *leading {
	if shard < o.first || shard >= o.first+uint64(len(o.lead)) {
		return nil
	}
	return o.lead[shard-o.first]
}

// errMalformedStep is a forwarded command that does not decode or belongs to another shard.
var errMalformedStep = errors.New("accounts: not a command of this shard")

// Lead answers a command of shard (raw, as Owner.Do, Tasks or PublishAddr encode it) as
// its leader: ErrNotLeader when this node does not lead it. A node holding no replica of
// the shard sends every command of it here, not only quota steps.
func (o *Owner) Lead(ctx context.Context, shard uint64, raw []byte) ([]byte, error) {
	l, c, err := o.leadCommand(shard, raw)
	if err != nil {
		return nil, err
	}
	return l.do(ctx, c, raw)
}

// StartLead is Lead without the wait: the answer now when now is true, else later through
// then (never both), for a caller that waits for many steps at once (ServeSteps).
func (o *Owner) StartLead(shard uint64, raw []byte, then func(res []byte, err error)) (res []byte, now bool, err error) {
	l, c, err := o.leadCommand(shard, raw)
	if err != nil {
		return nil, true, err
	}
	return l.start(c, raw, then)
}

// leadCommand is raw decoded, and the leader part of its shard here.
func (o *Owner) leadCommand(shard uint64, raw []byte) (*leading, *Command, error) {
	l := o.leadingOf(shard)
	if l == nil {
		return nil, nil, fmt.Errorf("%w: no shard %d here", errMalformedStep, shard)
	}
	c, err := decodeCommand(raw)
	if err != nil || (c.Node == nil && c.Prune == nil && ShardOf(c.Account, o.first, len(o.batchers)) != shard) {
		return nil, nil, fmt.Errorf("%w: %v", errMalformedStep, err)
	}
	return l, &c, nil
}

// QuotaSteps is what the metrics read of Stats.
func (o *Owner) QuotaSteps() (memory, awaited, forwarded, late uint64) {
	return o.Stats.FromMemory.Load(), o.Stats.Awaited.Load(), o.Stats.Forwarded.Load(), o.Stats.Late.Load()
}
