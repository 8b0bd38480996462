package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/internal/supervise"
)

// Batcher packs the commands this node submits to one shard into few proposals (group
// commit, docs/cluster.md "Sizing", batching): a command waits only while Inflight proposals of the
// shard are already under way, and then goes with every command queued behind it, up to Max.
// An idle shard proposes a lone command at once, so batching adds no latency; under load a
// proposal carries many commands for one Raft round and one fsync on a quorum (measured in the
// prototype: 16 per proposal gave 46k charges/s against 3.7k with one).
//
// The shard's state machine unpacks a batch with DecodeBatch, applies its commands in order
// and answers with EncodeResults, one result per command.
type Batcher struct {
	rep       Replicator
	shard     uint64
	max       int
	slots     chan struct{} // one per proposal allowed in flight
	mu        sync.Mutex
	cond      *sync.Cond
	queue     []*pending
	closing   bool
	closeOnce sync.Once
	stopped   <-chan struct{} // closed when run has ended (Close)
	proposed  func(n int)     // tests: called with each proposal's command count

	// What a turn of run holds, kept here (not on its stack) so that run started again after
	// a panic (supervise.Loop) gives it back: a proposal slot, and a batch taken from the
	// queue and not yet handed to its proposal. Only run's goroutine touches them.
	holding bool
	taken   []*pending
}

// Where the batcher's goroutines are named to supervise (their panics, the fault point).
const (
	whereBatcher = "cluster.batcher"
	whereBatch   = "cluster.batcher.propose"
)

type pending struct {
	ctx  context.Context
	cmd  []byte
	done chan batchResult
	then func(res []byte, err error, proposed time.Time) // Enqueue's; nil for Submit
	// still, when set, is asked just before the proposal: false answers the command with
	// ErrNotProposed instead (Enqueue's: a shard leader's step is proposed only while it
	// leads, never forwarded to the next leader behind the steps that came after it).
	still func() bool
}

type batchResult struct {
	res []byte
	err error
	at  time.Time // when its proposal was made (zero when none was)
}

// ErrNotProposed is the error of an enqueued command its still refused: it was not
// proposed.
var ErrNotProposed = errors.New("cluster: not proposed")

// ErrBatcherClosed is the error of a command submitted after Close.
var ErrBatcherClosed = errors.New("cluster: batcher closed")

// NewBatcher proposes to shard through rep, at most max commands per proposal and inflight
// proposals at a time (defaults 64 and 4 for values ≤ 0).
func NewBatcher(rep Replicator, shard uint64, max, inflight int) *Batcher {
	if max <= 0 {
		max = 64
	}
	if inflight <= 0 {
		inflight = 4
	}
	b := &Batcher{rep: rep, shard: shard, max: max, slots: make(chan struct{}, inflight)}
	b.cond = sync.NewCond(&b.mu)
	b.stopped = supervise.Loop(whereBatcher, nil, b.run)
	return b
}

// Submit proposes cmd with the next batch and returns its result. An error means the outcome
// is unknown (the command may have been applied): commands carry their own idempotency.
func (b *Batcher) Submit(ctx context.Context, cmd []byte) ([]byte, error) {
	p := &pending{ctx: ctx, cmd: cmd, done: make(chan batchResult, 1)}
	b.mu.Lock()
	if b.closing {
		b.mu.Unlock()
		return nil, ErrBatcherClosed
	}
	b.queue = append(b.queue, p)
	b.cond.Signal()
	b.mu.Unlock()
	select {
	case r := <-p.done:
		return r.res, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Enqueue queues cmd for the next batch and returns at once; then is called once with its
// result (or its error, as Submit's), and with when its proposal was made, from the
// batcher's goroutine: it must not block. still (nil: always) is asked just before the
// proposal; a command it refuses is answered ErrNotProposed. Commands enqueued one after another from one
// goroutine, or under one lock, are proposed in that order (one proposal in flight keeps
// them in that order in the log too). ctx ending before the proposal skips the command.
func (b *Batcher) Enqueue(ctx context.Context, cmd []byte, still func() bool, then func(res []byte, err error, proposed time.Time)) error {
	p := &pending{ctx: ctx, cmd: cmd, done: make(chan batchResult, 1), then: then, still: still}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing {
		return ErrBatcherClosed
	}
	b.queue = append(b.queue, p)
	b.cond.Signal()
	return nil
}

// Close proposes what is queued, waits for the proposals under way, and stops.
func (b *Batcher) Close() {
	b.closeOnce.Do(func() {
		b.mu.Lock()
		b.closing = true
		b.cond.Signal()
		b.mu.Unlock()
		<-b.stopped
		for range cap(b.slots) {
			b.slots <- struct{}{}
		}
	})
}

// run hands the queue to proposals, a batch at a time, until the batcher closes. Started
// again after a panic, it first gives back what the interrupted turn held.
func (b *Batcher) run() {
	b.giveBackTurn()
	for {
		if !b.holding {
			b.slots <- struct{}{} // a proposal slot first: commands queue up behind busy ones
			b.holding = true
		}
		if !b.take() {
			<-b.slots
			b.holding = false
			return // closing, and everything queued is proposed
		}
		supervise.Fault(whereBatcher)
		batch := b.taken
		b.taken, b.holding = nil, false // the proposal owns the batch and the slot now
		supervise.GoOwing(whereBatch, func() { b.propose(batch) }, func() { fail(batch, whereBatch) })
	}
}

// take moves the next batch from the queue to b.taken, waiting for one; false once the
// batcher is closing and everything queued is proposed.
func (b *Batcher) take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.queue) == 0 && !b.closing {
		b.cond.Wait()
	}
	n := min(len(b.queue), b.max)
	b.taken = make([]*pending, n)
	copy(b.taken, b.queue)
	b.queue = append(b.queue[:0], b.queue[n:]...)
	return n > 0
}

