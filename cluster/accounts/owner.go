package accounts

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/persistence"
)

// Time-outs of a step (docs/cluster.md, "Accounts over shards"): one try waits at most AttemptWait, and
// tries go on, with the same command id, until TotalWait has passed since the first — for a
// step that starts a call (an admission, a media reservation, a credit hold): its client
// waits for it and is better answered 503 and retried. A step that ends a call (a settle, a
// logged call, a charge, a top-up) waits up to EndWait: its client has the answer already
// streaming, and an election during a rolling restart should delay its last byte, not turn
// it into an error.
const (
	AttemptWait = 500 * time.Millisecond
	TotalWait   = quota.MaxWait
	EndWait     = 10 * time.Second
)

// wait is how long a step of kind k may wait for its shard in all.
func wait(k step.Kind) time.Duration {
	switch k {
	case step.Admit, step.MediaReserve, step.Hold:
		return TotalWait
	}
	return EndWait
}

// Owner is quota.Owner over the account shards: each step goes to the shard of its
// account, proposed through that shard's Batcher on this node (the engine forwards it to
// the shard's leader). The command is the quota service's, stamped with this node's
// clock; Owner gives it a fresh id and retries that same id after an unknown outcome, so it
// applies once. A view is a linearizable read of the shard.
type Owner struct {
	rep      cluster.Replicator
	first    uint64
	batchers []*cluster.Batcher // by shard - first

	// Leader admission (lead.go), once LeadAdmissions has turned it on: this node's part
	// in each shard, the node's id, and how steps reach another node.
	lead    []*leading
	self    uint64
	forward Forward
	// admitted is every call this node admitted and has not settled, by
	// "<account>/<reservation id>": its settle carries the admission (Late).
	admitted  sync.Map
	stopRenew func() // ends the lease renewals
	// held says which shards this node holds a replica of (nil: all); route picks the node
	// for a shard it does not (Place).
	held  func(shard uint64) bool
	route *router
	// Stats counts the steps of leader admission, for the metrics.
	Stats LeadStats
}

// LeadStats counts steps by how they were answered: from the leader's memory, after their
// entry applied (on the leader), forwarded to another node, and settles sent Late.
type LeadStats struct {
	FromMemory, Awaited, Forwarded, Late atomic.Uint64
}

// admission is what a Late settle repeats of its call's admission.
type admission struct {
	plan           step.Plan
	key            string
	at, units, ttl int64
	limits         *persistence.KeyLimits
}

var _ quota.Owner = (*Owner)(nil)

// NewOwner proposes to shards first … first+shards-1 through rep (on a node: its
// engine.Node). Every node must use the same first and shards: they place the accounts.
func NewOwner(rep cluster.Replicator, first uint64, shards int) *Owner {
	o := &Owner{rep: rep, first: first, batchers: make([]*cluster.Batcher, shards)}
	for i := range o.batchers {
		o.batchers[i] = cluster.NewBatcher(rep, first+uint64(i), 0, 1) // one in flight: the rest pack (docs/cluster.md, Sizing)
	}
	return o
}

// Close proposes what is queued and stops the batchers; later steps fail.
func (o *Owner) Close() {
	if o.stopRenew != nil {
		o.stopRenew()
	}
	for _, b := range o.batchers {
		b.Close()
	}
}

// Shard is the shard holding account.
func (o *Owner) Shard(account string) uint64 { return ShardOf(account, o.first, len(o.batchers)) }

// Do implements quota.Owner. An admission whose caller has gone, or whose outcome is still
// unknown when Do gives up (ErrUnavailable), is given back once its outcome is known, as the
// single node does: the client was told nothing was admitted, so nothing may stay reserved
// (nor hold a slot of a burst window) until the reservation's TTL.
func (o *Owner) Do(ctx context.Context, account string, c *step.Command) (step.Result, error) {
	shard := o.Shard(account)
	if c.Kind == step.View {
		return o.view(ctx, shard, account, c)
	}
	cmd := Command{ID: NewCommandID(), Account: account, Step: *c}
	held := o.prepare(account, &cmd.Step)
	raw, err := cmd.Encode()
	if err != nil {
		return step.Result{}, fmt.Errorf("accounts: encode a %d step of %s: %w", c.Kind, account, err)
	}
	r, err := o.submit(ctx, shard, raw, wait(c.Kind))
	if err != nil && c.Kind == step.Admit && (ctx.Err() != nil || errors.Is(err, quota.ErrUnavailable)) {
		// A panic here leaves the admission to expire at its reservation's TTL.
		supervise.Go("accounts.give-back", func() { o.giveBack(account, shard, raw) })
	}
	if err == nil && o.lead != nil {
		switch {
		case c.Kind == step.Admit && r.Admitted:
			o.admitted.Store(admittedKey(account, r.ID), &admission{plan: c.Plan, key: c.Key, at: c.At, units: c.Units, ttl: c.TTL, limits: c.KeyLimits})
		case held != "":
			o.admitted.Delete(held)
		}
	}
	return r, err
}

