package quota

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// benchPlan checks window, weekly and the throttle rule on every call and never refuses.
const benchPlan = "{name: p, window_requests: 1000000000, weekly_requests: 1000000000, throttle: {rpm: 10, min_requests: 1000000000000}}"

func benchEnv(b *testing.B, idle time.Duration) *env {
	e := newEnv(b, Config{Now: time.Now, IdleTimeout: idle, ReservationTTL: time.Hour})
	return e
}

func perSecond(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// Admissions on one hot account: admit, then refund (no disk write), from many goroutines.
func BenchmarkAdmitHotAccount(b *testing.B) {
	e := benchEnv(b, time.Hour)
	p := plan(b, benchPlan)
	ctx := context.Background()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d, err := e.svc.Admit(ctx, AdmitRequest{Account: "acct_hot", KeyID: "k", Plan: p})
			if err != nil || !d.Admitted {
				b.Fatal(err, d.Refused)
			}
			e.svc.Settle(ctx, d.Reservation, Outcome{})
		}
	})
	perSecond(b, "admits/s")
}

// A whole durable call on one hot account: admit, then a counted settle that returns only
// once it is synced (settles queued together share one sync).
func BenchmarkAdmitSettleDurableHotAccount(b *testing.B) {
	e := benchEnv(b, time.Hour)
	p := plan(b, benchPlan)
	ctx := context.Background()
	b.SetParallelism(16) // waiting on syncs: more callers than cores, as under HTTP load
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			d, err := e.svc.Admit(ctx, AdmitRequest{Account: "acct_hot", KeyID: "k", Plan: p})
			if err != nil || !d.Admitted {
				b.Fatal(err, d.Refused)
			}
			if _, err := e.svc.Settle(ctx, d.Reservation, Outcome{Counts: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	perSecond(b, "calls/s")
}

// Admissions spread over 100,000 accounts (all activated before the timer starts).
func BenchmarkAdmitSpread100k(b *testing.B) {
	const accounts = 100_000
	e := benchEnv(b, time.Hour)
	p := plan(b, benchPlan)
	ctx := context.Background()
	names := make([]string, accounts)
	for i := range names {
		names[i] = fmt.Sprintf("acct_%06d", i)
	}
	activate(b, e, names)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(rand.Uint64(), 1))
		for pb.Next() {
			d, err := e.svc.Admit(ctx, AdmitRequest{Account: names[r.IntN(accounts)], KeyID: "k", Plan: p})
			if err != nil || !d.Admitted {
				b.Fatal(err, d.Refused)
			}
			e.svc.Settle(ctx, d.Reservation, Outcome{})
		}
	})
	perSecond(b, "admits/s")
}

// activate makes every account's actor live with one admitted and refunded call.
func activate(b *testing.B, e *env, names []string) {
	p := plan(b, benchPlan)
	ctx := context.Background()
	var next atomic.Int64
	done := make(chan struct{})
	workers := 64
	for w := 0; w < workers; w++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(names)) {
					return
				}
				d, err := e.svc.Admit(ctx, AdmitRequest{Account: names[i], KeyID: "k", Plan: p})
				if err != nil {
					b.Error(err)
					return
				}
				e.svc.Settle(ctx, d.Reservation, Outcome{})
			}
		}()
	}
	for w := 0; w < workers; w++ {
		<-done
	}
}

func heap() uint64 {
	var m runtime.MemStats
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// Memory of an idle account actor (after one call), and of a passivated account: what
// stays in memory once it is gone. The first cycle's residue is mostly capacity the runtime
// keeps (goroutine descriptors of the stops, map buckets); a second cycle over other
// accounts shows whether anything accumulates per account.
func BenchmarkMemoryPerAccount(b *testing.B) {
	const n = 20_000
	e := benchEnv(b, 2*time.Second) // an actor used once passivates at its second idle tick: 4 s after it started
	cycle := func(prefix string) (idle, residue float64) {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("%s%06d", prefix, i)
		}
		before := heap()
		start := time.Now()
		activate(b, e, names)
		live := heap()
		if time.Since(start) > 3*time.Second || e.svc.dir.Count() != n {
			b.Skipf("activation took %v; actors began passivating before the measurement", time.Since(start))
		}
		testutil.WaitFor(b, "passivation", func() bool { return e.svc.dir.Count() == 0 })
		after := heap()
		return float64(int64(live)-int64(before)) / n, float64(int64(after)-int64(before)) / n
	}
	idle, first := cycle("acct_a")
	_, second := cycle("acct_b")
	b.ReportMetric(idle, "B/idle-actor")
	b.ReportMetric(first, "B/passivated")
	b.ReportMetric(second, "B/passivated-2nd")
	for range b.N { // the measurement above is the benchmark; b.N is not meaningful here
	}
}
