package persistence

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/modelgate/modelgate/internal/supervise"
)

// The ledger writes the quota actors' changes (counters, money, throttle state and request
// log entries) with group commits: the writes queued when a commit starts go into it, one
// Pebble batch and one fsync for all of them, across accounts. While a write is known to be
// on its way (a call admitted and not yet settled: ExpectWrite), a commit waits for it a
// little (the commit window, window.go), so that under load one fsync covers many calls
// instead of each sync starting the moment the last one ended; an idle ledger, or one whose
// expected writes have all arrived, commits at once, so a lone call pays one fsync and no
// wait. While the disk is full (space.go) a commit fails whole, with ErrFull, before
// anything reaches Pebble.

// ErrClosed is the error of a write submitted after Close.
var ErrClosed = errors.New("the store is closed")

type ledger struct {
	db      *pebble.DB
	space   *space
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []queuedWrite
	closing bool
	stopped <-chan struct{} // closed when the writer has ended (close)
	// maxGroup bounds a commit's batch (groupBytes); what is queued past it goes with
	// the next commit.
	maxGroup int
	// beforeCommit (tests) runs with the number of writes of each commit, before it.
	beforeCommit func(writes int)

	window  commitWindow
	expect  expected
	counted ledgerCounters

	// The group being committed lives here, not on run's stack, so that the writer started
	// again after a panic (supervise.Loop) answers it: answered is how many of its writes
	// were told their outcome, committed whether the commit returned (outcome is then its
	// result). Only the writer's goroutine touches them.
	group     []queuedWrite
	answered  int
	committed bool
	outcome   error
	spare     []queuedWrite
}

// whereLedger names the ledger's writer to supervise (its panics, its fault point).
const whereLedger = "persistence.ledger"

// maxGroupBytes bounds one group commit's batch, and so does a quarter of the memtable:
// Pebble keeps a batch of more than half a memtable whole until a flush, and a batch of more
// than 1 MiB is not reused: after a burst of 1,024 writes in flight, unbounded groups kept
// tens of MiB. Bounded, a burst takes a few more fsyncs, each for hundreds of writes.
const maxGroupBytes = 512 << 10

// groupBytes is the group commit's bound with a memtable of memtable bytes.
func groupBytes(memtable int64) int { return int(min(maxGroupBytes, memtable/4)) }

type queuedWrite struct {
	b    *pebble.Batch
	done func(error)
}

func newLedger(db *pebble.DB, space *space, memtable int64) *ledger {
	l := &ledger{db: db, space: space, maxGroup: groupBytes(memtable), window: defaultWindow}
	l.cond = sync.NewCond(&l.mu)
	l.expect.wake = l.wake
	l.stopped = supervise.Loop(whereLedger, nil, l.run)
	return l
}

func (l *ledger) submit(b *pebble.Batch, done func(error)) {
	l.mu.Lock()
	if l.closing {
		l.mu.Unlock()
		b.Close()
		done(ErrClosed)
		return
	}
	l.queue = append(l.queue, queuedWrite{b, done})
	l.cond.Signal()
	l.mu.Unlock()
}

// run is the writer: one group commit at a time until the ledger closes. Started again after
// a panic, it first answers the group the panic interrupted.
func (l *ledger) run() {
	l.answerInterrupted()
	for l.take() {
		supervise.Fault(whereLedger)
		if l.beforeCommit != nil {
			l.beforeCommit(len(l.group))
		}
		l.outcome = l.commit(l.group)
		l.committed = true
		l.counted.commit(len(l.group))
		l.answer()
	}
}

// take moves the next group from the queue to l.group, waiting for one; false once the
// ledger is closing and everything queued is written.
func (l *ledger) take() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.queue) == 0 && !l.closing {
		l.cond.Wait()
	}
	l.gather()
	n := l.groupLen()
	l.group = append(l.spare[:0], l.queue[:n]...)
	rest := copy(l.queue, l.queue[n:])
	clear(l.queue[rest:])
	l.queue = l.queue[:rest]
	return n > 0
}

// answer tells each write of the group not yet told its commit's outcome. A write is counted
// as told before its done runs, so a done that panics is not called twice.
func (l *ledger) answer() {
	for l.answered < len(l.group) {
		w := l.group[l.answered]
		l.group[l.answered] = queuedWrite{}
		l.answered++
		w.done(l.outcome)
	}
	l.spare, l.group = l.group[:0], nil
	l.answered, l.committed, l.outcome = 0, false, nil
}

// answerInterrupted answers the group a panic interrupted: with its commit's outcome when the
// commit had returned, else with supervise.ErrPanicked, since what is not known to be on disk
// is never acknowledged (the quota owner then returns the account to what is on disk).
func (l *ledger) answerInterrupted() {
	if l.group == nil {
		return
	}
	if !l.committed {
		l.outcome = fmt.Errorf("group commit: %w", supervise.ErrPanicked)
	}
	l.answer()
}

