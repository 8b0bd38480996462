package persistence

import (
	"sync/atomic"
	"time"
)

// The commit window. An fsync on ext4 is a journal commit whose work lands on a core of its
// own (about 0.4 ms here); started the moment the previous one ends, syncs ran back to back
// under load and each covered about three calls. So a commit waits, before it starts, for the
// writes known to be on their way: calls admitted and not yet settled (ExpectWrite). It waits
// perExpected for each of them, never more than max, and starts at once when none is on its
// way, when the last of them has come, or when the queue fills a commit. A call alone (one
// client, one call at a time) never waits: nothing else is on its way when it settles.
// Under load the window spaces the syncs out: everything that settles while one commit
// waits or runs, across accounts and within one (an account gathers its changes while its
// write is in flight), goes into the next.

// defaultWindow: 64 calls in flight wait the whole 2 ms, which keeps a saturated ledger under
// about 400 syncs a second; two in flight wait at most 100 µs.
var defaultWindow = commitWindow{perExpected: 50 * time.Microsecond, max: 2 * time.Millisecond}

type commitWindow struct{ perExpected, max time.Duration }

// length is how long a commit may wait for n writes on their way.
func (w commitWindow) length(n int64) time.Duration {
	if n <= 0 {
		return 0
	}
	return min(w.max, time.Duration(n)*w.perExpected)
}

// expected counts the writes on their way. It is a hint: a count that drifts costs a commit
// at most the window, never a write.
type expected struct {
	n    atomic.Int64
	wake func() // the ledger's, when the last expected write has come
}

func (e *expected) add(delta int) {
	if e.n.Add(int64(delta)) <= 0 && delta < 0 {
		e.wake()
	}
}

func (e *expected) count() int64 { return max(0, e.n.Load()) }

// gather holds the next commit, with l.mu held, while writes are on their way and its window
// is open.
func (l *ledger) gather() {
	var start time.Time
	for !l.closing && !l.full() {
		n := l.expect.count()
		if n == 0 {
			return
		}
		if start.IsZero() {
			start = time.Now()
		}
		wait := l.window.length(n) - time.Since(start)
		if wait <= 0 {
			return
		}
		l.waitFor(wait)
	}
}

// waitFor waits on l.cond (l.mu held) until a submission, the last expected write or d.
func (l *ledger) waitFor(d time.Duration) {
	t := time.AfterFunc(d, l.wake)
	l.cond.Wait()
	t.Stop()
}

// wake wakes the writer if it waits.
func (l *ledger) wake() {
	l.mu.Lock()
	l.cond.Broadcast()
	l.mu.Unlock()
}

// ledgerCounters count the ledger's commits (each one fsync) and the writes they carried.
type ledgerCounters struct {
	commits, writes atomic.Uint64
}

func (c *ledgerCounters) commit(writes int) {
	c.commits.Add(1)
	c.writes.Add(uint64(writes))
}

// LedgerStats are the ledger's totals since the store opened.
type LedgerStats struct {
	Commits uint64 // group commits, each one fsync
	Writes  uint64 // quota writes they carried (one per account per commit)
}

// LedgerStats reads the ledger's totals.
func (s *Store) LedgerStats() LedgerStats {
	return LedgerStats{Commits: s.ledger.counted.commits.Load(), Writes: s.ledger.counted.writes.Load()}
}

// ExpectWrite tells the ledger that a write is on its way (+1: a call was admitted) or no
// longer (-1: it is settling now), so that a commit waits for it a little (the commit
// window) rather than syncing without it.
func (s *Store) ExpectWrite(delta int) { s.ledger.expect.add(delta) }
