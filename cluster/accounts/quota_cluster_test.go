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
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// hammer runs f from workers goroutines on every running node at once and waits.
func (c *testCluster) hammer(workers int, f func(n *testNode, worker int)) {
	var wg sync.WaitGroup
	for _, n := range c.running() {
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f(n, w)
			}()
		}
	}
	wg.Wait()
}

func TestAKeyOnA10RPMPlanHammeredFromThreeNodesIsAdmittedExactly10PerSlidingMinute(t *testing.T) {
	// Frozen: a phase that takes seconds on a loaded machine must not move its calls' times
	// (with the real clock underneath, the 59 s step reached past the third phase's calls
	// whenever that phase took over a second, and the fourth admitted 10).
	clock := testutil.NewClock(time.Now())
	c := newTestCluster(t, 4, clock.Now)
	plan := &catalog.Plan{Name: "burst", BurstRPM: 10}
	ctx := context.Background()
	phases := []struct {
		name  string
		move  time.Duration // the clock moves by this before the phase
		admit int64
	}{
		{"a first burst", 0, 10},
		{"30 s later, the minute is still full", 30 * time.Second, 0},
		{"the first calls left the window 60 s after they came", 30 * time.Second, 10},
		{"and the minute is full again", 59 * time.Second, 0},
	}
	for _, ph := range phases {
		clock.Add(ph.move)
		var admitted, refused atomic.Int64
		c.hammer(6, func(n *testNode, _ int) {
			for range 3 {
				d, err := n.quota.Admit(ctx, quota.AdmitRequest{Account: "acct-burst", KeyID: "k1", Plan: plan})
				switch {
				case err != nil:
					t.Errorf("admit on node %d: %v", n.id, err)
				case d.Admitted:
					admitted.Add(1)
				case d.Refused != quota.LimitBurst || d.RetryAfter <= 0:
					t.Errorf("refusal %+v, want the burst limit with a wait", d)
				default:
					refused.Add(1)
				}
			}
		})
		if admitted.Load() != ph.admit || admitted.Load()+refused.Load() != 3*6*3 {
			t.Errorf("%s: admitted %d, refused %d; want %d admitted", ph.name, admitted.Load(), refused.Load(), ph.admit)
		}
	}
}

// ledger is what the clients of a run were told, per account.
type ledger struct {
	mu      sync.Mutex
	added   map[string]money.Amount // top-ups acknowledged, each idempotency key once
	keys    map[string]bool         // account/key of every acknowledged top-up
	settled map[string][]string     // request ids of settles and charges acknowledged
}

func newLedger() *ledger {
	return &ledger{added: map[string]money.Amount{}, keys: map[string]bool{}, settled: map[string][]string{}}
}

// topUp notes an acknowledged top-up under key: whether this answer said added or repeated
// (a retry after an unknown outcome, or another node's use of a shared key), the key's
// amount is in the balance exactly once.
func (l *ledger) topUp(acct, key string, a money.Amount) {
	l.mu.Lock()
	if !l.keys[acct+"/"+key] {
		l.keys[acct+"/"+key] = true
		l.added[acct] += a
	}
	l.mu.Unlock()
}

// untilAnswered repeats f while the account's shard is unavailable (an unknown outcome), as
// a client does with the same idempotency key, for up to 20 s.
func untilAnswered(f func() error) error {
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if !errors.Is(err, quota.ErrUnavailable) || time.Now().After(deadline) {
			return err
		}
	}
}

func (l *ledger) logged(acct, rid string) {
	l.mu.Lock()
	l.settled[acct] = append(l.settled[acct], rid)
	l.mu.Unlock()
}

