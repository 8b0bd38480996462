package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The limit is lifted once the live heap passes two thirds of it, and applies again once the
// live heap is back under half of it; in between it stays as it is.
func TestTheLimitIsLiftedAndRestoredWithTheLiveHeap(t *testing.T) {
	const limit = 300
	l := &Limiter{limit: limit}
	for i, step := range []struct {
		live   int64
		set    int64 // 0: unchanged
		lifted bool
	}{
		{live: 150}, // half: the limit binds
		{live: 201}, // just over two thirds
		{live: 202, set: math.MaxInt64, lifted: true}, // past LiftAt: lifted
		{live: 400, lifted: true},
		{live: 150, lifted: true}, // half: still lifted
		{live: 149, set: limit},   // under RestoreAt: the limit again
		{live: 199},
	} {
		set, change := l.follow(step.live)
		if step.set == 0 && change || step.set != 0 && (!change || set != step.set) || l.lifted != step.lifted {
			t.Fatalf("step %d (live %d): set %d, changed %v, lifted %v; want set %d, lifted %v", i, step.live, set, change, l.lifted, step.set, step.lifted)
		}
	}
}

// Start sets the limit and follows the collections: a live heap far past the limit lifts it
// after the next collection.
func TestStartFollowsTheCollections(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	l := Start(64 << 10) // far below any live heap
	defer l.Stop()
	if got := debug.SetMemoryLimit(-1); got != 64<<10 {
		t.Fatalf("limit after Start = %d, want %d", got, 64<<10)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !l.Lifted() {
		if time.Now().After(deadline) {
			t.Fatal("the limit was not lifted after collections with a live heap past it")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("limit once lifted = %d, want none (%d)", got, int64(math.MaxInt64))
	}
}
