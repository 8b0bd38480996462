package node

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
)

// heldShardsKey is where a node keeps the account shards it runs (local to the node, in
// no shard): a restart starts the same ones, including those `cluster rebalance` moved to
// it and without those it moved away.
var heldShardsKey = []byte("cluster-node/held-shards")

// shardSet is the account shards this node runs a replica of, each with how it started:
// founded (a voter placed at init, started with the initial voters) or joined (added to a
// running shard, started with join). A shard moved back to a node that once founded it is
// joined: its old replica's data is gone, and starting it as a founder would found it anew.
type shardSet struct {
	store *persistence.Store
	mu    sync.RWMutex
	m     map[uint64]bool // shard → joined
}

// loadShardSet reads the set the node kept; stored is false for a node that never kept one
// (its first start, or a data directory from before moves were built).
func loadShardSet(store *persistence.Store) (s *shardSet, stored bool, err error) {
	s = &shardSet{store: store, m: map[uint64]bool{}}
	b, err := store.GetRaw(heldShardsKey)
	switch {
	case errors.Is(err, persistence.ErrNotFound):
		return s, false, nil
	case err != nil:
		return nil, false, err
	}
	if err := msgpack.Unmarshal(b, &s.m); err != nil {
		return nil, false, fmt.Errorf("the account shards this node runs (%s): %w", heldShardsKey, err)
	}
	return s, true, nil
}

func (s *shardSet) has(shard uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	_, ok := s.m[shard]
	return ok
}

// joined reports whether shard started here as a joiner (false for a founder or none).
func (s *shardSet) joined(shard uint64) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.m[shard]
}

func (s *shardSet) list() []uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.m))
}

// put records shard as run here (joined: started as a joiner), or, remove, as not.
func (s *shardSet) put(shard uint64, joined, remove bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if remove {
		delete(s.m, shard)
	} else {
		s.m[shard] = joined
	}
	b, err := msgpack.Marshal(s.m)
	if err != nil {
		return err
	}
	return s.store.SetRaw(heldShardsKey, b)
}
