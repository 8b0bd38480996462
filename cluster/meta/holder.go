package meta

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/cluster"
)

// Holder keeps this node's read lease on the metadata shard (lease.go): it proposes a
// renewal every RenewEvery, and at once after its replica applied a write that waits for
// leases, so the write's proposer hears that this node has it. Valid says whether the node may read its replica
// without a consensus round.
type Holder struct {
	node  uint64
	sm    *StateMachine
	rep   cluster.Replicator
	shard uint64

	mu      sync.Mutex
	pending map[uint64]time.Time // renewal token → when it was proposed
	until   time.Time

	nudge   chan struct{}
	stop    chan struct{}
	done    chan struct{}
	started atomic.Bool
}

// NewHolder renews node's lease on shard (the metadata shard, whose replica here is sm)
// through rep. Start it with Run; Close stops it.
func NewHolder(node uint64, sm *StateMachine, rep cluster.Replicator, shard uint64) *Holder {
	h := &Holder{node: node, sm: sm, rep: rep, shard: shard, pending: map[uint64]time.Time{},
		nudge: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	sm.OnLease(h.applied)
	sm.OnApplied(func(_ uint64, c Command) {
		if waitsForLeases(c.Kind) {
			h.poke()
		}
	})
	return h
}

// Valid is whether this node holds its read lease now.
func (h *Holder) Valid() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return time.Now().Before(h.until)
}

// Run renews until Close.
func (h *Holder) Run() {
	h.started.Store(true)
	defer close(h.done)
	tick := time.NewTicker(RenewEvery)
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		default:
		}
		h.renew()
		select {
		case <-h.stop:
			return
		case <-tick.C:
		case <-h.nudge:
		}
	}
}

// Close stops the renewals (once); the lease runs out on its own.
func (h *Holder) Close() {
	select {
	case <-h.stop:
		return
	default:
	}
	close(h.stop)
	if h.started.Load() {
		<-h.done
	}
}

func (h *Holder) poke() {
	select {
	case h.nudge <- struct{}{}:
	default:
	}
}

// renew proposes one renewal and waits for it (or RenewEvery). A renewal whose proposal
// timed out may still apply later; its time stays a safe start for the lease it gives.
func (h *Holder) renew() {
	token := rand.Uint64()
	now := time.Now()
	h.mu.Lock()
	for t, at := range h.pending {
		if now.Sub(at) > LeaseDuration { // it would give no lease any more
			delete(h.pending, t)
		}
	}
	h.pending[token] = now
	h.mu.Unlock()
	raw, err := Command{ID: NewCommandID(), Kind: KindLease, Lease: &LeaseRenewal{Node: h.node, Token: token, Applied: h.sm.Applied()}}.Encode()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), RenewEvery)
	defer cancel()
	h.rep.Propose(ctx, h.shard, raw) // a failure is the next tick's to mend
}

// applied takes the lease a renewal gives once this replica has applied it: every write
// committed before it is applied here too.
func (h *Holder) applied(r LeaseRenewal) {
	if r.Node != h.node {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if at, ok := h.pending[r.Token]; ok {
		delete(h.pending, r.Token)
		if until := at.Add(LeaseDuration); until.After(h.until) {
			h.until = until
		}
	}
}
