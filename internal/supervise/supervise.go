// Package supervise starts the gateway's background goroutines so that none of them can end
// the process: a panic is recovered, logged with its stack and counted by where it happened,
// and a long-lived loop is started again after a back-off.
//
// A panic in a goroutine that nothing recovers kills the whole process, every call in flight
// with it; a request handler's panic is net/http's to recover, a background job's is ours.
package supervise

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"time"
)

// ErrPanicked is the error owed to whoever waited on work that panicked: its outcome is not
// known (a write may or may not be on disk, a proposal may or may not have applied), so it is
// never reported as done.
var ErrPanicked = errors.New("the gateway failed while doing this (a recovered panic, logged); its outcome is unknown")

// Go runs fn once in a new goroutine. A panic ends fn, is logged and counted under where,
// and goes no further.
func Go(where string, fn func()) {
	go Run(where, fn)
}

// GoOwing runs fn once in a new goroutine, as Go does, and calls fail after fn panicked: for
// one-shot work that owes someone an answer, who must get an error rather than wait forever.
func GoOwing(where string, fn, fail func()) {
	go func() {
		if Run(where, fn) {
			Run(where, fail)
		}
	}()
}

// Run calls fn in the calling goroutine and recovers its panic as Go does, reporting whether
// fn panicked: for work a caller must follow up (a reply owed, a slot to release).
func Run(where string, fn func()) (panicked bool) {
	defer func() {
		if v := recover(); v != nil {
			Recovered(where, v, debug.Stack())
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
// its receiver, not its stack: what a turn had taken must be finished or answered with an
// error), and return when its work is over (a closed channel, a cancelled context); stop, when
// closed, ends the back-off wait early and fn is not called again. The channel Loop returns
// is closed once the loop has ended, either way.
func Loop(where string, stop <-chan struct{}, fn func()) (done <-chan struct{}) {
	ended := make(chan struct{})
	go func() {
		defer close(ended)
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
	return ended
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

// Recovered logs a panic recovered under where, with its stack and attrs, and counts it: for
// a recover of its own (the actors' middleware), which Run does for everything else. where
// must be one of a bounded set of names (it is a metric label).
func Recovered(where string, v any, stack []byte, attrs ...any) {
	slog.Error("background goroutine panicked; recovered", append(append([]any{"where", where}, attrs...), Attrs(v, stack)...)...)
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

// Attrs describe a panic for the log: its type and stack, and its text only when it is the
// runtime's own (an index out of range, a nil map): a value code panicked with may hold
// prompt or completion content, which never reaches the log.
func Attrs(v any, stack []byte) []any {
	attrs := []any{"panic_type", fmt.Sprintf("%T", v)}
	if re, ok := v.(runtime.Error); ok {
		attrs = append(attrs, "panic", re.Error())
	}
	return append(attrs, "stack", string(stack))
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

// CountAt is where's number of recovered panics so far in this process.
func CountAt(where string) uint64 {
	mu.Lock()
	defer mu.Unlock()
	return counts[where]
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
