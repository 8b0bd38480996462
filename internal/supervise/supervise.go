// Package supervise starts the gateway's background goroutines so that none of them can end
// the process: a panic is recovered, logged with its stack and counted by where it happened,
// and a long-lived loop is started again after a back-off.
//
// A panic in a goroutine that nothing recovers kills the whole process, every call in flight
// with it; a request handler's panic is net/http's to recover, a background job's is ours.
package supervise

import (
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// Go runs fn once in a new goroutine. A panic ends fn, is logged and counted under where,
// and goes no further.
func Go(where string, fn func()) {
	go Run(where, fn)
}

// Run calls fn in the calling goroutine and recovers its panic as Go does, reporting whether
// fn panicked: for work a caller must follow up (a reply owed, a slot to release).
func Run(where string, fn func()) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			report(where, v, debug.Stack())
			panicked = true
		}
	}()
	fn()
	return false
}

// Loop runs fn in a new goroutine until it returns. When fn panics it is called again after a
// back-off that starts at MinBackoff and doubles up to MaxBackoff (reset once a run has lasted
// longer than MaxBackoff), so a loop that panics on every turn costs little and a rare panic
// costs one short pause. fn must pick up where the previous run stopped (its state lives in
// its receiver, not its stack), and return when its work is over (a closed channel, a
// cancelled context); stop, when closed, ends the back-off wait early and fn is not called again.
func Loop(where string, stop <-chan struct{}, fn func()) {
	go func() {
		backoff := MinBackoff
		for {
			began := time.Now()
			if !Run(where, fn) {
				return
			}
			if time.Since(began) > MaxBackoff {
				backoff = MinBackoff
			}
			select {
			case <-stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, MaxBackoff)
		}
	}()
}

// Back-off bounds of Loop.
const (
	MinBackoff = 100 * time.Millisecond
	MaxBackoff = 30 * time.Second
)

var (
	mu     sync.Mutex
	counts = map[string]uint64{}
	hooks  = map[int]func(where string){}
	nextID int
)

// report logs a recovered panic with its stack and counts it.
func report(where string, v any, stack []byte) {
	slog.Error("background goroutine panicked; recovered", "where", where, "panic", v, "stack", string(stack))
	mu.Lock()
	counts[where]++
	hs := make([]func(string), 0, len(hooks))
	for _, h := range hooks {
		hs = append(hs, h)
	}
	mu.Unlock()
	for _, h := range hs {
		h(where)
	}
}

// Count is one place's number of recovered panics.
type Count struct {
	Where string
	N     uint64
}

// Counts are the panics recovered so far in this process, by where, sorted by where.
func Counts() []Count {
	mu.Lock()
	defer mu.Unlock()
	out := make([]Count, 0, len(counts))
	for w, n := range counts {
		out = append(out, Count{w, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Where < out[j].Where })
	return out
}

// OnPanic adds a function called after each recovered panic (tests wait on it); the
// function it returns removes it.
func OnPanic(h func(where string)) (remove func()) {
	mu.Lock()
	defer mu.Unlock()
	nextID++
	id := nextID
	hooks[id] = h
	return func() { mu.Lock(); delete(hooks, id); mu.Unlock() }
}
