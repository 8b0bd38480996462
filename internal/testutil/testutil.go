// Package testutil is what the module's tests share: a loopback address to bind, a
// condition to wait for, and a clock the test moves. It imports nothing else of the module,
// so every layer's tests may use it.
package testutil

import (
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/freeport"
)

// FreeAddr is a loopback address for a listener the test starts a moment later
// (freeport.Addr: never handed out twice, by this process or another running beside it).
func FreeAddr(t testing.TB) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

// DefaultWait is how long WaitFor waits: far longer than any condition takes on a loaded
// two-core machine, so only a condition that never comes fails.
const DefaultWait = 10 * time.Second

// WaitFor polls cond until it holds, failing the test, naming what, after DefaultWait.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitWithin(t, DefaultWait, what, cond)
}

// WaitWithin is WaitFor with its own bound: for a condition whose time is itself the
// behaviour under test (an election within its timeout).
func WaitWithin(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(2 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
	}
}

// Clock is a clock the test moves: it stands still but for Add and Set. Safe for concurrent
// use; its Now is a func() time.Time as the module's configs take one.
type Clock struct {
	mu sync.Mutex
	at time.Time
}

// NewClock is a clock at at.
func NewClock(at time.Time) *Clock { return &Clock{at: at} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.at = c.at.Add(d)
	c.mu.Unlock()
}

// Set puts the clock at t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.at = t
	c.mu.Unlock()
}
