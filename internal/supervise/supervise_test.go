package supervise

import (
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestGoRecoversAndCounts(t *testing.T) {
	seen := make(chan string, 1)
	defer OnPanic(func(w string) { seen <- w })()
	before := CountAt("test.go")
	Go("test.go", func() { panic("boom") })
	select {
	case w := <-seen:
		if w != "test.go" {
			t.Fatalf("hook saw %q", w)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no panic reported")
	}
	if got := CountAt("test.go"); got != before+1 {
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
	before := CountAt("test.loop")
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
	if got := CountAt("test.loop"); got != before+2 {
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

// TestGoOwingAnswersOnlyAfterAPanic: the fail function runs once fn panicked, after fn's
// deferred calls, and never when fn returned.
func TestGoOwingAnswersOnlyAfterAPanic(t *testing.T) {
	cases := []struct {
		name string
		fn   func()
		want string
	}{
		{"returns", func() {}, "fn ended"},
		{"panics", func() { panic("owed") }, "fn ended, failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := CountAt("test.owing")
			events := make(chan string, 2)
			GoOwing("test.owing", func() {
				defer func() { events <- "fn ended" }()
				c.fn()
			}, func() { events <- "failed" })
			got := []string{<-events}
			select {
			case e := <-events:
				got = append(got, e)
			case <-time.After(3 * MinBackoff): // a fail after a return would come now
			}
			if strings.Join(got, ", ") != c.want {
				t.Fatalf("events %q, want %q", got, c.want)
			}
			wantCount := before
			if strings.Contains(c.want, "failed") {
				wantCount++
			}
			if n := CountAt("test.owing"); n != wantCount {
				t.Fatalf("count %d, want %d", n, wantCount)
			}
		})
	}
}

// TestLoopsDoneIsClosedWhenItEnds: by fn returning, or by stop during a back-off.
func TestLoopsDoneIsClosedWhenItEnds(t *testing.T) {
	cases := []struct {
		name string
		fn   func(stop chan struct{}) func()
	}{
		{"fn returns", func(chan struct{}) func() { return func() {} }},
		{"stopped in its back-off", func(stop chan struct{}) func() {
			return func() { close(stop); panic("once") }
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stop := make(chan struct{})
			select {
			case <-Loop("test.done", stop, c.fn(stop)):
			case <-time.After(5 * time.Second):
				t.Fatal("the loop's done channel was not closed")
			}
		})
	}
}

// TestAttrsNameTheRuntimesTextOnly: a value code panicked with may hold content; only the
// runtime's own errors are quoted.
func TestAttrsNameTheRuntimesTextOnly(t *testing.T) {
	var runtimeErr any
	func() {
		defer func() { runtimeErr = recover() }()
		var m map[string]int
		m["x"] = 1
	}()
	cases := []struct {
		name string
		v    any
		want []any
	}{
		{"a string", "the user's secret prompt", []any{"panic_type", "string", "stack", "s"}},
		{"an error", errors.New("completion text"), []any{"panic_type", "*errors.errorString", "stack", "s"}},
		{"the runtime's", runtimeErr, []any{"panic_type", "runtime.plainError", "panic", "assignment to entry in nil map", "stack", "s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Attrs(c.v, []byte("s")); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Attrs = %q, want %q", got, c.want)
			}
		})
	}
}