// check says whether every running node's store agrees with what the clients were told:
// balance == top-ups − Σ logged cost == top-ups − spent, and every acknowledged settle and
// charge is in the request log exactly once.
func (l *ledger) check(t *testing.T, c *testCluster, accounts []string) {
	t.Helper()
	c.converged()
	for _, n := range c.running() {
		for _, acct := range accounts {
			st, err := n.quota.State(context.Background(), acct, paidPlan)
			if err != nil {
				t.Fatalf("node %d: state of %s: %v", n.id, acct, err)
			}
			page, err := n.store.QueryLog(persistence.LogQuery{Account: acct, Limit: persistence.MaxLogLimit})
			if err != nil {
				t.Fatal(err)
			}
			if page.NextCursor != "" {
				t.Fatalf("%s: more log than one page", acct)
			}
			seen := map[string]int{}
			var cost money.Amount
			for _, e := range page.Entries {
				seen[e.RequestID]++
				cost += money.Amount(e.Cost)
			}
			if st.Balance != l.added[acct]-cost || st.Spent != cost {
				t.Errorf("node %d, %s: balance %s spent %s; top-ups %s, logged cost %s", n.id, acct, st.Balance, st.Spent, l.added[acct], cost)
			}
			for _, rid := range l.settled[acct] {
				if seen[rid] != 1 {
					t.Errorf("node %d, %s: acknowledged %s is in the log %d times", n.id, acct, rid, seen[rid])
				}
			}
			if len(page.Entries) < len(l.settled[acct]) {
				t.Errorf("node %d, %s: %d entries for %d acknowledged", n.id, acct, len(page.Entries), len(l.settled[acct]))
			}
		}
	}
}

// paidPlan admits one call per window in the plan; the rest are paid from credits.
var paidPlan = &catalog.Plan{Name: "paid", WindowRequests: 1}

// callAndSettle admits a call of acct and settles it at cost with a log entry; it tells the
// ledger what was acknowledged, and returns the longest wait of its two calls.
func callAndSettle(ctx context.Context, q *quota.Service, l *ledger, acct, rid string, cost money.Amount) (time.Duration, error) {
	start := time.Now()
	d, err := q.Admit(ctx, quota.AdmitRequest{Account: acct, KeyID: "k1", Plan: paidPlan, EstimatedCost: cost})
	wait := time.Since(start)
	if err != nil || !d.Admitted {
		return wait, err
	}
	start = time.Now()
	e := &persistence.LogEntry{RequestID: rid, Time: time.Now().UnixNano(), KeyID: "k1", Model: "m", Route: "r", Status: 200}
	_, err = q.Settle(ctx, d.Reservation, quota.Outcome{Counts: true, Cost: cost, Log: e})
	wait = max(wait, time.Since(start))
	if err == nil {
		l.logged(acct, rid)
	}
	return wait, err
}

func TestCreditsStayExactWithTopUpsChargesAndSettlesFromEveryNode(t *testing.T) {
	c := newTestCluster(t, 4, time.Now)
	accounts := []string{"acct-1", "acct-2", "acct-3", "acct-4", "acct-5", "acct-6"}
	l := newLedger()
	ctx := context.Background()
	var calls atomic.Int64
	c.hammer(3, func(n *testNode, w int) {
		for i := range 4 {
			for _, acct := range accounts {
				// A top-up of this worker, and one every node sends under the same key.
				for _, key := range []string{fmt.Sprintf("top-%d-%d-%d", n.id, w, i), fmt.Sprintf("top-shared-%d", i)} {
					err := untilAnswered(func() error { _, _, err := n.quota.AddCredits(ctx, acct, 1000, key); return err })
					if err != nil {
						t.Errorf("top-up: %v", err)
					} else {
						l.topUp(acct, key, 1000)
					}
				}
				rid := fmt.Sprintf("call-%d-%d-%d", n.id, w, i)
				// A call the shard could not take in 2 s is refused or unacknowledged (503):
				// the ledger holds only what was acknowledged, and checks the rest adds up.
				if _, err := callAndSettle(ctx, n.quota, l, acct, rid, money.Amount(100+i)); err != nil && !errors.Is(err, quota.ErrUnavailable) {
					t.Errorf("call: %v", err)
				}
				charge := fmt.Sprintf("charge-%d-%d-%d", n.id, w, i)
				e := &persistence.LogEntry{RequestID: charge, Time: time.Now().UnixNano(), KeyID: "k1", Model: "m", Route: "r", Status: 200}
				if err := untilAnswered(func() error { _, err := n.quota.Charge(ctx, acct, paidPlan, 7, charge, e); return err }); err != nil {
					t.Errorf("charge: %v", err)
				} else {
					l.logged(acct, charge)
				}
				calls.Add(1)
			}
		}
	})
	for _, acct := range accounts {
		if want := money.Amount(1000 * (3*3*4 + 4)); l.added[acct] != want {
			t.Errorf("%s: top-ups added %s, want %s (each shared key once)", acct, l.added[acct], want)
		}
	}
	l.check(t, c, accounts)
}

