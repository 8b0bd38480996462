package persistence

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// Writes queued while a commit runs share the next one: one batch, one fsync, whatever
// their accounts; each is acknowledged only once it is on disk, in the order submitted.
func TestLedgerGroupsTheWritesQueuedDuringACommit(t *testing.T) {
	s, dir := openStore(t)
	var sizes []int
	release := make(chan struct{})
	s.ledger.beforeCommit = func(n int) {
		sizes = append(sizes, n)
		if len(sizes) == 1 {
			<-release // the first commit is "in its fsync" while the others queue
		}
	}
	var mu sync.Mutex
	var acked []string
	ack := func(id string, wg *sync.WaitGroup) func(error) {
		return func(err error) {
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			acked = append(acked, id)
			mu.Unlock()
			wg.Done()
		}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	s.SubmitQuota(QuotaWrite{Account: "acct_0", State: &QuotaRecord{Balance: 1}, Log: []LogEntry{entry("acct_0", "first", 0)}}, ack("first", &wg))
	testutil.WaitFor(t, "the condition", func() bool { // the ledger took it
		s.ledger.mu.Lock()
		defer s.ledger.mu.Unlock()
		return len(s.ledger.queue) == 0
	})
	var want []string
	for i := 1; i <= 40; i++ {
		acct, id := fmt.Sprintf("acct_%d", i%4), fmt.Sprintf("w%02d", i)
		want = append(want, id)
		wg.Add(1)
		s.SubmitQuota(QuotaWrite{Account: acct, State: &QuotaRecord{Balance: int64(i)}, Log: []LogEntry{entry(acct, id, time.Duration(i))}}, ack(id, &wg))
	}
	mu.Lock()
	if len(acked) != 0 {
		t.Fatalf("acknowledged before the commit: %v", acked)
	}
	mu.Unlock()
	close(release)
	wg.Wait()
	if !reflect.DeepEqual(sizes, []int{1, 40}) || !reflect.DeepEqual(acked, append([]string{"first"}, want...)) {
		t.Fatalf("commits of %v writes, acknowledged %v", sizes, acked)
	}
	s.ledger.beforeCommit = nil
	s = reopen(t, s, dir)
	for i := 0; i < 4; i++ {
		acct := fmt.Sprintf("acct_%d", i)
		rec, _, err := s.LoadQuota(acct)
		logs := must(s.ListLog(acct, time.Time{}, time.Time{}, 0))(t)
		wantBalance, wantLogs := []int64{40, 37, 38, 39}[i], []int{11, 10, 10, 10}[i] // the last write of each account wins
		if err != nil || rec.Balance != wantBalance || len(logs) != wantLogs {
			t.Fatalf("%s after reopen: balance %d, %d entries, %v", acct, rec.Balance, len(logs), err)
		}
	}
}

// A write submitted after Close fails, and Close commits what was queued before it.
func TestLedgerCloseCommitsWhatIsQueued(t *testing.T) {
	s, dir := openStore(t)
	done := make(chan error, 1)
	s.SubmitQuota(QuotaWrite{Account: "acct_c", State: &QuotaRecord{Balance: 7}}, func(err error) { done <- err })
	s.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	late := make(chan error, 1)
	s.SubmitQuota(QuotaWrite{Account: "acct_c", State: &QuotaRecord{Balance: 8}}, func(err error) { late <- err })
	if err := <-late; err != ErrClosed {
		t.Fatalf("write after close: %v", err)
	}
	s = reopen(t, s, dir)
	if rec, _, _ := s.LoadQuota("acct_c"); rec.Balance != 7 {
		t.Fatalf("balance %d, want 7", rec.Balance)
	}
}

// A burst queued during one commit is committed in groups of at most maxGroup bytes (a
// write bigger than that alone), each acknowledged once it is on disk, in order.
func TestLedgerBoundsTheBytesOfAGroup(t *testing.T) {
	s, dir := openStore(t)
	write := func(i int) QuotaWrite {
		acct := fmt.Sprintf("acct_%d", i%4)
		return QuotaWrite{Account: acct, State: &QuotaRecord{Balance: int64(i)}, Log: []LogEntry{entry(acct, fmt.Sprintf("w%02d", i), time.Duration(i))}}
	}
	w := write(10)
	b, err := s.quotaBatch(s.logEncoder(s.db), &w)
	if err != nil {
		t.Fatal(err)
	}
	s.ledger.maxGroup = 10 * b.Len() // ten writes of this size
	b.Close()
	var mu sync.Mutex
	var sizes []int
	release := make(chan struct{})
	s.ledger.beforeCommit = func(n int) {
		mu.Lock()
		sizes = append(sizes, n)
		first := len(sizes) == 1
		mu.Unlock()
		if first {
			<-release
		}
	}
	var acked []int
	var wg sync.WaitGroup
	for i := 10; i < 46; i++ { // one commit runs while the 35 others queue
		wg.Add(1)
		s.SubmitQuota(write(i), func(err error) {
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			acked = append(acked, i)
			mu.Unlock()
			wg.Done()
		})
		if i == 10 {
			testutil.WaitFor(t, "the condition", func() bool { mu.Lock(); defer mu.Unlock(); return len(sizes) == 1 })
		}
	}
	close(release)
	wg.Wait()
	if !reflect.DeepEqual(sizes, []int{1, 10, 10, 10, 5}) {
		t.Fatalf("commits of %v writes, want 1, then groups of ten writes' bytes", sizes)
	}
	for i, n := range acked {
		if n != i+10 {
			t.Fatalf("acknowledged %v, want submission order", acked)
		}
	}
	s.ledger.beforeCommit = nil
	s = reopen(t, s, dir)
	if rec, _, err := s.LoadQuota("acct_1"); err != nil || rec.Balance != 45 {
		t.Fatalf("acct_1 after reopen: balance %d, %v; want 45", rec.Balance, err)
	}
}
