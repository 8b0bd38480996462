package reqlog_test

import (
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/reqlog"
	"github.com/modelgate/modelgate/persistence"
)

// fakeStore records every AppendLog call; while failing it records the attempt and
// returns errDisk.
type fakeStore struct {
	mu       sync.Mutex
	fail     bool
	batches  [][]string // request ids of each successful batch
	attempts int        // calls, failed ones included
}

var errDisk = errors.New("disk on fire")

func (f *fakeStore) AppendLog(entries []persistence.LogEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts++
	if f.fail {
		return errDisk
	}
	// Copy: the writer reuses its buffer after a successful write.
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.RequestID
	}
	f.batches = append(f.batches, ids)
	return nil
}

func (f *fakeStore) setFail(v bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = v
}

func (f *fakeStore) snapshot() (batches [][]string, attempts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, b := range f.batches {
		batches = append(batches, slices.Clone(b))
	}
	return batches, f.attempts
}

// waitBatches waits until n batches are written and returns them.
func (f *fakeStore) waitBatches(t *testing.T, n int, within time.Duration) [][]string {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		b, _ := f.snapshot()
		if len(b) >= n {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d batches written after %v, want %d: %v", len(b), within, n, b)
		}
		time.Sleep(time.Millisecond)
	}
}

func start(t *testing.T, cfg reqlog.Config) (*actor.Engine, *actor.PID, *fakeStore) {
	t.Helper()
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeStore{}
	pid := reqlog.Start(e, f, cfg)
	t.Cleanup(func() { <-e.Poison(pid).Done() })
	return e, pid, f
}

func entry(i int) persistence.LogEntry {
	return persistence.LogEntry{RequestID: "req_" + strconv.Itoa(i), AccountID: "acct_1", Time: int64(i + 1), Status: 200}
}

func ids(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, "req_"+strconv.Itoa(i))
	}
	return out
}

func send(e *actor.Engine, pid *actor.PID, from, to int) {
	for i := from; i < to; i++ {
		e.Send(pid, entry(i))
	}
}

func flush(t *testing.T, e *actor.Engine, pid *actor.PID) error {
	t.Helper()
	done := make(chan error, 1)
	e.Send(pid, reqlog.Flush{Done: done})
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatal("flush not answered in 5 s")
		return nil
	}
}

// never is an interval no test lives to see.
const never = time.Hour

func TestFullBatchIsWrittenAtOnce(t *testing.T) {
	e, pid, f := start(t, reqlog.Config{MaxBatch: 4, Interval: never, MaxQueue: 100})
	// The first batch holding exactly req_0..3 proves the first three waited for the fourth.
	send(e, pid, 0, 4)
	got := f.waitBatches(t, 1, 5*time.Second)
	if len(got) != 1 || !slices.Equal(got[0], ids(0, 4)) {
		t.Fatalf("batches = %v, want one batch of req_0..3", got)
	}
	// Nine more: two full batches written on their own, one entry left for the flush.
	send(e, pid, 4, 13)
	f.waitBatches(t, 3, 5*time.Second)
	if err := flush(t, e, pid); err != nil {
		t.Fatal(err)
	}
	got, attempts := f.snapshot()
	want := [][]string{ids(0, 4), ids(4, 8), ids(8, 12), ids(12, 13)}
	if !slices.EqualFunc(got, want, slices.Equal) || attempts != 4 {
		t.Fatalf("batches = %v (%d calls), want %v", got, attempts, want)
	}
}

