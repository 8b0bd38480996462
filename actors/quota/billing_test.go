package quota

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/persistence"
)

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		m    float64
		want int64
	}{{1, 1000}, {1.5, 1500}, {2.0005, 2001}, {0.0015, 2}, {1000, 1_000_000}} {
		if got := Units(c.m); got != c.want {
			t.Errorf("Units(%v) = %d, want %d", c.m, got, c.want)
		}
	}
}

// A call counts its model's multiplier in exact thousandths.
func TestMultiplierCounting(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 3, weekly_requests: 10}")
	for i := 0; i < 2; i++ {
		d := e.admit("acct_m", "k", p, Units(1.5), 0)
		admitted(t, d)
		e.settle(d, Outcome{Counts: true})
	}
	refused(t, e.admit("acct_m", "k", p, 1, 0), LimitWindow, 4*time.Hour) // 3000 of 3000 used; 12:00 → 16:00
	st := e.state("acct_m", p)
	if st.Window.Used != 3000 || st.Window.Limit != 3000 || st.Weekly.Used != 3000 || st.Weekly.Limit != 10000 {
		t.Fatalf("window %+v weekly %+v", st.Window, st.Weekly)
	}
}

// Beyond the allowance a call is paid from credits at the model's rates on actual usage,
// exactly; within it, it costs nothing. The log entries carry what was charged.
func TestOverPlanPaidFromCreditsExactly(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 1}")
	prices := codec.Prices{Input: usdAmount(t, "0.0000025"), CacheRead: usdAmount(t, "0.00000125"), Output: usdAmount(t, "0.00001")}
	usage := codec.Usage{Input: 1234, CacheRead: 100, Output: 567, Reasoning: 89}
	cost := usage.Cost(prices) // 1234·2.5e-6 + 100·1.25e-6 + 656·1e-5 = 0.009770
	if cost != usdAmount(t, "0.00977") {
		t.Fatalf("cost = %s", cost)
	}
	if b := e.credit("acct_p", "1", "topup-1"); b != usdAmount(t, "1") {
		t.Fatalf("balance = %s", b)
	}
	logEntry := func(rid string) *persistence.LogEntry {
		return &persistence.LogEntry{RequestID: rid, Time: t0.UnixNano(), Model: "m1", Status: 200, InputTokens: usage.Input, Cost: 999}
	}
	free := e.admit("acct_p", "k", p, 0, usdAmount(t, "0.1"))
	admitted(t, free)
	if free.Paid {
		t.Fatal("the first call is within the plan")
	}
	if s := e.settle(free, Outcome{Counts: true, Cost: cost, Log: logEntry("r1")}); s.Charged != 0 || s.Balance != usdAmount(t, "1") {
		t.Fatalf("in-plan settlement = %+v", s)
	}
	paid := e.admit("acct_p", "k", p, 0, usdAmount(t, "0.1"))
	admitted(t, paid)
	if !paid.Paid {
		t.Fatal("the second call is beyond the plan and must be paid")
	}
	if st := e.state("acct_p", p); st.Held != usdAmount(t, "0.1") || st.InFlight != 1 {
		t.Fatalf("held %s, in flight %d", st.Held, st.InFlight)
	}
	s := e.settle(paid, Outcome{Counts: true, Cost: cost, Log: logEntry("r2")})
	want := usdAmount(t, "0.99023")
	if s.Charged != cost || s.Balance != want || !s.Paid {
		t.Fatalf("paid settlement = %+v, want charged %s balance %s", s, cost, want)
	}
	st := e.state("acct_p", p)
	if st.Balance != want || st.Spent != cost || st.Held != 0 || st.Window.Used != 1000 {
		t.Fatalf("state after = %+v", st)
	}
	logs, err := e.store.ListLog("acct_p", time.Time{}, time.Time{}, 0)
	if err != nil || len(logs) != 2 || logs[0].Cost != 0 || logs[1].Cost != int64(cost) || logs[1].AccountID != "acct_p" {
		t.Fatalf("log = %+v, %v", logs, err)
	}
}

