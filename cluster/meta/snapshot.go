package meta

import (
	"fmt"
	"io"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// A snapshot is the whole metadata key space (accounts, e-mail and order indexes, keys, the
// key hash index, the per-account key index) and the state machine's own keys (the applied
// index, the remembered command ids), as a stream of pairs in key order (cluster.WritePairs).
const snapshotMagic = "modelgate metadata snapshot v1"

// PrepareSnapshot captures the state as of the last applied entry (a Pebble snapshot, which
// later Updates do not change). SaveSnapshot releases it.
func (m *StateMachine) PrepareSnapshot() (any, error) {
	v, err := m.store.ViewMeta(rawPrefixes...)
	if err != nil {
		return nil, fmt.Errorf("meta: prepare snapshot: %w", err)
	}
	return v, nil
}

// SaveSnapshot writes the state captured by PrepareSnapshot to w, then releases it.
func (m *StateMachine) SaveSnapshot(captured any, w io.Writer) error {
	v, ok := captured.(*persistence.MetaView)
	if !ok {
		return fmt.Errorf("meta: save snapshot: captured state is a %T, not PrepareSnapshot's", captured)
	}
	defer v.Close()
	if err := cluster.WritePairs(w, snapshotMagic, v.Scan); err != nil {
		return fmt.Errorf("meta: save snapshot: %w", err)
	}
	return nil
}

// RecoverFromSnapshot replaces the state with the snapshot read from r: afterwards the
// metadata key space and the state machine's keys are exactly the snapshot's (a snapshot
// that is cut off or malformed changes nothing). The OnRecovered hooks run after.
func (m *StateMachine) RecoverFromSnapshot(r io.Reader) error {
	pairs, err := cluster.ReadPairs(r, snapshotMagic)
	if err != nil {
		return fmt.Errorf("meta: recover: not a metadata snapshot: %w", err)
	}
	err = m.store.ReplaceMeta(rawPrefixes, pairs.Each)
	if err != nil {
		return fmt.Errorf("meta: recover: %w", err)
	}
	applied, err := m.Open()
	if err != nil {
		return err
	}
	m.mu.Lock()
	hooks := m.onRecover
	m.mu.Unlock()
	for _, f := range hooks {
		f(applied)
	}
	return nil
}