// prepare adds to a step what leader admission needs (once it is on): an admission's
// reservation id, chosen here, and a settle's admission, which makes it Late. It returns
// the key of the admission a settle carries ("" for none).
func (o *Owner) prepare(account string, c *step.Command) string {
	if o.lead == nil {
		return ""
	}
	switch c.Kind {
	case step.Admit:
		c.Res = rand.Uint64() | 1<<63 // above any id an account's sequence gives
	case step.Settle:
		k := admittedKey(account, c.ID)
		v, ok := o.admitted.Load(k)
		if !ok {
			return ""
		}
		a := v.(*admission)
		c.Late, c.Plan, c.Key, c.At, c.Reserved, c.TTL, c.KeyLimits = true, a.plan, a.key, a.at, a.units, a.ttl, a.limits
		o.Stats.Late.Add(1)
		return k
	}
	return ""
}

func admittedKey(account string, id uint64) string {
	return account + "/" + strconv.FormatUint(id, 10)
}

// submit proposes a step's raw command and decodes its result.
func (o *Owner) submit(ctx context.Context, shard uint64, raw []byte, limit time.Duration) (step.Result, error) {
	out, err := o.retry(ctx, shard, raw, limit, o.tryStep)
	if err != nil {
		return step.Result{}, err
	}
	var r step.Result
	if err := r.Decode(out); err != nil {
		return step.Result{}, fmt.Errorf("accounts: shard %d: a result that does not decode: %w", shard, err)
	}
	return r, nil
}

// submitRaw proposes raw until it has a result, limit has passed, or ctx ends: through
// this node's Batcher when it holds the shard (the engine takes it to the leader), else
// sent to the shard's leader.
func (o *Owner) submitRaw(ctx context.Context, shard uint64, raw []byte, limit time.Duration) ([]byte, error) {
	if !o.holds(shard) {
		return o.retry(ctx, shard, raw, limit, o.tryStep)
	}
	return o.retry(ctx, shard, raw, limit, func(ctx context.Context, shard uint64, raw []byte) ([]byte, error) {
		return o.batchers[shard-o.first].Submit(ctx, raw)
	})
}

// Place tells the Owner which shards this node holds a replica of (call it before
// LeadAdmissions, which every Owner with a Placement needs: a step of a shard not held
// here is sent to the shard's leader).
func (o *Owner) Place(p Placement) {
	o.held, o.route = p.Held, newRouter(p.Voters)
}

// holds reports whether this node holds a replica of shard.
func (o *Owner) holds(shard uint64) bool { return o.held == nil || o.held(shard) }

// leaderOf is the node to send shard's steps to: its leader as the engine knows it here,
// or, for a shard with no replica here, as the router last heard.
func (o *Owner) leaderOf(shard uint64) (uint64, bool) {
	if o.holds(shard) {
		return o.rep.Leader(shard)
	}
	return o.route.target(shard)
}

// tryStep is one try of a quota step: proposed through this node's Batcher, or, with
// leader admission on, handed to the shard's leader (this node's own part when it leads).
func (o *Owner) tryStep(ctx context.Context, shard uint64, raw []byte) ([]byte, error) {
	if o.lead == nil {
		return o.batchers[shard-o.first].Submit(ctx, raw)
	}
	leader, ok := o.leaderOf(shard)
	switch {
	case !ok:
		return nil, fmt.Errorf("accounts: shard %d has no leader now", shard)
	case leader == o.self:
		return o.Lead(ctx, shard, raw)
	}
	o.Stats.Forwarded.Add(1)
	out, err := o.forward.Step(ctx, leader, shard, raw)
	if !o.holds(shard) {
		o.route.heard(shard, leader, err)
	}
	return out, err
}

