package bench

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelgate/modelgate/bench/harness"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// BenchmarkActiveAccounts is the gateway's memory with many active accounts: it
// creates MODELGATE_BENCH_ACCOUNTS accounts (default 10000, one key each) in the node's
// store, calls each once per iteration through the gateway, and reports after a GC the Go
// heap in use per account and in all, and the process's RSS. The simulator and the client
// share the process, so these are a ceiling of the gateway's own (modelgate-bench rss
// measures the gateway alone). MODELGATE_BENCH_HEAP=file writes the heap profile then, while
// the node still runs (-memprofile's comes after it stopped):
//
//	MODELGATE_BENCH_HEAP=heap.out go test -run '^$' -bench ActiveAccounts -benchtime 1x ./bench/
//	go tool pprof -sample_index=inuse_space -top heap.out
func BenchmarkActiveAccounts(b *testing.B) {
	n := 10000
	if os.Getenv("MODELGATE_BENCH_HEAP") != "" {
		runtime.MemProfileRate = 4096
	}
	if v, err := strconv.Atoi(os.Getenv("MODELGATE_BENCH_ACCOUNTS")); err == nil && v > 0 {
		n = v
	}
	env := nodetest.Start(b, nodetest.DefaultCatalog+"plans:\n  - {name: bench, allow_automated: true}\n", nodetest.Options{Plan: "bench"})
	keys := make([]string, n)
	for i := range keys {
		a, err := env.Node.Store.CreateAccount(fmt.Sprintf("mem-%05d@bench.invalid", i), "bench")
		if err != nil {
			b.Fatal(err)
		}
		if _, keys[i], err = env.Node.Store.CreateKey(a.ID, persistence.KeySpec{Name: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	heapBefore := heapInUse()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	url := env.Node.URL + "/v1/chat/completions"
	b.ResetTimer()
	for range b.N {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
					post(b, client, url, keys[i], plainBody)
				}
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	env.WaitIdle()
	heap := heapInUse()
	b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
	b.ReportMetric(float64(heap-heapBefore)/float64(n), "heap-B/account")
	if s, err := harness.ReadRSS(os.Getpid(), ""); err == nil {
		b.ReportMetric(float64(s.RSS)/1024, "rss-MiB")
	}
	if path := os.Getenv("MODELGATE_BENCH_HEAP"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			b.Fatal(err)
		}
	}
}

// heapInUse is the heap in use after a full GC.
func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
