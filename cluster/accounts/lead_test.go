package accounts

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// untilFast waits until shard's leader may answer admissions from memory (its lease has
// begun), and returns it.
func (c *testCluster) untilFast(shard uint64) *testNode {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		n := c.leader(shard)
		l := n.owner.leadingOf(shard)
		l.mu.Lock()
		l.lastUse = time.Now() // keeps the lease renewed while the test waits
		fast := l.fast(time.Now())
		l.mu.Unlock()
		if fast {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("shard %d's leader never began its lease", shard)
	return nil
}

// Once a shard's leader holds its lease, admissions of its accounts, taken on any node, are
// answered from the leader's memory (a follower's forwarded to it), and every limit is as
// exact as when each waited for its entry: a 10-per-minute burst hammered from three
// nodes admits 10, and credits settled from every node add up.
func TestOnceItsLeaseBeganTheShardLeaderAnswersAdmissionsFromMemoryAndLimitsStayExact(t *testing.T) {
	clock := testutil.NewClock(time.Now())
	c := newTestCluster(t, 2, clock.Now)
	for _, shard := range c.shards {
		c.untilFast(shard)
	}
	ctx := context.Background()
	plan := &catalog.Plan{Name: "burst", BurstRPM: 10}
	var admitted atomic.Int64
	c.hammer(6, func(n *testNode, _ int) {
		for range 3 {
			d, err := n.quota.Admit(ctx, quota.AdmitRequest{Account: "acct-burst", KeyID: "k1", Plan: plan})
			if err != nil {
				t.Errorf("admit on node %d: %v", n.id, err)
			} else if d.Admitted {
				admitted.Add(1)
			}
		}
	})
	if admitted.Load() != 10 {
		t.Fatalf("admitted %d of 54 calls under a 10-per-minute burst, want 10", admitted.Load())
	}

	accounts := []string{"acct-1", "acct-2", "acct-3", "acct-4"}
	l := newLedger()
	for _, acct := range accounts {
		if _, added, err := c.nodes[0].quota.AddCredits(ctx, acct, 1_000_000, "seed"); err != nil || !added {
			t.Fatal(err)
		}
		l.topUp(acct, "seed", 1_000_000)
	}
	c.hammer(3, func(n *testNode, w int) {
		for i := range 10 {
			acct := accounts[(w+i)%len(accounts)]
			if _, err := callAndSettle(ctx, n.quota, l, acct, fmt.Sprintf("call-%d-%d-%d", n.id, w, i), money.Amount(10+i)); err != nil {
				t.Errorf("call: %v", err)
			}
		}
	})
	l.check(t, c, accounts)

	var fromMemory, forwarded uint64
	for _, n := range c.nodes {
		fromMemory += n.owner.Stats.FromMemory.Load()
		forwarded += n.owner.Stats.Forwarded.Load()
	}
	if fromMemory == 0 || forwarded == 0 {
		t.Fatalf("%d admissions answered from memory, %d steps forwarded: both should be some", fromMemory, forwarded)
	}
}

// untilNoneInFlight waits (up to EndWait) until acct has no call in flight, and returns its
// state as n reads it.
func (c *testCluster) untilNoneInFlight(n *testNode, acct string, plan *catalog.Plan) quota.QuotaState {
	c.t.Helper()
	for deadline := time.Now().Add(EndWait); ; time.Sleep(20 * time.Millisecond) {
		st, err := n.quota.State(context.Background(), acct, plan)
		if err != nil {
			c.t.Fatal(err)
		}
		if st.InFlight == 0 || time.Now().After(deadline) {
			return st
		}
	}
}

// gate is a Replicator whose proposals can be held: a held proposal waits until its
// context ends and never reaches the engine (a leader whose entries stop committing).
type gate struct {
	cluster.Replicator
	held atomic.Bool
	dead chan struct{} // closed: the held proposals fail (the node is being stopped)
}

func (g *gate) Propose(ctx context.Context, shard uint64, cmd []byte) ([]byte, error) {
	if g.held.Load() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-g.dead:
			return nil, errors.New("the node is stopped")
		}
	}
	return g.Replicator.Propose(ctx, shard, cmd)
}