// giveBackTurn ends the turn a panic interrupted: its batch's callers get an error (nothing
// was proposed, but an error never claims that: commands carry their own idempotency) and
// its slot is released.
func (b *Batcher) giveBackTurn() {
	fail(b.taken, whereBatcher)
	b.taken = nil
	if b.holding {
		<-b.slots
		b.holding = false
	}
}

// fail answers each command of batch not answered yet with supervise.ErrPanicked.
func fail(batch []*pending, where string) {
	for _, p := range batch {
		p.answer(batchResult{err: fmt.Errorf("cluster: %s: %w", where, supervise.ErrPanicked)})
	}
}

// propose sends one batch, skipping commands whose callers have gone (they get their
// context's error and asked for nothing that must happen). Its slot is released however it
// ends; after a panic its callers are answered by fail.
func (b *Batcher) propose(batch []*pending) {
	defer func() { <-b.slots }()
	live := batch[:0] // the live commands stay first: fail still finds them all
	var gone []*pending
	for _, p := range batch {
		if p.ctx.Err() == nil && (p.still == nil || p.still()) {
			live = append(live, p)
		} else {
			gone = append(gone, p)
		}
	}
	for _, p := range gone {
		err := p.ctx.Err()
		if err == nil {
			err = ErrNotProposed
		}
		p.answer(batchResult{err: err})
	}
	if len(live) == 0 {
		return
	}
	if b.proposed != nil {
		b.proposed(len(live))
	}
	cmds := make([][]byte, len(live))
	for i, p := range live {
		cmds[i] = p.cmd
	}
	data, err := msgpack.Marshal(cmds)
	var results [][]byte
	at := time.Now()
	if err == nil {
		ctx, cancel := longest(live)
		var out []byte
		out, err = b.rep.Propose(ctx, b.shard, data)
		cancel()
		if err == nil {
			results, err = DecodeResults(out, len(live))
		}
	}
	for i, p := range live {
		if err != nil {
			p.answer(batchResult{err: err, at: at})
			continue
		}
		p.answer(batchResult{res: results[i], at: at})
	}
}

// answer gives the command its result unless it has one already (done holds one): a
// command is answered once, whatever a panic interrupted.
func (p *pending) answer(r batchResult) {
	select {
	case p.done <- r:
		if p.then != nil {
			p.then(r.res, r.err, r.at)
		}
	default:
	}
}

// longest is a context that ends at the latest of the batch's callers' deadlines, or after
// maxProposalWait when one of them has none: a batch outlives any one caller.
func longest(batch []*pending) (context.Context, context.CancelFunc) {
	var last time.Time
	for _, p := range batch {
		d, ok := p.ctx.Deadline()
		if !ok {
			return context.WithTimeout(context.Background(), maxProposalWait)
		}
		if d.After(last) {
			last = d
		}
	}
	return context.WithDeadline(context.Background(), last)
}

// maxProposalWait bounds a batch whose callers set no deadline.
const maxProposalWait = 10 * time.Second

// DecodeBatch unpacks a proposal made by a Batcher into its commands.
func DecodeBatch(data []byte) ([][]byte, error) {
	var cmds [][]byte
	if err := msgpack.Unmarshal(data, &cmds); err != nil {
		return nil, fmt.Errorf("cluster: a proposal that is not a batch: %w", err)
	}
	return cmds, nil
}

// EncodeResults packs a batch's results, one per command in order.
func EncodeResults(results [][]byte) ([]byte, error) { return msgpack.Marshal(results) }

// DecodeResults unpacks a batch's results and checks there is one per command.
func DecodeResults(data []byte, n int) ([][]byte, error) {
	var results [][]byte
	if err := msgpack.Unmarshal(data, &results); err != nil {
		return nil, fmt.Errorf("cluster: a batch result that does not decode: %w", err)
	}
	if len(results) != n {
		return nil, fmt.Errorf("cluster: %d results for a batch of %d commands", len(results), n)
	}
	return results, nil
}
