// Package memlimit gives the gateway's Go memory a soft limit when the operator set none
// (GOMEMLIMIT), so a small node does not keep twice its live heap resident (Go's default,
// GOGC=100), and keeps that limit from starving the collector of a node whose live heap
// has grown towards it.
//
// Under a soft limit the collector runs as often as it must to stay below it: the heap may
// grow only to what the limit leaves after Go's other memory. While the live heap is small
// that trims GOGC's headroom (twice the live heap) and costs a few more collections; as the
// live heap nears the limit the headroom would vanish and the collector run back to back.
// So after every collection the limit in force is set to the configured one, or higher if
// that leaves the heap less than a minimum headroom over its live size: MinHeadroom percent
// while the live heap is under half the limit, growing to all of it (Go's default) as the
// live heap reaches the limit. A node whose live heap outgrows the limit runs as it would
// without one; one that shrinks back gets the limit again.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"

	"github.com/modelgate/modelgate/internal/supervise"
)

// Default is the gateway's soft limit: what a node with 10,000 active accounts has left for
// Go of the 64 MiB it aims at, beside the binary's pages (about 32 MiB) and the store's block
// cache and memtables (4 MiB by default, C memory outside Go's count); docs/decisions.md,
// "Memory and the per-call account read".
const Default = 28 << 20

// MinHeadroom is the least the limit leaves the heap to grow before the next collection, in
// percent of the live heap, while the live heap is under half the limit: the collector runs
// at most five times as often as Go's default would.
const MinHeadroom = 20

// FromEnvironment reports whether the environment sets Go's memory limit (GOMEMLIMIT, off
// for none): then the gateway sets none of its own.
func FromEnvironment() bool { return os.Getenv("GOMEMLIMIT") != "" }

// Limiter keeps a default soft limit (Start).
type Limiter struct {
	limit int64 // the configured limit, bytes

	mu      sync.Mutex
	set     int64 // the limit in force
	stopped bool
}

// Start sets limit as Go's soft memory limit and follows every collection from now on to
// raise it as the live heap needs (Stop ends that). limit must be positive.
func Start(limit int64) *Limiter {
	l := &Limiter{limit: limit, set: limit}
	debug.SetMemoryLimit(limit)
	l.arm()
	return l
}

// InForce is the limit set now.
func (l *Limiter) InForce() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.set
}

// Stop ends the following and leaves Go's limit as it is now.
func (l *Limiter) Stop() {
	l.mu.Lock()
	l.stopped = true
	l.mu.Unlock()
}

// arm has afterGC run once the next collection has found a fresh object unreachable: one
// check per collection, none while the node is idle (no collection runs then).
func (l *Limiter) arm() {
	runtime.AddCleanup(new(gcMark), func(l *Limiter) {
		supervise.Run("memlimit", l.afterGC) // a cleanup's panic would end the process
	}, l)
}

// gcMark is what the next collection finds unreachable; big enough not to share a tiny
// block with other objects, which could keep it alive.
type gcMark [16]byte

// afterGC sets the limit for the heap the collection left, and waits for the next one.
func (l *Limiter) afterGC() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	defer l.arm()
	if set := l.follow(readHeap()); set != l.set {
		l.set = set
		debug.SetMemoryLimit(set)
	}
}

// heap is what a collection left: the live heap, and Go's memory that holds no heap object
// and counts against the limit (stacks, the collector's metadata, free space in the heap's
// spans; free pages not returned to the system do not count, as in Go's own pacer).
type heap struct {
	live, nonHeap int64
}

// follow is the limit to set after a collection left h: the configured one, or what leaves
// the heap its minimum headroom (less changes than a quarter MiB are not worth a change).
func (l *Limiter) follow(h heap) int64 {
	need := h.nonHeap + h.live + h.live*headroom(h.live, l.limit)/100
	need += need * 3 / 100 // Go's pacer keeps 3% of its room back
	set := max(l.limit, need)
	if set != l.limit && abs(set-l.set) < 256<<10 {
		return l.set
	}
	return set
}

// headroom is the minimum headroom, in percent of the live heap, for a live heap of live
// bytes under a limit of limit bytes: MinHeadroom below half the limit, rising linearly to
// 100 (Go's GOGC default) at the limit.
func headroom(live, limit int64) int64 {
	if live <= limit/2 {
		return MinHeadroom
	}
	if live >= limit {
		return 100
	}
	return MinHeadroom + (100-MinHeadroom)*(live-limit/2)/(limit-limit/2)
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// readHeap reads what the last collection left.
func readHeap() heap {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
	}
	metrics.Read(s)
	v := func(i int) int64 { return int64(min(s[i].Value.Uint64(), math.MaxInt64)) }
	return heap{live: v(0), nonHeap: v(1) - v(2) - v(3) - v(4)}
}
