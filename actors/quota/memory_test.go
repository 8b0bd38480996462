package quota

import (
	"context"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
)

// countingStore counts the writes whose done has returned: the actor has been told of them.
type countingStore struct {
	Store
	told atomic.Int64
}

func (c *countingStore) SubmitQuota(w persistence.QuotaWrite, done func(error)) {
	c.Store.SubmitQuota(w, func(err error) {
		done(err)
		c.told.Add(1)
	})
}

// An active account between calls costs its actor and its state, nothing more: no pending
// write, no queued message, no goroutine (its mailbox has no run), and the actor fits the
// 384-byte size class (README, "Memory": every active account has one).
func TestAnAccountBetweenCallsHoldsOnlyItsState(t *testing.T) {
	if size := unsafe.Sizeof(accountActor{}); size > 384 {
		t.Fatalf("accountActor is %d bytes, over the 384-byte size class", size)
	}
	e := newEnv(t, Config{})
	st := &countingStore{Store: e.store}
	svc := NewService(st, e.cfg)
	defer svc.Close(context.Background())
	p := plan(t, "{name: p, window_requests: 10, burst_rpm: 5}")
	ctx := context.Background()
	for range 3 {
		d, err := svc.Admit(ctx, AdmitRequest{Account: "acct_m", KeyID: "k", Plan: p, At: e.clk.Now()})
		if err != nil {
			t.Fatal(err)
		}
		admitted(t, d)
		if _, err = svc.Settle(ctx, d.Reservation, Outcome{Counts: true, Log: e.entry("k", e.clk.Now())}); err != nil {
			t.Fatal(err)
		}
	}
	actors := svc.dir.Incarnations()
	if len(actors) != 1 {
		t.Fatalf("%d actors, want the account's 1", len(actors))
	}
	a := actors[0]
	// Once told of its last write nothing more reaches the actor; what it did happened
	// before its run ended (Idle). At least the three settles' writes: polled every 2 ms,
	// an exact count can be stepped over on a loaded machine (CI once timed out here).
	testutil.WaitFor(t, "the actor to be told of its writes", func() bool { return st.told.Load() >= 3 })
	testutil.WaitFor(t, "the actor's run to end", a.box.Idle)
	if a.writing || a.pend != nil || a.unwritten != nil || a.flushQueued || a.st.Calls != nil {
		t.Fatalf("idle actor: writing %v, pending write %+v, unwritten %v, flush queued %v, calls %v",
			a.writing, a.pend, a.unwritten, a.flushQueued, a.st.Calls)
	}
}