func TestTickWritesAPartialBatch(t *testing.T) {
	const interval = 50 * time.Millisecond
	e, pid, f := start(t, reqlog.Config{MaxBatch: 100, Interval: interval, MaxQueue: 1000})
	began := time.Now()
	send(e, pid, 0, 3)
	got := f.waitBatches(t, 1, 2*time.Second)
	// One interval plus scheduling slack; generous for a loaded 2-core machine under -race.
	if waited := time.Since(began); waited > interval+500*time.Millisecond {
		t.Fatalf("partial batch written after %v, interval %v", waited, interval)
	}
	if !slices.EqualFunc(got, [][]string{ids(0, 3)}, slices.Equal) {
		t.Fatalf("batches = %v", got)
	}
	// The ticker keeps running.
	send(e, pid, 3, 5)
	got = f.waitBatches(t, 2, 2*time.Second)
	if !slices.EqualFunc(got, [][]string{ids(0, 3), ids(3, 5)}, slices.Equal) {
		t.Fatalf("batches = %v", got)
	}
	// Idle ticks call the store with nothing.
	time.Sleep(3 * interval)
	if _, attempts := f.snapshot(); attempts != 2 {
		t.Fatalf("%d store calls for 2 batches: idle ticks must not write", attempts)
	}
}

func TestFlushMakesEverythingDurable(t *testing.T) {
	e, pid, f := start(t, reqlog.Config{MaxBatch: 100, Interval: never, MaxQueue: 1000})
	if err := flush(t, e, pid); err != nil {
		t.Fatalf("empty flush: %v", err)
	}
	send(e, pid, 0, 5)
	if err := flush(t, e, pid); err != nil {
		t.Fatal(err)
	}
	// The reply comes after the write: no waiting needed.
	got, attempts := f.snapshot()
	if !slices.EqualFunc(got, [][]string{ids(0, 5)}, slices.Equal) || attempts != 1 {
		t.Fatalf("batches = %v after %d calls", got, attempts)
	}
	send(e, pid, 5, 6)
	if err := flush(t, e, pid); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.snapshot(); !slices.EqualFunc(got, [][]string{ids(0, 5), ids(5, 6)}, slices.Equal) {
		t.Fatalf("batches = %v", got)
	}
}

func TestFailedWriteIsRetriedOnTheNextTick(t *testing.T) {
	const interval = 20 * time.Millisecond
	e, pid, f := start(t, reqlog.Config{MaxBatch: 100, Interval: interval, MaxQueue: 1000})
	f.setFail(true)
	send(e, pid, 0, 3)
	if err := flush(t, e, pid); !errors.Is(err, errDisk) {
		t.Fatalf("flush with a failing store = %v, want %v", err, errDisk)
	}
	// Ticks keep retrying while the store fails.
	_, before := f.snapshot()
	deadline := time.Now().Add(2 * time.Second)
	for _, a := f.snapshot(); a < before+2; _, a = f.snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("no retries on ticks: %d calls", a)
		}
		time.Sleep(time.Millisecond)
	}
	send(e, pid, 3, 5)
	if err := flush(t, e, pid); !errors.Is(err, errDisk) {
		t.Fatalf("second flush = %v", err)
	}
	if got, _ := f.snapshot(); len(got) != 0 {
		t.Fatalf("batches written while failing: %v", got)
	}

	// The store recovers: the next tick writes everything, in order, once.
	f.setFail(false)
	got := f.waitBatches(t, 1, 2*time.Second)
	if !slices.EqualFunc(got, [][]string{ids(0, 5)}, slices.Equal) {
		t.Fatalf("batches = %v, want req_0..4 in one batch", got)
	}
	if err := flush(t, e, pid); err != nil {
		t.Fatalf("flush after recovery: %v", err)
	}
	if got, _ := f.snapshot(); len(got) != 1 {
		t.Fatalf("entries written twice: %v", got)
	}
}

