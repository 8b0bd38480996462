package quota

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// durablePlan exercises every counter: window, weekly, per-key burst, throttle, media.
const durablePlan = "{name: p, window_requests: 3, weekly_requests: 50, burst_rpm: 3, burst_scope: key, throttle: {min_requests: 1, max_share: 0.1, window: 1m, rpm: 1, duration: 1h}}"

// load builds up state on acct_d: 2 settled calls, one paid call, credits, images, video,
// a full burst window on key a and a throttle on key a.
func load(t *testing.T, e *env, p *catalog.Plan) {
	t.Helper()
	// trigger = max(1, ceil(0.1 · 3 · 1)) = 1: the first call of a key throttles it to 1/min.
	if p.Throttle.Trigger != 1 {
		t.Fatalf("trigger = %d", p.Throttle.Trigger)
	}
	ctx := context.Background()
	e.credit("acct_d", "5", "t1")
	admitted(t, e.call("acct_d", "a", p))
	admitted(t, e.call("acct_d", "b", p))
	admitted(t, e.call("acct_d", "c", p))
	d := e.admit("acct_d", "d", p, 0, usdAmount(t, "1"))
	if !d.Paid {
		t.Fatal("fourth call is beyond the window")
	}
	e.settle(d, Outcome{Counts: true, Cost: usdAmount(t, "0.75"), Log: &persistence.LogEntry{RequestID: "r4", Time: t0.UnixNano(), Status: 200}})
	if _, err := e.svc.ReserveImages(ctx, "acct_d", p, 2); err != nil {
		t.Fatal(err)
	}
	v, err := e.svc.ReserveVideoSeconds(ctx, "acct_d", p, 12)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.CommitVideoSeconds(ctx, v.Reservation, 10); err != nil {
		t.Fatal(err)
	}
}

// check asserts the state load built (ignoring the burst windows' exact reset times). The
// image reservation is gone: an image call never outlives the incarnation that reserved its
// image, so a reservation a new incarnation finds was left by a crash.
func check(t *testing.T, e *env, p *catalog.Plan, what string) QuotaState {
	t.Helper()
	st := e.state("acct_d", p)
	want := []any{usdAmount(t, "4.25"), usdAmount(t, "0.75"), int64(3000), int64(3000), int64(0), int64(10), int64(0), 0}
	got := []any{st.Balance, st.Spent, st.Window.Used, st.Weekly.Used, st.Images.Used, st.Video.Used, st.Images.Reserved, st.InFlight}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: balance, spent, window, weekly, images, video, images reserved, in flight = %v, want %v", what, got, want)
	}
	return st
}

// Idle actors passivate, and the next message reactivates the account from Pebble with
// everything: counters, money, media reservations, burst windows and throttles.
func TestPassivationKeepsState(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 5 * time.Millisecond})
	p := plan(t, durablePlan)
	load(t, e, p)
	testutil.WaitFor(t, "passivation", func() bool { return e.svc.dir.Count() == 0 })
	e.clk.Add(time.Second)
	// Key a's burst window and throttle came back: 1 call in the last minute of a 1/min cap.
	refused(t, e.admit("acct_d", "a", p, 0, 0), LimitThrottle, 59*time.Second)
	check(t, e, p, "after passivation")
	st := e.state("acct_d", p)
	if len(st.Keys) != 4 || st.Keys[0].ThrottledUntil.IsZero() {
		t.Fatalf("keys after passivation = %+v", st.Keys)
	}
}

// A message that reaches the directory while the actor is deciding to passivate keeps it
// alive; one that comes after it retired activates a new incarnation that sees everything.
func TestPassivationLosesNoMessage(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 5 * time.Millisecond})
	p := plan(t, "{name: p, window_requests: 10}")
	var round atomic.Int32
	results := make(chan Decision, 2)
	e.svc.hookRetire = func(acct string, retired bool) {
		if retired || round.Add(1) != 1 {
			return
		}
		// The actor has written its state and is about to retire: a call arrives now.
		before := e.svc.dir.Sent(acct)
		go func() {
			d, err := e.svc.Admit(context.Background(), AdmitRequest{Account: acct, KeyID: "k", Plan: p})
			if err != nil {
				t.Error(err)
			}
			results <- d
		}()
		testutil.WaitFor(t, "the call to be routed", func() bool { return e.svc.dir.Sent(acct) == before+1 })
	}
	admitted(t, e.call("acct_q", "k", p))
	d := <-results // answered by the same incarnation, which then stayed
	admitted(t, d)
	e.settle(d, Outcome{Counts: true})
	testutil.WaitFor(t, "passivation", func() bool { return e.svc.dir.Count() == 0 })
	if st := e.state("acct_q", p); st.Window.Used != 2000 {
		t.Fatalf("window used = %d, want 2000", st.Window.Used)
	}
}

