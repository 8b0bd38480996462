package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/modelgate/modelgate/cluster"
)

// counterSM is the tests' state machine: a counter of applied entries and the applied index,
// on disk in its own Pebble directory, both written in one batch per Update as the real
// shards do. It counts, for the tests, the entries it was handed at or below its applied
// index (an entry applied twice) and the applied index its last Open found.
type counterSM struct {
	dir string
	db  *pebble.DB

	count   atomic.Uint64
	applied atomic.Uint64

	opened  atomic.Uint64 // applied index Open read back
	replays atomic.Uint64 // entries handed to Update at or below the applied index
}

var _ cluster.StateMachine = (*counterSM)(nil)

var (
	keyCount   = []byte("count")
	keyApplied = []byte("applied")
)

func (s *counterSM) Open() (uint64, error) {
	db, err := pebble.Open(s.dir, &pebble.Options{Logger: quietPebble{}})
	if err != nil {
		return 0, err
	}
	s.db = db
	count, err := readUint(db, keyCount)
	if err != nil {
		return 0, err
	}
	applied, err := readUint(db, keyApplied)
	if err != nil {
		return 0, err
	}
	s.count.Store(count)
	s.applied.Store(applied)
	s.opened.Store(applied)
	return applied, nil
}

func readUint(r pebble.Reader, key []byte) (uint64, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	return binary.BigEndian.Uint64(v), nil
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

func (s *counterSM) Update(entries []cluster.Entry) error {
	count, applied := s.count.Load(), s.applied.Load()
	for i := range entries {
		if entries[i].Index <= applied {
			s.replays.Add(1)
		}
		count++
		applied = entries[i].Index
		entries[i].Result = u64(count)
	}
	b := s.db.NewBatch()
	b.Set(keyCount, u64(count), nil)
	b.Set(keyApplied, u64(applied), nil)
	// No fsync per batch: Sync makes it durable before the engine compacts its log, and a
	// crash before that replays from the applied index found on disk.
	if err := b.Commit(pebble.NoSync); err != nil {
		return err
	}
	s.count.Store(count)
	s.applied.Store(applied)
	return nil
}

func (s *counterSM) Lookup([]byte) ([]byte, error) { return u64(s.count.Load()), nil }

func (s *counterSM) Sync() error { return s.db.LogData(nil, pebble.Sync) }

func (s *counterSM) PrepareSnapshot() (any, error) { return s.db.NewSnapshot(), nil }

func (s *counterSM) SaveSnapshot(captured any, w io.Writer) error {
	snap := captured.(*pebble.Snapshot)
	defer snap.Close()
	count, err := readUint(snap, keyCount)
	if err != nil {
		return err
	}
	applied, err := readUint(snap, keyApplied)
	if err != nil {
		return err
	}
	_, err = w.Write(append(u64(count), u64(applied)...))
	return err
}

func (s *counterSM) RecoverFromSnapshot(r io.Reader) error {
	var buf [16]byte
	if _, err := io.ReadFull(r, buf[:]); err != nil {
		return fmt.Errorf("counter snapshot: %w", err)
	}
	b := s.db.NewBatch()
	b.Set(keyCount, buf[:8], nil)
	b.Set(keyApplied, buf[8:], nil)
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	s.count.Store(binary.BigEndian.Uint64(buf[:8]))
	s.applied.Store(binary.BigEndian.Uint64(buf[8:]))
	return nil
}

func (s *counterSM) Close() error {
	if s.db == nil {
		return nil
	}
	return s.db.Close()
}

// quietPebble drops Pebble's notice of every Open.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)      {}
func (quietPebble) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (quietPebble) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
