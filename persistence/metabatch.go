package persistence

import (
	"fmt"

	"github.com/cockroachdb/pebble/v2"
)

// The metadata writes (accounts and keys) come in two halves, so that a cluster can replicate
// them (cluster/meta):
//
//   - a proposer half (Store.PrepareAccount, PreparePlan, PrepareKey, PrepareImport,
//     PrepareRevoke) decides everything that takes a clock, randomness or this node's view:
//     validation, ids, the secret and its hash, timestamps, the creation order, the e-mail
//     pre-check. It returns a command value (NewAccount, PlanChange, NewKey, KeyRevocation)
//     and writes nothing;
//   - an apply half (the MetaBatch methods) writes that value into a batch reading nothing but
//     the store through the batch, and re-checks what must be unique, so replicas applying the
//     same values in the same order end with the same bytes and give the same answers. A
//     refusal (an *Error or *EmailTakenError) writes nothing, so the batch stays usable for
//     the next command; any other error means the batch must be dropped.
//
// The single node runs both halves in sequence under its write lock (s.mu), which is why its
// apply half never sees its own proposer's checks fail.

// MetaBatch is one atomic change to the metadata. It reads through to the store and sees
// its own writes, so several commands applied to one batch behave as if each were committed
// alone.
type MetaBatch struct {
	rawBatch
	accounts []string // the accounts whose records it wrote (putAccount)
}

// rawBatch is an indexed batch with the raw accessors a replicated state machine keeps its
// own keys with (MetaBatch, ShardBatch).
type rawBatch struct {
	b   *pebble.Batch
	raw uint32 // raw writes in b
}

// UpdateMeta runs fn over a fresh metadata batch and commits what it wrote in one synced
// batch, under the store's write lock (so no single-node write interleaves). An error from
// fn drops the batch and is returned as it is.
func (s *Store) UpdateMeta(fn func(*MetaBatch) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.updateMetaLocked(fn)
}

// updateMetaLocked is UpdateMeta for a caller holding s.mu. A batch fn left empty is not
// committed, so a change to what is already stored succeeds even on a full disk, as it did
// before writes had two halves.
func (s *Store) updateMetaLocked(fn func(*MetaBatch) error) error {
	m := &MetaBatch{rawBatch: rawBatch{b: s.db.NewIndexedBatch()}}
	if err := fn(m); err != nil {
		m.b.Close()
		return err
	}
	if m.b.Empty() {
		m.b.Close()
		return nil
	}
	// The cached records of what it wrote go before UpdateMeta returns; after a failed
	// commit too (the disk's state is what the next read finds).
	defer s.accounts.drop(false, m.accounts...)
	if m.b.Count() > m.raw {
		defer s.keys.clear() // a key, or its account's disabled mark, may have changed
	}
	if err := s.commit(m.b); err != nil {
		return fmt.Errorf("persistence: commit metadata: %w", err)
	}
	return nil
}

// GetRaw returns a copy of the value at key as the batch sees it; a missing key is
// ErrNotFound. Keys are checked as Store.GetRaw checks them: never this package's own.
func (m *rawBatch) GetRaw(key []byte) ([]byte, error) { return getRawIn(m.b, key) }

// SetRaw adds value at key to the batch.
func (m *rawBatch) SetRaw(key, value []byte) error {
	if err := checkRawKey(key); err != nil {
		return err
	}
	m.raw++
	return m.b.Set(key, value, nil)
}

// DeleteRaw adds the removal of key to the batch.
func (m *rawBatch) DeleteRaw(key []byte) error {
	if err := checkRawKey(key); err != nil {
		return err
	}
	m.raw++
	return m.b.Delete(key, nil)
}

// ScanRaw calls fn for every key in [lower, upper) as the batch sees it, in order, until fn
// returns false or an error; k and v are valid only during the call. Both bounds must be
// raw keys.
func (m *rawBatch) ScanRaw(lower, upper []byte, fn func(k, v []byte) (bool, error)) error {
	for _, k := range [][]byte{lower, upper} {
		if err := checkRawKey(k); err != nil {
			return err
		}
	}
	return scanIn(m.b, lower, upper, fn)
}