// A message sent after the old incarnation retired, while it is still alive and has not
// stopped, reaches a new incarnation, which loads what the old one wrote.
func TestMessageDuringStopReactivates(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 5 * time.Millisecond})
	p := plan(t, "{name: p, window_requests: 10}")
	var once atomic.Bool
	got := make(chan QuotaState, 1)
	e.svc.hookRetire = func(acct string, retired bool) {
		if !retired || !once.CompareAndSwap(false, true) {
			return
		}
		// This runs inside the old actor: it is alive, and the directory already forgot it.
		st, err := e.svc.State(context.Background(), acct, p)
		if err != nil {
			t.Error(err)
		}
		got <- st
	}
	admitted(t, e.call("acct_z", "k", p))
	st := <-got
	if st.Window.Used != 1000 {
		t.Fatalf("new incarnation saw window used %d, want 1000", st.Window.Used)
	}
}

// A restart keeps balance, spend and counters, whether the service was closed or not.
func TestRestartKeepsState(t *testing.T) {
	for _, graceful := range []bool{true, false} {
		e := newEnv(t, Config{})
		p := plan(t, durablePlan)
		load(t, e, p)
		inflight := e.admit("acct_d", "z", p, 0, usdAmount(t, "1"))
		admitted(t, inflight)
		e.restart(graceful)
		st := check(t, e, p, map[bool]string{true: "after close", false: "after crash"}[graceful])
		if st.Held != 0 || st.Window.Reserved != 0 {
			t.Fatalf("in-flight reservation survived: %+v", st)
		}
		if _, err := e.svc.Settle(context.Background(), inflight.Reservation, Outcome{Counts: true}); !errors.Is(err, ErrUnknownReservation) {
			t.Fatalf("settle of a lost reservation err = %v", err)
		}
		// balance = top-ups - the costs in the request log
		logs, err := e.store.ListLog("acct_d", time.Time{}, time.Time{}, 0)
		var sum int64
		for _, l := range logs {
			sum += l.Cost
		}
		if err != nil || len(logs) != 4 || st.Balance != usdAmount(t, "5")-st.Spent || sum != int64(st.Spent) {
			t.Fatalf("log %+v, %v; balance %s spent %s", logs, err, st.Balance, st.Spent)
		}
	}
}

// An admitted call never settled is released after the reservation TTL.
func TestUnsettledReservationExpires(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 5 * time.Millisecond, ReservationTTL: time.Hour})
	p := plan(t, "{name: p, window_requests: 1}")
	d := e.admit("acct_e", "k", p, 0, 0)
	admitted(t, d)
	time.Sleep(20 * time.Millisecond) // several ticks: the actor keeps its reservation, stays up
	if e.svc.dir.Count() != 1 || e.state("acct_e", p).Window.Reserved != 1000 {
		t.Fatal("an actor with a call in flight must not passivate or release it early")
	}
	e.clk.Add(time.Hour)
	testutil.WaitFor(t, "expiry and passivation", func() bool { return e.svc.dir.Count() == 0 })
	if st := e.state("acct_e", p); st.Window.Reserved != 0 || st.Window.Used != 0 {
		t.Fatalf("after expiry: %+v", st.Window)
	}
	if _, err := e.svc.Settle(context.Background(), d.Reservation, Outcome{Counts: true}); !errors.Is(err, ErrUnknownReservation) {
		t.Fatalf("late settle err = %v", err)
	}
}

// An admission's own TTL (the call's longest allowed duration) wins over the configured
// one: its reservation is released once that has passed, not after an hour.
func TestAnAdmissionsOwnTTLReleasesItsReservation(t *testing.T) {
	e := newEnv(t, Config{IdleTimeout: 5 * time.Millisecond, ReservationTTL: time.Hour})
	p := plan(t, "{name: p, window_requests: 1}")
	d, err := e.svc.Admit(context.Background(), AdmitRequest{Account: "acct_t", KeyID: "k", Plan: p, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	admitted(t, d)
	e.clk.Add(59 * time.Second)
	time.Sleep(20 * time.Millisecond) // several ticks of the account's owner
	if st := e.state("acct_t", p); st.InFlight != 1 || st.Window.Reserved != 1000 {
		t.Fatalf("before its TTL: in flight %d, reserved %d", st.InFlight, st.Window.Reserved)
	}
	e.clk.Add(2 * time.Second)
	testutil.WaitFor(t, "the reservation's expiry", func() bool {
		st := e.state("acct_t", p)
		return st.InFlight == 0 && st.Window.Reserved == 0
	})
}

// A caller that gives up does not leak its reservation.
func TestCancelledAdmitReleases(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 1}")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.svc.Admit(ctx, AdmitRequest{Account: "acct_g", KeyID: "k", Plan: p}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	testutil.WaitFor(t, "release", func() bool {
		st := e.state("acct_g", p)
		return st.InFlight == 0 && st.Window.Reserved == 0
	})
	admitted(t, e.call("acct_g", "k", p))
}

func TestClosedServiceRefuses(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p}")
	admitted(t, e.call("acct_y", "k", p))
	if err := e.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if e.svc.dir.Count() != 0 {
		t.Fatal("Close left actors")
	}
	if _, err := e.svc.Admit(context.Background(), AdmitRequest{Account: "acct_y", Plan: p}); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v", err)
	}
}