func TestKillingAShardLeaderUnderLoadLosesNoAcknowledgedCallAndNoCallWaitsOver2s(t *testing.T) {
	c := newTestCluster(t, 4, time.Now)
	accounts := []string{"acct-1", "acct-2", "acct-3"}
	l := newLedger()
	ctx := context.Background()
	for _, acct := range accounts {
		if _, added, err := c.nodes[0].quota.AddCredits(ctx, acct, 1_000_000, "seed"); err != nil || !added {
			t.Fatal(err)
		}
		l.topUp(acct, "seed", 1_000_000)
	}
	victim := c.leader(c.nodes[0].owner.Shard(accounts[0]))
	var (
		longest  atomic.Int64
		answered atomic.Int64
		failed   atomic.Int64
		stop     atomic.Bool
	)
	var wg sync.WaitGroup
	for _, n := range c.nodes {
		if n == victim {
			continue
		}
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; !stop.Load(); i++ {
					acct := accounts[(w+i)%len(accounts)]
					wait, err := callAndSettle(ctx, n.quota, l, acct, fmt.Sprintf("call-%d-%d-%d", n.id, w, i), money.Amount(10+i%7))
					for {
						old := longest.Load()
						if int64(wait) <= old || longest.CompareAndSwap(old, int64(wait)) {
							break
						}
					}
					switch {
					case err == nil:
						answered.Add(1)
					case errors.Is(err, quota.ErrUnavailable):
						failed.Add(1)
					default:
						t.Errorf("call: %v", err)
					}
				}
			}()
		}
	}
	time.Sleep(500 * time.Millisecond)
	c.stop(victim)
	time.Sleep(2 * time.Second)
	stop.Store(true)
	wg.Wait()
	t.Logf("killed node %d; %d calls answered, %d unavailable; the longest wait %v",
		victim.id, answered.Load(), failed.Load(), time.Duration(longest.Load()))
	if answered.Load() == 0 {
		t.Fatal("no call was answered")
	}
	// A call's wait ends at TotalWait at the latest; the slack is scheduling on a loaded box.
	if w := time.Duration(longest.Load()); w > TotalWait+250*time.Millisecond {
		t.Errorf("a call waited %v, more than %v", w, TotalWait)
	}
	l.check(t, c, accounts)
}

// An admission whose caller's wait budget is spent (the key check took it) gives up at once
// with ErrUnavailable, and what it may have reserved is given back: nothing stays in flight.
func TestAnAdmissionPastItsWaitBudgetGivesUpAndLeavesNothingReserved(t *testing.T) {
	c := newTestCluster(t, 2, time.Now)
	n := c.nodes[1]
	ctx := quota.WithWaitBudget(context.Background(), time.Now().Add(-time.Millisecond))
	start := time.Now()
	_, err := n.quota.Admit(ctx, quota.AdmitRequest{Account: "acct-budget", KeyID: "k1", Plan: paidPlan})
	if !errors.Is(err, quota.ErrUnavailable) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("admit past its budget: %v after %v, want ErrUnavailable at once", err, time.Since(start))
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := n.quota.State(context.Background(), "acct-budget", paidPlan)
		if err == nil && st.InFlight == 0 && st.Window.Reserved == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s later: %+v, %v; want nothing in flight", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