// groupLen is how many of the queued writes the next commit takes: as many as fit in
// maxGroup bytes, at least one.
func (l *ledger) groupLen() int {
	size := 0
	for i, w := range l.queue {
		if size += w.b.Len(); size > l.maxGroup && i > 0 {
			return i
		}
	}
	return len(l.queue)
}

// full reports that the queue fills a commit: waiting longer would not add to it.
func (l *ledger) full() bool { return l.groupLen() < len(l.queue) }

// commit applies the queued batches as one synced batch.
func (l *ledger) commit(q []queuedWrite) error {
	if err := l.space.check(); err != nil {
		for _, w := range q {
			w.b.Close()
		}
		return err
	}
	if len(q) == 1 {
		defer q[0].b.Close()
		return q[0].b.Commit(pebble.Sync)
	}
	group := l.db.NewBatch()
	defer group.Close()
	var err error
	for _, w := range q {
		if err == nil {
			err = group.Apply(w.b, nil)
		}
		w.b.Close()
	}
	if err != nil {
		return err
	}
	return group.Commit(pebble.Sync)
}

// close commits what is queued and stops; later submissions fail with ErrClosed.
func (l *ledger) close() {
	l.mu.Lock()
	l.closing = true
	l.cond.Signal()
	l.mu.Unlock()
	<-l.stopped
}

// SubmitQuota queues w for the next group commit and calls done with its outcome, from
// the ledger's goroutine, once w is on disk (nil) or failed: done must not block. Invalid
// input writes nothing and calls done with the error at once. Writes are committed in the
// order they were submitted.
func (s *Store) SubmitQuota(w QuotaWrite, done func(error)) {
	enc := s.logEncoder(s.db)
	b, err := s.quotaBatch(enc, &w)
	if err != nil {
		done(err)
		return
	}
	if len(enc.wrote) == 0 {
		s.ledger.submit(b, done)
		return
	}
	s.ledger.submit(b, func(err error) {
		enc.done(err)
		done(err)
	})
}

// WriteQuota applies w durably and returns when it is on disk.
func (s *Store) WriteQuota(w QuotaWrite) error {
	res := make(chan error, 1)
	s.SubmitQuota(w, func(err error) { res <- err })
	return <-res
}

// quotaBatch validates w and encodes it into a batch.
func (s *Store) quotaBatch(enc *logEncoder, w *QuotaWrite) (*pebble.Batch, error) {
	if err := checkQuotaWrite(w); err != nil {
		return nil, err
	}
	b := s.db.NewBatch()
	if err := enc.putQuota(b, w); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// checkQuotaWrite reports what in w the store cannot keep.
func checkQuotaWrite(w *QuotaWrite) error {
	if err := validateLogAccount(w.Account); err != nil {
		return fmt.Errorf("write quota: %w", err)
	}
	if w.State == nil {
		return fmt.Errorf("write quota of %s: %w: no state", w.Account, ErrInvalid)
	}
	for _, g := range w.Grants {
		if err := validateCreditKey(w.Account, g.Key); err != nil {
			return fmt.Errorf("write quota: %w", err)
		}
	}
	for _, k := range w.Keys {
		if err := validateKeyID(k.KeyID); err != nil {
			return fmt.Errorf("write quota of %s: %w", w.Account, err)
		}
	}
	for i := range w.Log {
		if err := ValidateLogEntry(&w.Log[i]); err != nil {
			return fmt.Errorf("write quota of %s: log[%d]: %w", w.Account, i, err)
		}
		if w.Log[i].AccountID != w.Account {
			return fmt.Errorf("write quota of %s: log[%d]: %w: entry of account %q", w.Account, i, ErrInvalid, w.Log[i].AccountID)
		}
	}
	return nil
}

// putQuota encodes a checked w into b.
func (enc *logEncoder) putQuota(b *pebble.Batch, w *QuotaWrite) error {
	err := putMsgpack(b, dbKey(nsQuota, w.Account), w.State)
	for i := 0; err == nil && i < len(w.Grants); i++ {
		g := &w.Grants[i]
		err = putMsgpack(b, dbKey(nsCredit, w.Account, "/", g.Key), &g.Grant)
	}
	for i := 0; err == nil && i < len(w.Keys); i++ {
		k := &w.Keys[i]
		key := dbKey(nsKeyQuota, w.Account, "/", k.KeyID)
		if k.State == nil {
			err = b.Delete(key, nil)
		} else {
			err = putMsgpack(b, key, k.State)
		}
	}
	for i := 0; err == nil && i < len(w.Log); i++ {
		err = enc.putLogEntry(b, &w.Log[i])
	}
	if err != nil {
		return fmt.Errorf("write quota of %s: %w", w.Account, err)
	}
	return nil
}
