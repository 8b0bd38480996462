package persistence

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// windowStep is one thing a commit-window test does, in order: tell the ledger about
// writes on their way (expect), submit a write, or wait until the first acked writes are
// on disk.
type windowStep struct {
	expect int
	submit bool
	acked  int
}

// The commit waits for the writes announced as on their way (ExpectWrite), and only for
// them: not when none is, not past its window, not when the queue already fills a commit.
func TestCommitWindowWaitsOnlyForTheWritesOnTheirWay(t *testing.T) {
	hour := commitWindow{perExpected: time.Hour, max: time.Hour}
	cases := []struct {
		name     string
		window   commitWindow
		maxGroup int // 0: the default
		steps    []windowStep
		want     []int // writes per commit
	}{
		{"a write with nothing on its way commits at once, whatever the window", hour, 0,
			[]windowStep{{submit: true}}, []int{1}},
		{"a commit waits for the writes on their way and takes them together", hour, 0,
			[]windowStep{{expect: 2}, {submit: true}, {expect: -1}, {submit: true}, {expect: -1}}, []int{2}},
		{"writes still on their way when the window closes go with a later commit",
			commitWindow{perExpected: 5 * time.Millisecond, max: 20 * time.Millisecond}, 0,
			[]windowStep{{expect: 3}, {submit: true}, {acked: 1}, {expect: -3}, {submit: true}}, []int{1, 1}},
		{"a queue that fills a commit does not wait", hour, 1,
			[]windowStep{{expect: 10}, {submit: true}, {submit: true}, {acked: 1}, {expect: -10}}, []int{1, 1}},
		{"a count below zero (a settle without its admission) waits for nothing", hour, 0,
			[]windowStep{{expect: -3}, {submit: true}, {acked: 1}, {expect: 3}}, []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := openStore(t)
			var mu sync.Mutex
			var sizes []int
			acked := 0
			s.ledger.mu.Lock()
			s.ledger.window = tc.window
			if tc.maxGroup > 0 {
				s.ledger.maxGroup = tc.maxGroup
			}
			s.ledger.beforeCommit = func(n int) {
				mu.Lock()
				sizes = append(sizes, n)
				mu.Unlock()
			}
			s.ledger.mu.Unlock()
			submitted := 0
			for _, st := range tc.steps {
				switch {
				case st.expect != 0:
					s.ExpectWrite(st.expect)
				case st.submit:
					acct := fmt.Sprintf("acct_w%d", submitted)
					submitted++
					s.SubmitQuota(QuotaWrite{Account: acct, State: &QuotaRecord{Balance: 1}}, func(err error) {
						if err != nil {
							t.Error(err)
						}
						mu.Lock()
						acked++
						mu.Unlock()
					})
				case st.acked > 0:
					testutil.WaitFor(t, "the condition", func() bool { mu.Lock(); defer mu.Unlock(); return acked >= st.acked })
				}
			}
			testutil.WaitFor(t, "the condition", func() bool { mu.Lock(); defer mu.Unlock(); return acked == submitted })
			mu.Lock()
			defer mu.Unlock()
			if !reflect.DeepEqual(sizes, tc.want) {
				t.Fatalf("commits of %v writes, want %v", sizes, tc.want)
			}
			if n := s.LedgerStats(); n.Commits != uint64(len(tc.want)) || n.Writes != uint64(submitted) {
				t.Fatalf("ledger stats %+v, want %d commits of %d writes", n, len(tc.want), submitted)
			}
		})
	}
}

// The window's length: per write on its way, bounded, nothing for none.
func TestCommitWindowLength(t *testing.T) {
	w := commitWindow{perExpected: 50 * time.Microsecond, max: 2 * time.Millisecond}
	for _, tc := range []struct {
		expected int64
		want     time.Duration
	}{{0, 0}, {-4, 0}, {1, 50 * time.Microsecond}, {2, 100 * time.Microsecond}, {40, 2 * time.Millisecond}, {1000, 2 * time.Millisecond}} {
		if got := w.length(tc.expected); got != tc.want {
			t.Errorf("length(%d) = %v, want %v", tc.expected, got, tc.want)
		}
	}
}
