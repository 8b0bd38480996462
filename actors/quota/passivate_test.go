package quota

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
)

// An account actor passivates only once nothing is in flight, and the incarnation a later
// call revives has everything of the one that retired: the sliding burst window to the
// nanosecond, the key's own rpm window, the durable reservations (a video reservation, a
// credit hold) that end after the revival, and money charged exactly once.
func TestAPassivatedActorRevivesWithItsWindowsReservationsAndMoney(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 5 * time.Millisecond})
	ctx := context.Background()
	const acct = "acct_p"
	p := plan(t, "{name: p, window_requests: 2, burst_rpm: 6, video_daily_seconds: 100}")
	rpm := persistence.KeyLimits{RPM: 3}
	e.credit(acct, "10", "topup-1")
	call := func(key string, at time.Duration, est string, limits persistence.KeyLimits) Decision {
		t.Helper()
		e.clk.Set(t0.Add(at))
		d, err := e.svc.Admit(ctx, AdmitRequest{Account: acct, KeyID: key, Plan: p, EstimatedCost: usdAmount(t, est), At: e.clk.Now(), KeyLimits: limits})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	// Two calls within the plan, one paid, at t0+0 s, +1 s, +2 s; key r has an rpm of 3.
	for i, key := range []string{"r", "r", "k"} {
		d := call(key, time.Duration(i)*time.Second, "1", rpm)
		admitted(t, d)
		cost := map[bool]string{false: "0", true: "0.75"}[d.Paid]
		o := Outcome{Counts: true, Cost: usdAmount(t, cost), Log: e.entry(key, e.clk.Now())}
		e.settle(d, o)
	}
	v, err := e.svc.ReserveVideoSeconds(ctx, acct, p, 12)
	if err != nil || !v.Admitted {
		t.Fatalf("video reservation: %+v %v", v, err)
	}
	hold, err := e.svc.HoldCredits(ctx, HoldRequest{Account: acct, Plan: p, Key: "video/task_p", Amount: usdAmount(t, "2")})
	if err != nil || !hold.Admitted {
		t.Fatalf("credit hold: %+v %v", hold, err)
	}

	// A call in flight (paid, at +3 s) keeps the actor through many idle ticks.
	inFlight := call("r", 3*time.Second, "1", rpm)
	admitted(t, inFlight)
	time.Sleep(100 * time.Millisecond) // twenty idle ticks
	if n := e.svc.dir.Count(); n != 1 {
		t.Fatalf("%d actors with a call in flight, want the account's 1", n)
	}
	if s := e.settle(inFlight, Outcome{Counts: true, Cost: usdAmount(t, "0.3"), Log: e.entry("r", t0.Add(3*time.Second))}); s.Charged != usdAmount(t, "0.3") {
		t.Fatalf("settle charged %s, want 0.3", s.Charged)
	}
	testutil.WaitFor(t, "passivation", func() bool { return e.svc.dir.Count() == 0 })

	// Revived at +10 s. Key r's own window holds its calls at 0, 1 and 3 s: full until the
	// one at 0 s leaves it. The account's burst window holds the 4 calls at 0..3 s: two more
	// are admitted, and the next waits until the call at 0 s leaves, at exactly +60 s.
	refused(t, call("r", 10*time.Second, "0", rpm), LimitKeyRPM, 50*time.Second)
	for _, at := range []time.Duration{10 * time.Second, 11 * time.Second} {
		d := call("k", at, "0", persistence.KeyLimits{})
		admitted(t, d)
		e.settle(d, Outcome{Counts: true, Log: e.entry("k", e.clk.Now())})
	}
	st := e.state(acct, p)
	if st.Burst.Limit != 6 || st.Burst.Remaining != 0 || !st.Burst.Reset.Equal(t0.Add(60*time.Second)) {
		t.Fatalf("burst after the revival = %+v, want 6 calls, none left, reset at t0+60s", st.Burst)
	}
	refused(t, call("k", 12*time.Second, "0", persistence.KeyLimits{}), LimitBurst, 48*time.Second)

	// The reservations made before the passivation end after it, once each.
	if err := e.svc.CommitVideoSeconds(ctx, v.Reservation, 8); err != nil {
		t.Fatal(err)
	}
	s, err := e.svc.SettleHold(ctx, acct, p, "video/task_p", usdAmount(t, "1.5"), &persistence.LogEntry{RequestID: "req_video_p", Time: e.clk.Now().UnixNano(), Status: 200})
	if err != nil || s.Charged != usdAmount(t, "1.5") {
		t.Fatalf("settle hold: %+v %v", s, err)
	}
	st = e.state(acct, p)
	if st.Video.Used != 8 || st.Video.Reserved != 0 || st.Held != 0 || st.InFlight != 0 {
		t.Fatalf("after the revival: video %+v, held %s, in flight %d", st.Video, st.Held, st.InFlight)
	}
	// 10 - 0.75 - 0.3 - 1.5 (the calls at +10 s and +11 s cost nothing)
	if want := usdAmount(t, "7.45"); st.Balance != want || st.Spent != usdAmount(t, "2.55") {
		t.Fatalf("balance %s spent %s, want %s and 2.55", st.Balance, st.Spent, want)
	}
}
