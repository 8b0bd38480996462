package supervise

import (
	"sync/atomic"
	"testing"
	"time"
)

// countOf is where's count in Counts (0 when absent).
func countOf(where string) uint64 {
	for _, c := range Counts() {
		if c.Where == where {
			return c.N
		}
	}
	return 0
}

func TestGoRecoversAndCounts(t *testing.T) {
	seen := make(chan string, 1)
	defer OnPanic(func(w string) { seen <- w })()
	before := countOf("test.go")
	Go("test.go", func() { panic("boom") })
	select {
	case w := <-seen:
		if w != "test.go" {
			t.Fatalf("hook saw %q", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no panic reported")
	}
	if got := countOf("test.go"); got != before+1 {
		t.Fatalf("count %d, want %d", got, before+1)
	}
}

func TestRunReportsWhetherItPanicked(t *testing.T) {
	cases := []struct {
		name string
		fn   func()
		want bool
	}{
		{"returns", func() {}, false},
		{"panics", func() { panic("x") }, true},
		{"panics with nil error value", func() { var e error; panic(e) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Run("test.run", c.fn); got != c.want {
				t.Fatalf("Run = %v, want %v", got, c.want)
			}
		})
	}
}

// TestLoopRestartsAfterAPanicUntilItReturns: a loop that panics twice runs a third time and
// ends when it returns; each panic is counted.
func TestLoopRestartsAfterAPanicUntilItReturns(t *testing.T) {
	before := countOf("test.loop")
	var runs atomic.Int32
	done := make(chan struct{})
	Loop("test.loop", nil, func() {
		if runs.Add(1) <= 2 {
			panic("again")
		}
		close(done)
	})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the loop ran %d times", runs.Load())
	}
	time.Sleep(3 * MinBackoff) // a fourth run would come now
	if got := runs.Load(); got != 3 {
		t.Fatalf("runs = %d, want 3", got)
	}
	if got := countOf("test.loop"); got != before+2 {
		t.Fatalf("count %d, want %d", got, before+2)
	}
}

// TestLoopStopsDuringItsBackoff: a closed stop ends the wait, with no further run.
func TestLoopStopsDuringItsBackoff(t *testing.T) {
	stop := make(chan struct{})
	var runs atomic.Int32
	Loop("test.stop", stop, func() {
		runs.Add(1)
		close(stop)
		panic("once")
	})
	time.Sleep(3 * MinBackoff)
	if got := runs.Load(); got != 1 {
		t.Fatalf("runs = %d, want 1", got)
	}
}
