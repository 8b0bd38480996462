package engine

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/modelgate/modelgate/cluster"
)

// counterSM is the tests' state machine: a counter of distinct commands and the applied
// index, on disk in its own Pebble directory, written in one batch per Update as the real
// shards do. A command is its own idempotency key, as real commands carry one: Propose
// retries a try that timed out, which may have committed too, so the same command can be
// in the log twice; the second is answered with the first's result and not counted. For
// the tests it counts the entries it was handed at or below its applied index (the engine
// applying an entry twice, which must never happen) and remembers the applied index its
// last Open found.
type counterSM struct {
	dir string
	db  *pebble.DB

	count   atomic.Uint64
	applied atomic.Uint64

	opened    atomic.Uint64 // applied index Open read back
	replays   atomic.Uint64 // entries handed to Update at or below the applied index
	recovered atomic.Uint64 // snapshots recovered from
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
	b := s.db.NewBatch()
	inBatch := map[string][]byte{}
	for i := range entries {
		if entries[i].Index <= applied {
			s.replays.Add(1)
		}
		applied = entries[i].Index
		key := append([]byte("cmd/"), entries[i].Cmd...)
		if res, ok := inBatch[string(key)]; ok {
			entries[i].Result = res
			continue
		}
		res, closer, err := s.db.Get(key)
		switch {
		case err == nil:
			entries[i].Result = append([]byte(nil), res...)
			closer.Close()
			continue
		case !errors.Is(err, pebble.ErrNotFound):
			return err
		}
		count++
		entries[i].Result = u64(count)
		inBatch[string(key)] = entries[i].Result
		b.Set(key, entries[i].Result, nil)
	}
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

// SaveSnapshot writes every key and value of the captured state, each length-prefixed.
func (s *counterSM) SaveSnapshot(captured any, w io.Writer) error {
	snap := captured.(*pebble.Snapshot)
	defer snap.Close()
	it, err := snap.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	bw := bufio.NewWriter(w)
	for it.First(); it.Valid(); it.Next() {
		for _, field := range [][]byte{it.Key(), it.Value()} {
			bw.Write(binary.AppendUvarint(nil, uint64(len(field))))
			bw.Write(field)
		}
	}
	if err := it.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// RecoverFromSnapshot replaces the whole state with the snapshot's, in one batch.
func (s *counterSM) RecoverFromSnapshot(r io.Reader) error {
	br := bufio.NewReader(r)
	b := s.db.NewBatch()
	b.DeleteRange([]byte{0}, []byte{0xff}, nil)
	var fields [][]byte
	for {
		n, err := binary.ReadUvarint(br)
		if err == io.EOF && len(fields)%2 == 0 {
			break
		}
		if err != nil {
			return fmt.Errorf("counter snapshot: %w", err)
		}
		field := make([]byte, n)
		if _, err := io.ReadFull(br, field); err != nil {
			return fmt.Errorf("counter snapshot: %w", err)
		}
		if fields = append(fields, field); len(fields) == 2 {
			b.Set(fields[0], fields[1], nil)
			fields = fields[:0]
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return err
	}
	count, err := readUint(s.db, keyCount)
	if err != nil {
		return err
	}
	applied, err := readUint(s.db, keyApplied)
	if err != nil {
		return err
	}
	s.count.Store(count)
	s.applied.Store(applied)
	s.recovered.Add(1)
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
