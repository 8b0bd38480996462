package video

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// loadStats is what one batch of concurrent tasks cost.
type loadStats struct {
	tasks       int
	wall        time.Duration
	liveBytes   int64         // heap in use with every task of the batch in flight, above the idle baseline
	allocBytes  uint64        // allocated over the batch
	cpu         time.Duration // user + system CPU of the process over the batch
	maxInFlight int           // task actors active at once
}

// runLoad creates n tasks at once over accounts (each reserving its seconds first, as
// the handler does), waits until every one is completed, stored and billed, and measures.
// The fake upstream, the HTTP client, Pebble and the quota actors run in this process and
// are part of the figures.
func runLoad(tb testing.TB, e *env, batch string, n, accounts int) loadStats {
	tb.Helper()
	ctx := context.Background()
	for a := 0; a < accounts; a++ {
		if _, _, err := e.quota.AddCredits(ctx, fmt.Sprintf("acct_%s_%d", batch, a), usd(tb, "1000"), "topup"); err != nil {
			tb.Fatal(err)
		}
	}
	e.tasks.settled = make(chan string, n)
	defer func() { e.tasks.settled = nil }()

	runtime.GC()
	var m0, m1, m2 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	start := time.Now()

	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			acct := fmt.Sprintf("acct_%s_%d", batch, i%accounts)
			t, err := e.begin(acct, 4, `{"duration":"200ms","size":65536}`, true)
			if err != nil {
				errs <- err
				return
			}
			ids[i] = t.ID
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	st := loadStats{tasks: n, maxInFlight: e.svc.Active()}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	st.liveBytes = int64(m1.HeapAlloc) - int64(m0.HeapAlloc)

	timeout := time.After(60 * time.Second)
	for done := 0; done < n; {
		select {
		case <-e.tasks.settled:
			done++
		case <-timeout:
			tb.Fatalf("%d of %d tasks settled in 60 s", done, n)
		}
	}
	st.wall = time.Since(start)
	st.cpu = cpuTime() - cpu0
	runtime.ReadMemStats(&m2)
	st.allocBytes = m2.TotalAlloc - m0.TotalAlloc

	for _, id := range ids[:min(n, 20)] { // spot checks: completed and billed
		task, err := e.svc.Get(ctx, accountOf(e, id), id)
		if err != nil || task.Status != StatusCompleted || task.Charged != int64(usd(tb, "0.4")) {
			tb.Fatalf("task %s: %+v, %v", id, task, err)
		}
	}
	return st
}

func accountOf(e *env, id string) string {
	rec, _ := e.store.GetTask(id)
	return rec.Account
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func loadEnv(tb testing.TB) *env {
	e := newEnv(tb, envOpts{realClock: true, cfg: Config{PollStart: 20 * time.Millisecond, PollMax: 100 * time.Millisecond, IdleTimeout: 250 * time.Millisecond}})
	e.tasks.quiet = true
	return e
}

// Many tasks at once all complete, each stored and billed once (a small run of the load
// the benchmark measures).
func TestManyConcurrentTasks(t *testing.T) {
	e := loadEnv(t)
	st := runLoad(t, e, "t", 200, 20)
	for a := 0; a < 20; a++ {
		acct := fmt.Sprintf("acct_t_%d", a)
		q := e.state(acct)
		if q.Video.Used != 40 || q.Video.Reserved != 0 || q.Spent != usd(t, "4") || len(e.logs(acct)) != 10 {
			t.Fatalf("%s: video %+v spent %s", acct, q.Video, q.Spent)
		}
	}
	t.Logf("200 tasks in %v: %d B live/task, %d B allocated/task, %v CPU/task", st.wall, st.liveBytes/200, st.allocBytes/200, st.cpu/200)
}

// BenchmarkConcurrentTasks runs 1,000 tasks at once per op (jobs of 200 ms with 64 KiB
// videos; polls from 20 ms growing ×1.5 to 100 ms), each to completed, stored and billed:
//
//	go test -run '^$' -bench ConcurrentTasks -benchtime 3x ./actors/video/
func BenchmarkConcurrentTasks(b *testing.B) {
	e := loadEnv(b)
	const n, accounts = 1000, 100
	var live int64
	var alloc uint64
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		st := runLoad(b, e, fmt.Sprint("b", i), n, accounts)
		live += st.liveBytes
		alloc += st.allocBytes
		cpu += st.cpu
	}
	tasks := float64(b.N * n)
	b.ReportMetric(float64(live)/tasks, "bytes/task")
	b.ReportMetric(float64(alloc)/tasks, "alloc-bytes/task")
	b.ReportMetric(float64(cpu.Microseconds())/tasks, "cpu-µs/task")
}
