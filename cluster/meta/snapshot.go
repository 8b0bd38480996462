package meta

import (
	"bufio"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/modelgate/modelgate/persistence"
)

// A snapshot is the whole metadata key space (accounts, e-mail and order indexes, keys, the
// key hash index, the per-account key index) and the state machine's own keys (the applied
// index, the remembered command ids), as a msgpack stream:
//
//	snapshotMagic, then key and value (bin) per pair in key order, then nil
//
// The closing nil tells a complete snapshot from a cut-off one.
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
	bw := bufio.NewWriter(w)
	enc := msgpack.NewEncoder(bw)
	if err := enc.EncodeString(snapshotMagic); err != nil {
		return fmt.Errorf("meta: save snapshot: %w", err)
	}
	err := v.Scan(func(k, val []byte) error {
		if err := enc.EncodeBytes(k); err != nil {
			return err
		}
		return enc.EncodeBytes(val)
	})
	if err == nil {
		err = enc.EncodeNil()
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("meta: save snapshot: %w", err)
	}
	return nil
}

// RecoverFromSnapshot replaces the state with the snapshot read from r: afterwards the
// metadata key space and the state machine's keys are exactly the snapshot's (a snapshot
// that is cut off or malformed changes nothing). The OnRecovered hooks run after.
func (m *StateMachine) RecoverFromSnapshot(r io.Reader) error {
	dec := msgpack.NewDecoder(bufio.NewReader(r))
	magic, err := dec.DecodeString()
	if err != nil || magic != snapshotMagic {
		return fmt.Errorf("meta: recover: not a metadata snapshot (%q, %v)", magic, err)
	}
	err = m.store.ReplaceMeta(rawPrefixes, func(put func(k, v []byte) error) error {
		for {
			code, err := dec.PeekCode()
			if err != nil {
				return fmt.Errorf("snapshot cut off: %w", err)
			}
			if code == msgpcode.Nil {
				return nil
			}
			k, err := dec.DecodeBytes()
			if err != nil {
				return err
			}
			v, err := dec.DecodeBytes()
			if err != nil {
				return err
			}
			if err := put(k, v); err != nil {
				return err
			}
		}
	})
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
