package memlimit

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

const mib = 1 << 20

// withPacerMargin is need with the 3% Go's pacer keeps back.
func withPacerMargin(need int64) int64 { return need + need*3/100 }

// After each collection the limit in force is the configured one unless that leaves the heap
// less than its minimum headroom: then what leaves it that, up to Go's default (all of the
// live heap) once the live heap reaches the limit; a heap that shrinks gets the limit back.
func TestTheLimitLeavesTheHeapItsHeadroom(t *testing.T) {
	const limit = 100 * mib
	l := &Limiter{limit: limit, set: limit}
	for i, step := range []struct {
		live, nonHeap int64
		want          int64
	}{
		{live: 10 * mib, nonHeap: 10 * mib, want: limit},                               // 20% of headroom fits
		{live: 50 * mib, nonHeap: 30 * mib, want: limit},                               // half the limit: 92.7 MiB needed
		{live: 50 * mib, nonHeap: 40 * mib, want: withPacerMargin(100 * mib)},          // 40 + 50 + 10
		{live: 75 * mib, nonHeap: 10 * mib, want: withPacerMargin(130 * mib)},          // 60%: 10 + 75 + 45
		{live: 150 * mib, nonHeap: 10 * mib, want: withPacerMargin(310 * mib)},         // past the limit: GOGC's 100%
		{live: 150*mib + 100<<10, nonHeap: 10 * mib, want: withPacerMargin(310 * mib)}, // under 256 KiB more: kept
		{live: 10 * mib, nonHeap: 10 * mib, want: limit},                               // shrunk: the limit again
	} {
		got := l.follow(heap{live: step.live, nonHeap: step.nonHeap})
		if got != step.want {
			t.Fatalf("step %d (live %d, non-heap %d): limit %d, want %d", i, step.live, step.nonHeap, got, step.want)
		}
		l.set = got
	}
}

// The minimum headroom: MinHeadroom up to half the limit, then rising linearly to 100%.
func TestHeadroomRisesFromHalfTheLimit(t *testing.T) {
	for _, c := range []struct{ live, want int64 }{
		{0, MinHeadroom}, {50, MinHeadroom}, {75, 60}, {99, 98}, {100, 100}, {500, 100},
	} {
		if got := headroom(c.live, 100); got != c.want {
			t.Errorf("headroom(%d of 100) = %d, want %d", c.live, got, c.want)
		}
	}
}

// Start sets the limit and follows the collections: a live heap far past the limit raises
// it after the next collection; after Stop, collections change nothing.
func TestStartFollowsTheCollections(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	const small = 64 << 10 // far below any live heap
	l := Start(small)
	if got := debug.SetMemoryLimit(-1); got != small {
		t.Fatalf("limit after Start = %d, want %d", got, small)
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.InForce() == small {
		if time.Now().After(deadline) {
			t.Fatal("the limit was not raised after collections with a live heap past it")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if got, set := debug.SetMemoryLimit(-1), l.InForce(); got != set || got <= small {
		t.Fatalf("limit in force %d, Go's %d; want them equal and over %d", set, got, small)
	}
	l.Stop()
	debug.SetMemoryLimit(small)
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != small {
		t.Fatalf("after Stop a collection set the limit to %d", got)
	}
}