// read answers query (a Query) after a linearizable read of shard: on this node's replica,
// or on a node holding one.
func (o *Owner) read(ctx context.Context, shard uint64, query []byte) ([]byte, error) {
	if o.holds(shard) {
		return o.rep.Read(ctx, shard, query)
	}
	out, err := o.readElsewhere(ctx, shard, &ShardRead{Linear: query})
	if err != nil {
		return nil, err
	}
	return out.Out, out.err()
}

// readElsewhere sends a read of shard to a node holding a replica of it (its leader when
// known), retried on another until TotalWait has passed.
func (o *Owner) readElsewhere(ctx context.Context, shard uint64, r *ShardRead) (readAnswer, error) {
	req, err := msgpack.Marshal(r)
	if err != nil {
		return readAnswer{}, err
	}
	out, err := o.retry(ctx, shard, req, TotalWait, func(ctx context.Context, shard uint64, req []byte) ([]byte, error) {
		node, ok := o.route.target(shard)
		if !ok || o.forward == nil {
			return nil, fmt.Errorf("accounts: no node to read shard %d from", shard)
		}
		out, err := o.forward.Read(ctx, node, shard, req)
		o.route.heard(shard, node, err)
		return out, err
	})
	if err != nil {
		return readAnswer{}, err
	}
	var a readAnswer
	if err := msgpack.Unmarshal(out, &a); err != nil {
		return readAnswer{}, fmt.Errorf("accounts: shard %d: a read answer that does not decode: %w", shard, err)
	}
	return a, nil
}

// retry tries raw until it has a result, limit has passed, or ctx ends.
func (o *Owner) retry(ctx context.Context, shard uint64, raw []byte, limit time.Duration, tryOnce func(context.Context, uint64, []byte) ([]byte, error)) ([]byte, error) {
	deadline := time.Now().Add(limit)
	if until, ok := quota.WaitBudget(ctx); ok && until.Before(deadline) {
		deadline = until // what the key check left of the call's budget
	}
	total, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	backoff := 5 * time.Millisecond
	for {
		try, cancelTry := context.WithTimeout(total, AttemptWait)
		out, err := tryOnce(try, shard, raw)
		cancelTry()
		if err == nil {
			return out, nil
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, cluster.ErrBatcherClosed):
			return nil, fmt.Errorf("%w: shard %d: %v", quota.ErrUnavailable, shard, err)
		case total.Err() != nil:
			return nil, fmt.Errorf("%w: shard %d did not answer in time: %v", quota.ErrUnavailable, shard, err)
		}
		select { // a try that failed at once (no leader yet) is not retried in a spin
		case <-time.After(backoff):
		case <-total.Done():
		}
		backoff = min(2*backoff, 50*time.Millisecond)
	}
}

// giveBack settles, counting nothing, the admission raw made if it applied: its result
// comes again under the same id.
func (o *Owner) giveBack(account string, shard uint64, raw []byte) {
	r, err := o.submit(context.Background(), shard, raw, EndWait)
	if err != nil || !r.Admitted {
		return
	}
	cmd, err := decodeCommand(raw)
	if err != nil {
		return
	}
	settle := Command{ID: NewCommandID(), Account: account, Step: step.Command{Kind: step.Settle, Now: cmd.Step.Now, ID: r.ID}}
	if b, err := settle.Encode(); err == nil {
		o.submit(context.Background(), shard, b, EndWait)
	}
}

// view reads the account's admin view from its shard.
func (o *Owner) view(ctx context.Context, shard uint64, account string, c *step.Command) (step.Result, error) {
	q, err := (&Query{Account: account, Now: c.Now, Plan: c.Plan, Key: c.Key, KeyLimits: c.KeyLimits}).Encode()
	if err != nil {
		return step.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, TotalWait)
	defer cancel()
	out, err := o.read(ctx, shard, q)
	if err != nil {
		return step.Result{}, fmt.Errorf("%w: read shard %d: %v", quota.ErrUnavailable, shard, err)
	}
	var r step.Result
	if err := r.Decode(out); err != nil {
		return step.Result{}, fmt.Errorf("accounts: shard %d: a view that does not decode: %w", shard, err)
	}
	return r, nil
}