// No allowance and no credits: 402 with resets_at; credits that do not cover the call's
// estimated cost: 402 by "credits".
func TestRefusalWithoutCredits(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 1}")
	admitted(t, e.call("acct_r", "k", p))
	d := e.admit("acct_r", "k", p, 0, 0)
	refused(t, d, LimitWindow, 4*time.Hour)
	if !d.ResetsAt.Equal(time.Date(2026, 3, 4, 16, 0, 0, 0, time.UTC)) || d.Refused.Status() != 402 {
		t.Fatalf("402 = %+v", d)
	}
	e.credit("acct_r", "0.05", "t1")
	refused(t, e.admit("acct_r", "k", p, 0, usdAmount(t, "0.1")), LimitCredits, 4*time.Hour)
	d = e.admit("acct_r", "k", p, 0, usdAmount(t, "0.05"))
	admitted(t, d)
	// The 0.05 is held: the next call finds no available credit at all.
	refused(t, e.admit("acct_r", "k", p, 0, 0), LimitWindow, 4*time.Hour)
	e.settle(d, Outcome{Counts: true, Cost: usdAmount(t, "0.01")})
	admitted(t, e.admit("acct_r", "k", p, 0, usdAmount(t, "0.04")))
}

// Upstream failures refund: nothing counts, nothing is charged, the hold is released.
func TestRefundOnUpstreamFailure(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 1, weekly_requests: 1}")
	e.credit("acct_f", "1", "t1")
	for i := 0; i < 3; i++ {
		d := e.admit("acct_f", "k", p, 0, 0)
		admitted(t, d)
		if d.Paid {
			t.Fatal("refunded calls must not use up the allowance")
		}
		if s := e.settle(d, Outcome{Counts: false, Cost: usdAmount(t, "0.5")}); s.Charged != 0 || s.Counted {
			t.Fatalf("refund = %+v", s)
		}
	}
	admitted(t, e.call("acct_f", "k", p))
	paid := e.admit("acct_f", "k", p, 0, usdAmount(t, "0.2"))
	if !paid.Paid {
		t.Fatal("want a paid call")
	}
	e.settle(paid, Outcome{Counts: false, Cost: usdAmount(t, "0.2")})
	st := e.state("acct_f", p)
	if st.Balance != usdAmount(t, "1") || st.Spent != 0 || st.Held != 0 || st.Window.Used != 1000 || st.Window.Reserved != 0 || st.Weekly.Used != 1000 {
		t.Fatalf("after refunds: %+v", st)
	}
	if _, err := e.svc.Settle(context.Background(), paid.Reservation, Outcome{Counts: true}); !errors.Is(err, ErrUnknownReservation) {
		t.Fatalf("second settle err = %v", err)
	}
}

// An upstream failure leaves no trace in any limit: not in the burst window, not in the
// throttle's load history (a 529 storm throttles no one).
func TestRefundLeavesNoTraceInBurstOrThrottle(t *testing.T) {
	for _, scope := range []string{"account", "key"} {
		e := newEnv(t, Config{})
		// trigger = max(3, ceil(0.1 · 3 · 1)) = 3 calls a minute throttle the key to 1/min.
		p := plan(t, "{name: p, burst_rpm: 3, burst_scope: "+scope+", throttle: {window: 1m, max_share: 0.1, min_requests: 3, rpm: 1, duration: 1h}}")
		for i := 0; i < 10; i++ {
			d := e.admit("acct_n", "k", p, 0, 0)
			admitted(t, d)
			e.settle(d, Outcome{Counts: false})
		}
		e.clk.Add(time.Second)
		admitted(t, e.call("acct_n", "k", p))
		admitted(t, e.call("acct_n", "k", p))
		d := e.call("acct_n", "k", p) // the third counted call: full burst, and the trigger
		admitted(t, d)
		if d.Burst.Remaining != 0 || d.Burst.Limit != 1 {
			t.Fatalf("%s: the third counted call must fill the window and throttle: %+v", scope, d.Burst)
		}
		refused(t, e.admit("acct_n", "k", p, 0, 0), LimitBurst, time.Minute)
	}
}

