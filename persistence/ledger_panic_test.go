package persistence

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/supervise"
	"github.com/modelgate/modelgate/internal/testutil"
)

// A panic in the ledger's writer does not stop it (supervise.Loop starts it again) and leaves
// no write unanswered: a group the panic caught before its commit returned is answered with
// supervise.ErrPanicked and is not on disk — nothing is acknowledged that is not durable —
// and a group whose commit returned keeps its outcome, even when a write's own done panics.
// The next write is committed and acknowledged as usual.
func TestLedgerResumesAfterAPanicAndAnswersEveryWrite(t *testing.T) {
	cases := []struct {
		name        string
		panicBefore bool // the panic is in the writer's turn, before the commit
		panicDone   int  // else the done of this write panics (its own code)
		want        []string
		onDisk      bool
	}{
		{name: "before the commit", panicBefore: true, want: []string{"w0: panicked", "w1: panicked", "w2: panicked"}},
		{name: "in a write's done", panicDone: 1, want: []string{"w0: ok", "w1: ok", "w2: ok"}, onDisk: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir := openStore(t)
			before := supervise.CountAt(whereLedger)
			release := make(chan struct{})
			commits := 0
			s.ledger.beforeCommit = func(n int) {
				commits++
				if commits == 1 {
					<-release // the three writes queue behind a first one
				}
				if commits == 2 && c.panicBefore {
					panic("the writer's turn fails")
				}
			}
			first := make(chan error, 1)
			s.SubmitQuota(QuotaWrite{Account: "acct_p", State: &QuotaRecord{Balance: 1}}, func(err error) { first <- err })
			testutil.WaitFor(t, "the condition", func() bool { s.ledger.mu.Lock(); defer s.ledger.mu.Unlock(); return len(s.ledger.queue) == 0 })
			var mu sync.Mutex
			got := make([]string, 3)
			var wg sync.WaitGroup
			for i := range 3 {
				wg.Add(1)
				id := fmt.Sprintf("w%d", i)
				w := QuotaWrite{Account: "acct_p", State: &QuotaRecord{Balance: int64(10 + i)}, Log: []LogEntry{entry("acct_p", id, time.Duration(i))}}
				s.SubmitQuota(w, func(err error) {
					defer wg.Done()
					mu.Lock()
					got[i] = id + ": " + outcome(err)
					mu.Unlock()
					if i == c.panicDone && !c.panicBefore {
						panic("a done that fails")
					}
				})
			}
			close(release)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("answers %q, want %q", got, c.want)
			}
			next := make(chan error, 1)
			s.SubmitQuota(QuotaWrite{Account: "acct_q", State: &QuotaRecord{Balance: 7}, Log: []LogEntry{entry("acct_q", "next", 0)}}, func(err error) { next <- err })
			if err := <-next; err != nil {
				t.Fatalf("the write after the panic: %v", err)
			}
			if n := supervise.CountAt(whereLedger); n != before+1 {
				t.Fatalf("%s panics counted %d, want %d", whereLedger, n, before+1)
			}
			s.ledger.beforeCommit = nil
			s = reopen(t, s, dir)
			rec, _, err := s.LoadQuota("acct_p")
			logs := must(s.ListLog("acct_p", time.Time{}, time.Time{}, 0))(t)
			wantBalance, wantLogs := int64(1), 0
			if c.onDisk {
				wantBalance, wantLogs = 12, 3
			}
			if err != nil || rec.Balance != wantBalance || len(logs) != wantLogs {
				t.Fatalf("acct_p on disk: balance %d, %d entries, %v; want %d, %d", rec.Balance, len(logs), err, wantBalance, wantLogs)
			}
			if q, _, err := s.LoadQuota("acct_q"); err != nil || q.Balance != 7 || len(must(s.ListLog("acct_q", time.Time{}, time.Time{}, 0))(t)) != 1 {
				t.Fatalf("the write after the panic is not on disk: %+v, %v", q, err)
			}
		})
	}
}

func outcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, supervise.ErrPanicked):
		return "panicked"
	}
	return err.Error()
}