// faultyStore wraps the real store: it can panic on load or fail writes.
type faultyStore struct {
	Store
	panicLoad  atomic.Bool
	failWrites atomic.Bool
}

func (f *faultyStore) LoadQuota(acct string) (persistence.QuotaRecord, bool, error) {
	if f.panicLoad.Load() {
		panic("disk on fire")
	}
	return f.Store.LoadQuota(acct)
}

func (f *faultyStore) SubmitQuota(w persistence.QuotaWrite, done func(error)) {
	if f.failWrites.Load() {
		done(fmt.Errorf("write failed: %w", persistence.ErrFull))
		return
	}
	f.Store.SubmitQuota(w, done)
}

// faultyEnv is a service on a faultyStore over the env's real store.
func faultyEnv(t *testing.T) (*env, *faultyStore, *Service) {
	e := newEnv(t, Config{})
	f := &faultyStore{Store: e.store}
	svc := NewService(f, e.cfg)
	t.Cleanup(func() { svc.Close(context.Background()) })
	return e, f, svc
}

// A panic is answered as an error (supervise.ErrPanicked, never the panic's text) and the
// actor carries on; a failed write is reported and undone: the account returns to what is on
// disk, so neither the settle nor the top-up applies.
func TestFaultsAreAnsweredNotLost(t *testing.T) {
	e, f, svc := faultyEnv(t)
	ctx := context.Background()
	p := plan(t, "{name: p, window_requests: 5}")
	f.panicLoad.Store(true)
	if _, err := svc.Admit(ctx, AdmitRequest{Account: "acct_p", Plan: p}); !errors.Is(err, supervise.ErrPanicked) || strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("panic answered with %v", err)
	}
	f.panicLoad.Store(false)
	d, err := svc.Admit(ctx, AdmitRequest{Account: "acct_p", Plan: p})
	if err != nil || !d.Admitted {
		t.Fatalf("after the panic: %+v, %v", d, err)
	}
	f.failWrites.Store(true)
	if _, err := svc.Settle(ctx, d.Reservation, Outcome{Counts: true}); err == nil {
		t.Fatal("a settle whose write failed must say so")
	}
	if _, _, err := svc.AddCredits(ctx, "acct_p", usdAmount(t, "1"), "t1"); err == nil {
		t.Fatal("a top-up whose write failed must say so")
	}
	f.failWrites.Store(false)
	st, err := svc.State(ctx, "acct_p", p)
	if err != nil || st.Balance != 0 || st.Window.Used != 0 || st.InFlight != 0 {
		t.Fatalf("state = %+v, %v (neither the settle nor the top-up may apply)", st, err)
	}
	if b, added, err := svc.AddCredits(ctx, "acct_p", usdAmount(t, "1"), "t1"); err != nil || !added || b != usdAmount(t, "1") {
		t.Fatalf("retried top-up = %s, %v, %v", b, added, err)
	}
	if rec, _, _ := e.store.LoadQuota("acct_p"); rec.WindowUsed != 0 || rec.Balance != int64(usdAmount(t, "1")) {
		t.Fatalf("stored = %+v", rec)
	}
}

// A settle whose write the store refused (a full disk) is answered with
// that refusal and undone, never written later (its client was told it failed): the account
// is what is on disk, and the next call once the store takes writes is recorded as usual.
func TestARefusedSettleIsUndoneAndTheNextIsRecorded(t *testing.T) {
	e, f, svc := faultyEnv(t)
	ctx := context.Background()
	p := plan(t, "{name: p, window_requests: 5}")
	call := func(rid string) error {
		d, err := svc.Admit(ctx, AdmitRequest{Account: "acct_f", Plan: p})
		if err != nil || !d.Admitted {
			t.Fatalf("admit %s: %+v, %v", rid, d, err)
		}
		_, err = svc.Settle(ctx, d.Reservation, Outcome{Counts: true, Log: &persistence.LogEntry{RequestID: rid, Time: t0.UnixNano(), Status: 200}})
		return err
	}
	f.failWrites.Store(true)
	if err := call("req_full"); !errors.Is(err, persistence.ErrFull) {
		t.Fatalf("a settle the full store refused: %v, want ErrFull", err)
	}
	f.failWrites.Store(false)
	if st, err := svc.State(ctx, "acct_f", p); err != nil || st.Window.Used != 0 || st.InFlight != 0 {
		t.Fatalf("state after the refused settle = %+v, %v", st, err)
	}
	if err := call("req_after"); err != nil {
		t.Fatal(err)
	}
	rec, _, _ := e.store.LoadQuota("acct_f")
	log, _ := e.store.ListLog("acct_f", time.Time{}, time.Time{}, 0)
	if rec.WindowUsed != 1000 || len(log) != 1 || log[0].RequestID != "req_after" {
		t.Fatalf("stored window %d, log %+v; want 1000 and req_after alone", rec.WindowUsed, log)
	}
}