// Credits never bypass the burst limit or the throttle.
func TestCreditsNeverBypassBurst(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 1, burst_rpm: 2}")
	e.credit("acct_c", "100", "t1")
	admitted(t, e.call("acct_c", "k", p))
	d := e.admit("acct_c", "k", p, 0, usdAmount(t, "0.01"))
	admitted(t, d)
	if !d.Paid {
		t.Fatal("want a paid call")
	}
	refused(t, e.admit("acct_c", "k", p, 0, usdAmount(t, "0.01")), LimitBurst, time.Minute)
}

// The throttle: a key that sustains its share of the burst budget over the throttle window
// is capped at the throttle rpm for its duration, with a short Retry-After; other keys are
// not; credits do not bypass it; it lifts exactly when it ends.
func TestThrottleTriggersAndRecovers(t *testing.T) {
	e := newEnv(t, Config{})
	// trigger = max(1, ceil(0.5 · 10 rpm · 10 min)) = 50 calls in 10 minutes.
	p := plan(t, "{name: p, window_requests: 1, burst_rpm: 10, throttle: {window: 10m, max_share: 0.5, min_requests: 1, rpm: 2, duration: 5m}}")
	if p.Throttle.Trigger != 50 {
		t.Fatalf("trigger = %d", p.Throttle.Trigger)
	}
	e.credit("acct_h", "100", "t1") // every call past the first is paid: credits change nothing
	at := func(d time.Duration) { e.clk.Set(t0.Add(d)) }
	for i := 0; i < 49; i++ { // one call every 12 s: 5 a minute, under the burst
		at(time.Duration(i) * 12 * time.Second)
		admitted(t, e.call("acct_h", "hot", p))
	}
	at(588 * time.Second)
	d := e.call("acct_h", "hot", p) // the 50th call, inside 20 buckets of 30 s: throttles the key
	admitted(t, d)
	if d.Burst.Limit != 2 || d.MaxRPM != 2 {
		t.Fatalf("budget after the trigger = %+v", d)
	}
	at(600 * time.Second) // calls at 576 s and 588 s are in the last minute: 2 of 2
	d = e.admit("acct_h", "hot", p, 0, usdAmount(t, "0.01"))
	refused(t, d, LimitThrottle, 36*time.Second)
	if d.MaxRPM != 2 || d.Refused.Status() != 429 {
		t.Fatalf("throttle refusal = %+v", d)
	}
	admitted(t, e.call("acct_h", "calm", p)) // another key of the account serves on
	at(636 * time.Second)
	admitted(t, e.call("acct_h", "hot", p))
	refused(t, e.admit("acct_h", "hot", p, 0, 0), LimitThrottle, 12*time.Second)
	st := e.state("acct_h", p)
	if len(st.Keys) != 2 || st.Keys[0].KeyID != "calm" || !st.Keys[1].ThrottledUntil.Equal(t0.Add(888*time.Second)) {
		t.Fatalf("keys = %+v", st.Keys)
	}
	at(880 * time.Second)
	admitted(t, e.call("acct_h", "hot", p))
	admitted(t, e.call("acct_h", "hot", p))
	at(887 * time.Second)
	refused(t, e.admit("acct_h", "hot", p, 0, 0), LimitThrottle, 53*time.Second)
	at(888 * time.Second) // the throttle ends: back to the burst limit of 10
	d = e.call("acct_h", "hot", p)
	admitted(t, d)
	if d.Burst.Limit != 10 || d.Burst.Remaining != 7 {
		t.Fatalf("after the throttle: %+v", d.Burst)
	}
}

