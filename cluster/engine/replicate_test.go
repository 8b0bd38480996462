package engine

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestProposalsFromEveryNodeAreAppliedOnceOnEveryReplica(t *testing.T) {
	c := newTestCluster(t, 3, 1, 2)
	const workers, each = 24, 25 // 600 proposals
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	var mu sync.Mutex
	results := map[uint64]map[uint64]int{1: {}, 2: {}} // shard → result → times
	var wg sync.WaitGroup
	for w := range workers {
		node := c.nodes[uint64(w%3)+1]
		shard := uint64(w%2) + 1
		wg.Go(func() {
			for range each {
				res, err := node.Propose(ctx, shard, c.cmd())
				if err != nil {
					t.Errorf("propose on node %d to shard %d: %v", node.ID(), shard, err)
					return
				}
				mu.Lock()
				results[shard][decodeU64(res)]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	perShard := uint64(workers / 2 * each)
	for shard, got := range results {
		// Each proposal saw its own count: 1..300, each once.
		for v := uint64(1); v <= perShard; v++ {
			if got[v] != 1 {
				t.Errorf("shard %d: result %d returned %d times", shard, v, got[v])
			}
		}
		if uint64(len(got)) != perShard {
			t.Errorf("shard %d: %d distinct results, want %d", shard, len(got), perShard)
		}
		for id, node := range c.nodes {
			if n := readCount(t, node, shard); n != perShard {
				t.Errorf("Read of shard %d on node %d = %d, want %d", shard, id, n, perShard)
			}
			sm := c.sm(id, shard)
			if n := sm.count.Load(); n != perShard {
				t.Errorf("node %d shard %d counter = %d, want %d", id, shard, n, perShard)
			}
			if r := sm.replays.Load(); r != 0 {
				t.Errorf("node %d shard %d applied %d entries twice", id, shard, r)
			}
		}
	}
	for id, node := range c.nodes {
		st := node.Status(ctx)
		if len(st) != 2 || st[0].Shard != 1 || st[1].Shard != 2 {
			t.Fatalf("node %d status shards: %+v", id, st)
		}
		for _, s := range st {
			if !s.MembersConfirmed || len(s.Voting) != 3 || len(s.NonVoting) != 0 || s.Leader == 0 || s.Term == 0 {
				t.Errorf("node %d status %+v", id, s)
			}
			if s.Applied != c.sm(id, s.Shard).applied.Load() || s.LastIndex < s.Applied || s.Unapplied() != 0 {
				t.Errorf("node %d shard %d: status applied %d last index %d, state machine applied %d",
					id, s.Shard, s.Applied, s.LastIndex, c.sm(id, s.Shard).applied.Load())
			}
		}
	}
}
