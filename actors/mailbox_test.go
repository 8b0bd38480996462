package actors

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/internal/testutil"
)

// tally is a mailbox actor that records what it handled and whether two handlings ever
// overlapped.
type tally struct {
	box     Mailbox
	mu      sync.Mutex // guards seen for the test's reads only
	seen    []int
	busy    bool
	overlap bool
	block   chan struct{} // when set, handling 0 waits on it
}

type num int

func (t *tally) ActorName() string { return "tally/t1" }

func (t *tally) Receive(m any) {
	t.mu.Lock()
	if t.busy {
		t.overlap = true
	}
	t.busy = true
	t.mu.Unlock()
	switch m := m.(type) {
	case num:
		if m == 0 && t.block != nil {
			<-t.block
		}
		t.mu.Lock()
		t.seen = append(t.seen, int(m))
		t.mu.Unlock()
	case boom:
		t.mu.Lock()
		t.busy = false
		t.mu.Unlock()
		panic("kaput")
	case count:
		t.mu.Lock()
		n := len(t.seen)
		t.mu.Unlock()
		m.reply <- n
	}
	t.mu.Lock()
	t.busy = false
	t.mu.Unlock()
}

// handled waits until t has handled n numbers and returns them.
func (t *tally) handled(tb testing.TB, n int) []int {
	tb.Helper()
	var seen []int
	testutil.WaitFor(tb, "the messages to be handled", func() bool {
		t.mu.Lock()
		seen = append(seen[:0], t.seen...)
		t.mu.Unlock()
		return len(seen) >= n
	})
	return seen
}

// idle reports whether t's mailbox is idle and holds no queue.
func (t *tally) idle() bool {
	t.box.mu.Lock()
	held := t.box.queue != nil
	t.box.mu.Unlock()
	return t.box.Idle() && !held
}

func TestMailboxHandlesInOrderOneAtATime(t *testing.T) {
	a := &tally{}
	var wg sync.WaitGroup
	for i := range 1000 {
		a.box.Send(a, num(i))
		if i%100 == 0 { // senders on other goroutines too: each one's order is kept
			wg.Go(func() { a.box.Send(a, num(-1)) })
		}
	}
	wg.Wait()
	seen := a.handled(t, 1010)
	next := 0
	for _, v := range seen {
		if v == -1 {
			continue
		}
		if v != next {
			t.Fatalf("handled %d where %d was next", v, next)
		}
		next++
	}
	if next != 1000 || a.overlap {
		t.Fatalf("handled %d of 1000 in order, overlap %v", next, a.overlap)
	}
	waitIdle(t, a)
}

func TestMailboxRecoversPanicsAndKeepsState(t *testing.T) {
	a := &tally{}
	before := supervise.CountAt("actor.tally")
	a.box.Send(a, num(1))
	for range 5 {
		reply := make(chan error, 1)
		a.box.Send(a, boom{reply})
		select {
		case err := <-reply:
			if !errors.Is(err, supervise.ErrPanicked) || strings.Contains(err.Error(), "kaput") || !strings.Contains(err.Error(), "tally/t1") {
				t.Fatalf("the reply %v: want ErrPanicked naming the actor, without the panic's value", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no error reply after a panic")
		}
	}
	reply := make(chan int, 1)
	a.box.Send(a, count{reply})
	if n := <-reply; n != 1 {
		t.Fatalf("state after panics = %d numbers, want 1 (state kept)", n)
	}
	if n := supervise.CountAt("actor.tally"); n != before+5 {
		t.Fatalf("actor.tally panics counted %d, want %d", n, before+5)
	}
}

// Run hands a message to an idle actor on the caller's goroutine; while a run is going it
// queues the message behind what waits.
func TestMailboxRunIsInlineOnlyWhenIdle(t *testing.T) {
	a := &tally{}
	a.box.Run(a, num(7))
	a.mu.Lock()
	seen := append([]int(nil), a.seen...)
	a.mu.Unlock()
	if len(seen) != 1 || seen[0] != 7 || !a.idle() {
		t.Fatalf("an idle actor's Run: handled %v, idle %v; want [7] handled before Run returned", seen, a.idle())
	}

	a = &tally{block: make(chan struct{})}
	a.box.Send(a, num(0)) // its run blocks in Receive
	a.box.Send(a, num(1))
	a.box.Run(a, num(2)) // returns at once: queued behind 1
	close(a.block)
	if seen := a.handled(t, 3); seen[0] != 0 || seen[1] != 1 || seen[2] != 2 {
		t.Fatalf("handled %v, want [0 1 2]", seen)
	}
	waitIdle(t, a)
}

// waitIdle waits for a's run to end: an idle mailbox holds no queue.
func waitIdle(t *testing.T, a *tally) {
	t.Helper()
	testutil.WaitFor(t, "the mailbox to go idle", a.idle)
}