// 64 goroutines on one account with an allowance of N: exactly N admitted, never one more.
func TestConcurrentAdmissionsExact(t *testing.T) {
	const n = 100
	for _, settle := range []bool{false, true} {
		e := newEnv(t, Config{})
		p := plan(t, "{name: p, window_requests: 100}")
		var ok atomic.Int64
		var wg sync.WaitGroup
		for g := 0; g < 64; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 5; i++ {
					d, err := e.svc.Admit(context.Background(), AdmitRequest{Account: "acct_x", KeyID: "k", Plan: p})
					if err != nil {
						t.Error(err)
						return
					}
					if d.Admitted {
						ok.Add(1)
						if settle {
							if _, err := e.svc.Settle(context.Background(), d.Reservation, Outcome{Counts: true}); err != nil {
								t.Error(err)
							}
						}
					}
				}
			}()
		}
		wg.Wait()
		st := e.state("acct_x", p)
		if ok.Load() != n || st.Window.Used+st.Window.Reserved != n*1000 {
			t.Fatalf("settle %v: admitted %d, window %+v; want exactly %d", settle, ok.Load(), st.Window, n)
		}
	}
}

// Concurrent paid calls never take the balance below zero, or below the overdraft floor.
func TestCreditsNeverBelowFloor(t *testing.T) {
	cases := []struct {
		name, plan, want string
		admitted         int64
	}{
		{"no overdraft", "{name: p, window_requests: 1}", "0.01", 33},
		{"overdraft 0.5", "{name: p, window_requests: 1, overdraft_usd: '0.5'}", "-0.5", 50},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Config{})
			p := plan(t, c.plan)
			admitted(t, e.call("acct_o", "k", p))
			e.credit("acct_o", "1", "t1")
			price := usdAmount(t, "0.03")
			var ok atomic.Int64
			var wg sync.WaitGroup
			for g := 0; g < 64; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, err := e.svc.Admit(context.Background(), AdmitRequest{Account: "acct_o", KeyID: "k", Plan: p, EstimatedCost: price})
					if err != nil || !d.Admitted {
						return
					}
					ok.Add(1)
					if _, err := e.svc.Settle(context.Background(), d.Reservation, Outcome{Counts: true, Cost: price}); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
			st := e.state("acct_o", p)
			if ok.Load() != c.admitted || st.Balance != usdAmount2(t, c.want) {
				t.Fatalf("admitted %d, balance %s; want %d, %s", ok.Load(), st.Balance, c.admitted, c.want)
			}
		})
	}
}

// usdAmount2 also reads negative amounts.
func usdAmount2(t testing.TB, s string) money.Amount {
	if len(s) > 0 && s[0] == '-' {
		return -usdAmount(t, s[1:])
	}
	return usdAmount(t, s)
}

// An actual cost above the estimate is charged only down to the floor.
func TestChargeStopsAtFloor(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p, window_requests: 1, overdraft_usd: '0.25'}")
	admitted(t, e.call("acct_l", "k", p))
	e.credit("acct_l", "1", "t1")
	d := e.admit("acct_l", "k", p, 0, usdAmount(t, "0.5"))
	s := e.settle(d, Outcome{Counts: true, Cost: usdAmount(t, "3")})
	if s.Charged != usdAmount(t, "1.25") || s.Balance != -usdAmount(t, "0.25") {
		t.Fatalf("settlement = %+v", s)
	}
	refused(t, e.admit("acct_l", "k", p, 0, 0), LimitWindow, 4*time.Hour)
}