// A leader whose entries stop committing answers admissions from memory for at most
// MaxUncommitted, then makes them wait; when it dies, the admissions it answered and never
// committed are lost, and their calls, settled on the node that took them, are billed as
// admitted at the settle (Late): nothing served is free, and no later reservation is
// taken for theirs.
func TestADeadLeadersUncommittedAdmissionsAreBoundedAndTheirCallsAreStillBilled(t *testing.T) {
	var mu sync.Mutex
	gates := map[uint64]*gate{}
	c := newTestClusterOver(t, 1, time.Now, func(id uint64, r cluster.Replicator) cluster.Replicator {
		g := &gate{Replicator: r, dead: make(chan struct{})}
		mu.Lock()
		gates[id] = g
		mu.Unlock()
		return g
	})
	shard := c.shards[0]
	ctx := context.Background()
	const acct = "acct-lost"
	leader := c.untilFast(shard)
	var taker *testNode // a follower: the calls are its, their admissions the leader's
	for _, n := range c.nodes {
		if n != leader {
			taker = n
			break
		}
	}
	if _, added, err := taker.quota.AddCredits(ctx, acct, 1_000_000, "seed"); err != nil || !added {
		t.Fatal(err)
	}
	plan := &catalog.Plan{Name: "paid", WeeklyRequests: 1} // the first call in the plan, the rest paid
	c.untilFast(shard)

	mu.Lock()
	gates[leader.id].held.Store(true)
	mu.Unlock()
	held := time.Now()
	var fast []quota.Decision
	var lastFast time.Time
	for time.Since(held) < 3*MaxUncommitted {
		actx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		began := time.Now()
		d, err := taker.quota.Admit(actx, quota.AdmitRequest{Account: acct, KeyID: "k1", Plan: plan, EstimatedCost: 5})
		cancel()
		switch {
		case err == nil && d.Admitted && time.Since(began) < 50*time.Millisecond:
			fast = append(fast, d)
			lastFast = time.Now()
		case err == nil && d.Admitted:
			t.Fatalf("an admission was answered after %v with the leader's entries held", time.Since(began))
		case err != nil && !errors.Is(err, quota.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("admit: %v", err)
		}
	}
	if len(fast) == 0 {
		t.Fatal("no admission was answered from memory once the entries were held")
	}
	if d := lastFast.Sub(held); d > MaxUncommitted+50*time.Millisecond {
		t.Fatalf("the leader answered from memory %v after its entries stopped committing; at most %v", d, MaxUncommitted)
	}
	t.Logf("%d admissions answered from memory in the %v after the leader's entries were held", len(fast), lastFast.Sub(held))

	close(gates[leader.id].dead)
	c.stop(leader)
	c.leader(shard)
	// The admissions that waited past their caller's patience are given back in the
	// background (admitted again by the new leader, then settled counting nothing): until
	// they are, one of them may hold the week's request.
	c.untilNoneInFlight(taker, acct, plan)
	var billed money.Amount
	var wg sync.WaitGroup
	for i, d := range fast {
		cost := money.Amount(100 + i)
		billed += cost
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := taker.quota.Settle(ctx, d.Reservation, quota.Outcome{Counts: true, Cost: cost}); err != nil {
				t.Errorf("settle of a lost admission: %v", err)
			}
		}()
	}
	wg.Wait()
	st := c.untilNoneInFlight(taker, acct, plan)
	// Each call is billed once: one of them in the week's one request (whichever settled
	// first) and the others paid at their own cost, or, when a given-back admission held the
	// week's request meanwhile, every one of them paid.
	free := st.Balance - (1_000_000 - billed)
	inPlan := st.Weekly.Used == 1000 && free >= 100 && free < 100+money.Amount(len(fast))
	allPaid := st.Weekly.Used == 0 && free == 0
	if !inPlan && !allPaid || st.InFlight != 0 || st.Held != 0 {
		t.Fatalf("after the lost calls' settles: balance %s, %s of %s billed not charged (want one call's cost, or none with the week unused), week used %d, %d in flight, %s held",
			st.Balance, free, billed, st.Weekly.Used, st.InFlight, st.Held)
	}
}
