package persistence

import (
	"bytes"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// An account shard (cluster/accounts) keeps its own keys in a raw namespace and writes what
// the quota step produced into the namespaces the single node uses (quota/, qkey/, credit/,
// log/), so the request log and the grants read the same on every node. Its batches are
// not synced: the engine's log is fsynced on a quorum before an entry is applied, and a
// replica restarting replays the entries after the applied index its batch recorded.

// ShardBatch is one atomic change of an account shard. It reads through to the store and
// sees its own writes.
type ShardBatch struct {
	rawBatch
	enc *logEncoder
}

// UpdateShard runs fn over a fresh batch and commits what it wrote in one unsynced batch
// (SyncWAL makes it durable). An error from fn drops the batch and is returned as it is.
func (s *Store) UpdateShard(fn func(*ShardBatch) error) error {
	b := &ShardBatch{rawBatch: rawBatch{b: s.db.NewIndexedBatch()}}
	b.enc = s.logEncoder(b.b)
	if err := fn(b); err != nil {
		b.b.Close()
		return err
	}
	if b.b.Empty() {
		b.b.Close()
		return nil
	}
	err := s.commitWith(b.b, pebble.NoSync)
	b.enc.done(err)
	if err != nil {
		return fmt.Errorf("persistence: commit account shard: %w", err)
	}
	return nil
}

// SyncWAL makes every write committed so far durable.
func (s *Store) SyncWAL() error {
	if err := s.db.LogData(nil, pebble.Sync); err != nil {
		return fmt.Errorf("persistence: sync: %w", err)
	}
	return nil
}

// CheckQuotaWrite reports what in w the store would refuse to write, so a caller can refuse
// it before it joins a batch.
func CheckQuotaWrite(w *QuotaWrite) error { return checkQuotaWrite(w) }

// PutQuota adds w to the batch as WriteQuota would write it.
func (b *ShardBatch) PutQuota(w *QuotaWrite) error {
	if err := checkQuotaWrite(w); err != nil {
		return err
	}
	return b.enc.putQuota(b.b, w)
}

// CreditGrantFor is Store.CreditGrantFor as the batch sees it.
func (b *ShardBatch) CreditGrantFor(account, key string) (g CreditGrant, found bool, err error) {
	if err := validateCreditKey(account, key); err != nil {
		return g, false, fmt.Errorf("credit grant: %w", err)
	}
	return grantIn(b.b, account, key)
}

// accountSpaces are the namespaces holding one account's quota state, in key order: its
// grants, its request log, the log's request-id index and dictionary, its keys' throttle
// state (each under "<ns><account>/"), and its record (at "quota/<account>" exactly).
var accountSpaces = []string{nsCredit, nsLog, nsLogID, nsLogDict, nsKeyQuota}

// ShardView is a consistent read-only view of the store (a Pebble snapshot) for an account
// shard's snapshot: its raw namespace and its accounts' quota state.
type ShardView struct {
	snap *pebble.Snapshot
}

// ViewShard takes a view of the whole store; later writes do not show.
func (s *Store) ViewShard() *ShardView { return &ShardView{snap: s.db.NewSnapshot()} }

// Close releases the view.
func (v *ShardView) Close() error { return v.snap.Close() }

// ScanRaw calls fn for every pair under the raw prefix, in key order.
func (v *ShardView) ScanRaw(prefix []byte, fn func(k, v []byte) error) error {
	if err := checkRawKey(prefix); err != nil {
		return err
	}
	return scanPrefixIn(v.snap, prefix, func(k, val []byte) (bool, error) { return true, fn(k, val) })
}

// ScanAccount calls fn for every pair of account's quota state (grants, request log, keys'
// throttle state, record), in key order.
func (v *ShardView) ScanAccount(account string, fn func(k, v []byte) error) error {
	if err := validateLogAccount(account); err != nil {
		return err
	}
	for _, ns := range accountSpaces {
		err := scanPrefixIn(v.snap, dbKey(ns, account, "/"), func(k, val []byte) (bool, error) { return true, fn(k, val) })
		if err != nil {
			return fmt.Errorf("persistence: scan %s of %s: %w", ns, account, err)
		}
	}
	rec := dbKey(nsQuota, account)
	val, closer, err := v.snap.Get(rec)
	if err != nil {
		return mapNotFoundOK(err)
	}
	defer closer.Close()
	return fn(rec, val)
}

// mapNotFoundOK is nil for a missing key and err otherwise.
func mapNotFoundOK(err error) error {
	if errors.Is(err, pebble.ErrNotFound) {
		return nil
	}
	return err
}

// ShardContents names what of the store an account shard holds besides its raw namespace:
// its accounts (their quota state) and its video tasks.
type ShardContents struct {
	Accounts []string
	Tasks    []string
}

// ReplaceShard replaces an account shard's state in one synced batch: the raw namespace raw,
// the quota state of drop's accounts and drop's tasks (the shard's before) are deleted, then
// load puts the snapshot's pairs, each in raw, in an account's quota state or in a task. An
// error changes nothing.
func (s *Store) ReplaceShard(raw []byte, drop ShardContents, load func(put func(k, v []byte) error) error) error {
	if err := checkRawKey(raw); err != nil {
		return err
	}
	b := s.db.NewBatch()
	replaced := slices.Clone(drop.Accounts) // whose log dictionaries are read again after
	err := b.DeleteRange(raw, prefixUpper(raw), nil)
	for i := 0; err == nil && i < len(drop.Accounts); i++ {
		err = deleteAccountQuota(b, drop.Accounts[i])
	}
	for i := 0; err == nil && i < len(drop.Tasks); i++ {
		err = deleteTask(b, drop.Tasks[i])
	}
	if err == nil {
		err = load(func(k, v []byte) error {
			if !bytes.HasPrefix(k, raw) && !inAccountSpace(k) && !inTaskSpace(k) {
				return invalidf("key", "key %q is neither the shard's nor an account's quota state nor a task", k)
			}
			if acct, ok := bytes.CutPrefix(k, []byte(nsLogDict)); ok {
				if i := bytes.IndexByte(acct, '/'); i > 0 {
					replaced = append(replaced, string(acct[:i]))
				}
			}
			return b.Set(k, v, nil)
		})
	}
	if err != nil {
		b.Close()
		return fmt.Errorf("persistence: replace account shard: %w", err)
	}
	err = s.commit(b)
	s.dicts.forget(replaced)
	if err != nil {
		return fmt.Errorf("persistence: replace account shard: %w", err)
	}
	return nil
}

func deleteAccountQuota(b *pebble.Batch, account string) error {
	if err := validateLogAccount(account); err != nil {
		return err
	}
	for _, ns := range accountSpaces {
		p := dbKey(ns, account, "/")
		if err := b.DeleteRange(p, prefixUpper(p), nil); err != nil {
			return err
		}
	}
	return b.Delete(dbKey(nsQuota, account), nil)
}

func inAccountSpace(k []byte) bool {
	for _, ns := range append([]string{nsQuota}, accountSpaces...) {
		if bytes.HasPrefix(k, []byte(ns)) {
			return true
		}
	}
	return false
}

// PruneLog adds to the batch the deletion of up to limit (0: all) of account's request-log
// entries with Time < LogCutoff(before), and of their index pairs, as Store.PruneLog deletes
// them: how many, and whether older ones remain.
func (b *ShardBatch) PruneLog(account string, before int64, limit int) (int, bool, error) {
	if err := validateLogAccount(account); err != nil {
		return 0, false, err
	}
	return pruneAccountLog(b.b, b.b, account, before, limit)
}

// PutLog adds account's entries to the batch as PutQuota would write them (an Update writes
// what it logged so far before it prunes, so the prune sees the same log however the
// engine grouped the entries into Updates).
func (b *ShardBatch) PutLog(account string, entries []LogEntry) error {
	for i := range entries {
		if err := ValidateLogEntry(&entries[i]); err != nil {
			return fmt.Errorf("persistence: log of %s: %w", account, err)
		}
		if entries[i].AccountID != account {
			return fmt.Errorf("persistence: log of %s: %w: entry of account %q", account, ErrInvalid, entries[i].AccountID)
		}
		if err := b.enc.putLogEntry(b.b, &entries[i]); err != nil {
			return err
		}
	}
	return nil
}