func TestIdempotentTopUps(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	var added atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := e.svc.AddCredits(ctx, "acct_i", usdAmount(t, "2.5"), "pay_1")
			if err != nil {
				t.Error(err)
			}
			if ok {
				added.Add(1)
			}
		}()
	}
	wg.Wait()
	if added.Load() != 1 {
		t.Fatalf("the same key added %d times", added.Load())
	}
	if b, ok, err := e.svc.AddCredits(ctx, "acct_i", usdAmount(t, "1"), "pay_1"); !errors.Is(err, ErrIdempotencyConflict) || ok || b != usdAmount(t, "2.5") {
		t.Fatalf("conflicting reuse = %s, %v, %v", b, ok, err)
	}
	if b, ok, err := e.svc.AddCredits(ctx, "acct_i", usdAmount(t, "1"), "pay_2"); err != nil || !ok || b != usdAmount(t, "3.5") {
		t.Fatalf("second key = %s, %v, %v", b, ok, err)
	}
	if b, ok, err := e.svc.AddCredits(ctx, "acct_j", usdAmount(t, "1"), "pay_1"); err != nil || !ok || b != usdAmount(t, "1") {
		t.Fatalf("same key, other account = %s, %v, %v", b, ok, err)
	}
	for _, bad := range []struct {
		amount money.Amount
		key    string
	}{{0, "k"}, {-1, "k"}, {1, ""}} {
		if _, _, err := e.svc.AddCredits(ctx, "acct_i", bad.amount, bad.key); !errors.Is(err, ErrInvalid) {
			t.Errorf("AddCredits(%s, %q) err = %v", bad.amount, bad.key, err)
		}
	}
}

func TestRequestValidation(t *testing.T) {
	e := newEnv(t, Config{})
	p := plan(t, "{name: p}")
	ctx := context.Background()
	for _, r := range []AdmitRequest{
		{Plan: p},
		{Account: "a b", Plan: p},
		{Account: "a#1", Plan: p},
		{Account: "acct"},
		{Account: "acct", Plan: p, Units: -1},
		{Account: "acct", Plan: p, EstimatedCost: -1},
	} {
		if _, err := e.svc.Admit(ctx, r); !errors.Is(err, ErrInvalid) {
			t.Errorf("Admit(%+v) err = %v", r, err)
		}
	}
	d := e.admit("acct", "k", p, 0, 0)
	for _, o := range []Outcome{
		{Cost: -1},
		{Log: &persistence.LogEntry{AccountID: "other", RequestID: "r", Time: 1}},
		{Log: &persistence.LogEntry{RequestID: "", Time: 1}},
	} {
		if _, err := e.svc.Settle(ctx, d.Reservation, o); !errors.Is(err, ErrInvalid) {
			t.Errorf("Settle(%+v) err = %v", o, err)
		}
	}
	if _, err := e.svc.Settle(ctx, Reservation{Account: "acct", ID: d.Reservation.ID + 1}, Outcome{}); !errors.Is(err, ErrUnknownReservation) {
		t.Errorf("unknown reservation err = %v", err)
	}
	e.settle(d, Outcome{Counts: true}) // the refused settles changed nothing
}

// A reversal (a refund or a dispute) takes credits back once per key, below zero if they
// were spent, and is durable: it survives the owner's restart like a top-up.
func TestReversalsTakeCreditsBackOnce(t *testing.T) {
	e := newEnv(t, Config{})
	ctx := context.Background()
	e.credit("acct_r", "5", "pay_1")
	steps := []struct {
		name    string
		amount  string
		key     string
		balance string // below zero
		ok      bool
		err     error
	}{
		{"a refund beyond what is left", "8", "refund_1", "3", true, nil},
		{"the same refund again", "8", "refund_1", "3", false, nil},
		{"the same key, another amount", "2", "refund_1", "3", false, ErrIdempotencyConflict},
		{"a top-up's key", "5", "pay_1", "3", false, ErrIdempotencyConflict},
	}
	for _, st := range steps {
		b, ok, err := e.svc.ReverseCredits(ctx, "acct_r", usdAmount(t, st.amount), st.key)
		if ok != st.ok || !errors.Is(err, st.err) || err == nil && b != -usdAmount(t, st.balance) {
			t.Fatalf("%s: %s, %v, %v; want -%s, %v, %v", st.name, b, ok, err, st.balance, st.ok, st.err)
		}
	}
	if _, _, err := e.svc.ReverseCredits(ctx, "acct_r", 0, "refund_2"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a reversal of nothing: %v", err)
	}
}
