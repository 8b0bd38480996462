// Package memlimit gives the gateway's Go memory a soft limit when the operator set none
// (GOMEMLIMIT), so a small node does not keep twice its live heap resident (Go's default,
// GOGC=100), and keeps that limit from costing a node whose live heap has outgrown it.
//
// Under a soft limit the collector runs as often as it must to stay below it. While the live
// heap is well below the limit that only trims the headroom; once the live heap comes close
// to it, the collector would run back to back (up to half the CPU, where Go's own limiter
// stops it). So after every collection the live heap is compared with the limit: past
// LiftAt of it the limit is lifted (GOGC alone rules, as without one), and once the live heap
// is back under RestoreAt of it the limit applies again.
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

// The live heap's share of the limit past which it is lifted, and under which it applies
// again (fractions of the limit, in percent).
const (
	LiftAt    = 67
	RestoreAt = 50
)

// Default is the gateway's soft limit: what a node with 10,000 active accounts has left for
// Go of the 64 MiB it aims at, beside the binary's pages (about 32 MiB) and the store's block
// cache and memtables (4 MiB by default, C memory outside Go's count); docs/decisions.md,
// "Memory and the per-call account read".
const Default = 28 << 20

// FromEnvironment reports whether the environment sets Go's memory limit (GOMEMLIMIT, off
// for none): then the gateway sets none of its own.
func FromEnvironment() bool { return os.Getenv("GOMEMLIMIT") != "" }

// Limiter keeps a default soft limit (Start).
type Limiter struct {
	limit int64 // bytes

	mu      sync.Mutex
	lifted  bool
	stopped bool
}

// Start sets limit as Go's soft memory limit and follows every collection from now on to
// lift and restore it (Stop ends that). limit must be positive.
func Start(limit int64) *Limiter {
	l := &Limiter{limit: limit}
	debug.SetMemoryLimit(limit)
	l.arm()
	return l
}

// Lifted reports whether the limit is lifted now.
func (l *Limiter) Lifted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lifted
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

// afterGC sets Go's limit for the live heap the collection left, and waits for the next one.
func (l *Limiter) afterGC() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	defer l.arm()
	if set, ok := l.follow(int64(liveHeap())); ok {
		debug.SetMemoryLimit(set)
	}
}

// follow is the limit to set for a live heap of live bytes, if it changes.
func (l *Limiter) follow(live int64) (set int64, change bool) {
	switch {
	case !l.lifted && live > l.limit*LiftAt/100:
		l.lifted = true
		return math.MaxInt64, true
	case l.lifted && live < l.limit*RestoreAt/100:
		l.lifted = false
		return l.limit, true
	}
	return 0, false
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
