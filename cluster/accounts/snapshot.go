package accounts

import (
	"bytes"
	"fmt"
	"io"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// A snapshot is the shard's raw namespace (applied index, accounts, remembered ids) and the
// quota state of each of its accounts as the rest of the node reads it (grants, request
// log, keys' throttle state, record), as a stream of pairs (cluster.WritePairs): the raw
// namespace first in key order, then each account's state, accounts in order, then each
// of its video tasks (record and task-open entry), tasks in order.
const snapshotMagic = "modelgate account shard snapshot v1"

// PrepareSnapshot captures the state as of the last applied entry (a Pebble snapshot, which
// later Updates do not change). SaveSnapshot releases it.
func (m *StateMachine) PrepareSnapshot() (any, error) { return m.store.ViewShard(), nil }

// SaveSnapshot writes the state captured by PrepareSnapshot to w, then releases it.
func (m *StateMachine) SaveSnapshot(captured any, w io.Writer) error {
	v, ok := captured.(*persistence.ShardView)
	if !ok {
		return fmt.Errorf("accounts: save snapshot: captured state is a %T, not PrepareSnapshot's", captured)
	}
	defer v.Close()
	if err := cluster.WritePairs(w, snapshotMagic, func(pair func(k, v []byte) error) error { return m.scan(v, pair) }); err != nil {
		return fmt.Errorf("accounts: shard %d: save snapshot: %w", m.shard, err)
	}
	return nil
}

// scan calls fn for every pair of the shard's state in the view, in snapshot order.
func (m *StateMachine) scan(v *persistence.ShardView, fn func(k, v []byte) error) error {
	accts, err := m.accounts(v)
	if err != nil {
		return err
	}
	if err := v.ScanRaw(m.ns, fn); err != nil {
		return err
	}
	for _, a := range accts {
		if err := v.ScanAccount(a, fn); err != nil {
			return err
		}
	}
	tasks, err := m.taskIDs(v)
	if err != nil {
		return err
	}
	for _, id := range tasks {
		if err := v.ScanTask(id, fn); err != nil {
			return err
		}
	}
	return nil
}

// accounts are the shard's accounts in the view, in order.
func (m *StateMachine) accounts(v *persistence.ShardView) ([]string, error) {
	return m.names(v, "acct/")
}

// taskIDs are the shard's video tasks in the view, in order.
func (m *StateMachine) taskIDs(v *persistence.ShardView) ([]string, error) {
	return m.names(v, "task/")
}

// names are the key suffixes under the shard's sub-namespace sub in the view, in order.
func (m *StateMachine) names(v *persistence.ShardView, sub string) ([]string, error) {
	prefix := m.key(sub)
	var out []string
	err := v.ScanRaw(prefix, func(k, _ []byte) error {
		out = append(out, string(k[len(prefix):]))
		return nil
	})
	return out, err
}

// RecoverFromSnapshot replaces the shard's state with the snapshot read from r: afterwards
// the shard's namespace and its accounts' quota state are exactly the snapshot's (a
// snapshot cut off or malformed changes nothing).
func (m *StateMachine) RecoverFromSnapshot(r io.Reader) error {
	pairs, err := cluster.ReadPairs(r, snapshotMagic)
	if err != nil {
		return fmt.Errorf("accounts: shard %d: recover: not an account shard snapshot: %w", m.shard, err)
	}
	view := m.store.ViewShard()
	var drop persistence.ShardContents
	drop.Accounts, err = m.accounts(view)
	if err == nil {
		drop.Tasks, err = m.taskIDs(view)
	}
	view.Close()
	if err != nil {
		return fmt.Errorf("accounts: shard %d: recover: %w", m.shard, err)
	}
	err = m.store.ReplaceShard(m.ns, drop, func(put func(k, v []byte) error) error {
		return pairs.Each(func(k, v []byte) error {
			if bytes.HasPrefix(k, []byte("acctshard/")) && !bytes.HasPrefix(k, m.ns) {
				return fmt.Errorf("key %q belongs to another shard", k)
			}
			return put(k, v)
		})
	})
	if err != nil {
		return fmt.Errorf("accounts: shard %d: recover: %w", m.shard, err)
	}
	_, err = m.Open()
	return err
}
