package persistence

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// Retention (server.log_retention_days, docs/usage.md): entries older than the window are
// deleted with one DeleteRange per account and a stretch of its log, and the by-id index
// pairs of the same entries with them. The cutoff is rounded down to an index window
// (logIDWindowBits), so an index pair is deleted only with every entry it can stand for.
// The dictionary stays: it is small, and the entries within the window name its codes.

// pruneChunk bounds the entries one prune batch deletes (their index pairs are point
// deletions held in the batch).
const pruneChunk = 4096

// LogCutoff is the cutoff PruneLog uses for before: rounded down to an index window.
func LogCutoff(before int64) int64 { return before &^ (1<<logIDWindowBits - 1) }

// PruneLog deletes every account's request-log entries with Time < LogCutoff(before), with
// their index pairs, in batches of up to pruneChunk entries, and returns how many it deleted.
// Entries at or after the cutoff are never touched. It is for a single node: an account
// shard's log is pruned by its replicated command (ShardBatch.PruneLog).
func (s *Store) PruneLog(before int64) (int, error) {
	total := 0
	for acct, err := s.nextLogAccount(nil); acct != nil || err != nil; acct, err = s.nextLogAccount(acct) {
		if err != nil {
			return total, err
		}
		for {
			b := s.db.NewBatch()
			n, more, err := pruneAccountLog(s.db, b, string(acct), before, pruneChunk)
			if err == nil && n > 0 {
				err = s.commit(b)
			} else {
				b.Close()
			}
			if err != nil {
				return total, fmt.Errorf("persistence: prune log of %s: %w", acct, err)
			}
			total += n
			if !more {
				break
			}
		}
	}
	return total, nil
}

// nextLogAccount is the first account after after (nil: the first) with a log entry.
func (s *Store) nextLogAccount(after []byte) ([]byte, error) {
	lower := []byte(nsLog)
	if after != nil {
		lower = prefixUpper(dbKey(nsLog, string(after), "/"))
	}
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: prefixUpper([]byte(nsLog))})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	if !it.First() {
		return nil, it.Error()
	}
	rest := it.Key()[len(nsLog):]
	i := bytes.IndexByte(rest, '/')
	if i <= 0 {
		return nil, fmt.Errorf("persistence: log key %q has no account", it.Key())
	}
	return append([]byte(nil), rest[:i]...), nil
}

// pruneAccountLog adds to b the deletion of up to limit (0: all) of account's entries with
// Time < LogCutoff(before) and of their index pairs, reading through r, and reports how many
// and whether older entries remain.
func pruneAccountLog(r pebble.Reader, b *pebble.Batch, account string, before int64, limit int) (n int, more bool, err error) {
	cutoff := LogCutoff(before)
	if cutoff <= 0 {
		return 0, false, nil
	}
	prefix := dbKey(nsLog, account, "/")
	end := logTimeKey(account, cutoff)
	var stop []byte // the first entry left for the next batch
	err = scanIn(r, prefix, end, func(k, v []byte) (bool, error) {
		if limit > 0 && n == limit {
			stop = append([]byte(nil), k...)
			return false, nil
		}
		n++
		return true, deleteLogIndex(r, b, account, k[len(prefix):])
	})
	if err != nil || n == 0 {
		return 0, false, err
	}
	if stop != nil {
		end = stop
	}
	return n, stop != nil, b.DeleteRange(prefix, end, nil)
}

// deleteLogIndex adds to b the deletion of the index pair of the entry whose key, after its
// account prefix, is rest: a gateway id's pair is the entry's own; another id's points at
// the latest entry with it, and is deleted only if that is this one.
func deleteLogIndex(r pebble.Reader, b *pebble.Batch, account string, rest []byte) error {
	if len(rest) < 8+2 {
		return fmt.Errorf("log key of %s too short: %q", account, rest)
	}
	nanos := int64(binary.BigEndian.Uint64(rest))
	rid, err := parseRID(rest[8:])
	if err != nil {
		return err
	}
	if rest[8] == ridCompact {
		return b.Delete(logIDKey(account, rid, nanos), nil)
	}
	k := textLogIDKey(account, rid)
	val, closer, err := r.Get(k)
	if err != nil {
		return mapNotFoundOK(err)
	}
	points := len(val) == 8 && int64(binary.BigEndian.Uint64(val)) == nanos
	closer.Close()
	if !points {
		return nil
	}
	return b.Delete(k, nil)
}