// TestFailingStoreIsNotRetriedPerEntry: while the store fails, a full batch does not call it
// again on every new entry (that would re-send the whole queue each time); ticks and flushes
// retry, and once a write succeeds full batches go out at once again.
func TestFailingStoreIsNotRetriedPerEntry(t *testing.T) {
	e, pid, f := start(t, reqlog.Config{MaxBatch: 2, Interval: never, MaxQueue: 1000})
	f.setFail(true)
	send(e, pid, 0, 10)
	if err := flush(t, e, pid); !errors.Is(err, errDisk) {
		t.Fatalf("flush = %v", err)
	}
	if _, attempts := f.snapshot(); attempts != 2 {
		t.Fatalf("%d store calls for 10 entries with a failing store, want 2 (first full batch, flush)", attempts)
	}
	f.setFail(false)
	if err := flush(t, e, pid); err != nil {
		t.Fatal(err)
	}
	send(e, pid, 10, 12)
	got := f.waitBatches(t, 2, 5*time.Second)
	if !slices.EqualFunc(got, [][]string{ids(0, 10), ids(10, 12)}, slices.Equal) {
		t.Fatalf("batches = %v", got)
	}
}

func TestMaxQueueDropsTheOldest(t *testing.T) {
	cases := []struct {
		name               string
		maxBatch, maxQueue int
		sent               int
		kept               []string
	}{
		{name: "queue below batch", maxBatch: 100, maxQueue: 5, sent: 8, kept: ids(3, 8)},
		{name: "batch below queue", maxBatch: 2, maxQueue: 4, sent: 10, kept: ids(6, 10)},
		{name: "at the cap", maxBatch: 100, maxQueue: 6, sent: 6, kept: ids(0, 6)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, pid, f := start(t, reqlog.Config{MaxBatch: tc.maxBatch, Interval: never, MaxQueue: tc.maxQueue})
			f.setFail(true)
			send(e, pid, 0, tc.sent)
			if err := flush(t, e, pid); !errors.Is(err, errDisk) {
				t.Fatalf("flush = %v", err)
			}
			f.setFail(false)
			if err := flush(t, e, pid); err != nil {
				t.Fatal(err)
			}
			if got, _ := f.snapshot(); !slices.EqualFunc(got, [][]string{tc.kept}, slices.Equal) {
				t.Fatalf("batches = %v, want %v", got, tc.kept)
			}
		})
	}
}

func TestPoisonWritesWhatIsPending(t *testing.T) {
	e, pid, f := start(t, reqlog.Config{MaxBatch: 100, Interval: never, MaxQueue: 1000})
	send(e, pid, 0, 5)
	<-e.Poison(pid).Done()
	if got, attempts := f.snapshot(); !slices.EqualFunc(got, [][]string{ids(0, 5)}, slices.Equal) || attempts != 1 {
		t.Fatalf("batches = %v after %d calls, want req_0..4", got, attempts)
	}
}

// Issue #12 item 16: a store that keeps failing (a full disk) is logged once when writes
// start failing and once when they succeed again, however many ticks retry in between.
func TestFailingStoreIsLoggedOncePerChange(t *testing.T) {
	var logs strings.Builder
	var mu sync.Mutex
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil)))
	defer slog.SetDefault(prev)
	count := func(s string) int { mu.Lock(); defer mu.Unlock(); return strings.Count(logs.String(), s) }

	e, pid, f := start(t, reqlog.Config{MaxBatch: 100, Interval: 5 * time.Millisecond, MaxQueue: 1000})
	f.setFail(true)
	send(e, pid, 0, 3)
	deadline := time.Now().Add(5 * time.Second)
	for _, a := f.snapshot(); a < 10; _, a = f.snapshot() {
		if time.Now().After(deadline) {
			t.Fatalf("no retries on ticks: %d calls", a)
		}
		time.Sleep(time.Millisecond)
	}
	f.setFail(false)
	f.waitBatches(t, 1, 2*time.Second)
	if err := flush(t, e, pid); err != nil {
		t.Fatal(err)
	}
	if failed, again := count("request log write failed"), count("request log written again"); failed != 1 || again != 1 {
		t.Fatalf("%d 'failed' and %d 'written again' lines over %d attempts, want 1 and 1:\n%s", failed, again, 10, logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
