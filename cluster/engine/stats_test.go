package engine

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Each node counts the proposals made on it, those it forwarded to another node's leader,
// its reads, and times each one; its replicas' progress is read locally.
func TestStatsCountWhatEachNodeDid(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	leader := c.leader(1, 10*time.Second)
	follower := leader%3 + 1
	var mu sync.Mutex
	timed := map[uint64]map[string]int{}
	for id, node := range c.nodes {
		node.ObserveLatency(func(op string, d time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if timed[id] == nil {
				timed[id] = map[string]int{}
			}
			if d > 0 {
				timed[id][op]++
			}
		})
	}
	before := map[uint64]Stats{}
	for id, node := range c.nodes {
		before[id] = node.Stats()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	propose := func(id uint64, n int) {
		for range n {
			if _, err := c.nodes[id].Propose(ctx, 1, c.cmd()); err != nil {
				t.Fatal(err)
			}
		}
	}
	propose(leader, 3)
	propose(follower, 2)
	if _, err := c.nodes[follower].Read(ctx, 1, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.nodes[follower].CaughtUp(ctx, 1); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		node                        uint64
		proposals, forwarded, reads uint64
	}{
		{leader, 3, 0, 0},
		{follower, 2, 2, 2},
	}
	for _, tc := range cases {
		got := c.nodes[tc.node].Stats()
		b := before[tc.node]
		if d := got.Proposals - b.Proposals; d != tc.proposals {
			t.Errorf("node %d: %d proposals counted, want %d", tc.node, d, tc.proposals)
		}
		if d := got.ProposalsForwarded - b.ProposalsForwarded; d != tc.forwarded {
			t.Errorf("node %d: %d forwarded, want %d", tc.node, d, tc.forwarded)
		}
		if d := got.Reads - b.Reads; d != tc.reads {
			t.Errorf("node %d: %d reads, want %d", tc.node, d, tc.reads)
		}
		if got.ProposalsFailed != b.ProposalsFailed || got.ReadsFailed != b.ReadsFailed {
			t.Errorf("node %d: failures counted: %+v", tc.node, got)
		}
		if got.LeaderChanges == 0 {
			t.Errorf("node %d heard of no leader change", tc.node)
		}
		mu.Lock()
		if want := map[string]int{"propose": int(tc.proposals), "read": int(tc.reads)}; timed[tc.node]["propose"] != want["propose"] || timed[tc.node]["read"] != want["read"] {
			t.Errorf("node %d timed %v, want %v", tc.node, timed[tc.node], want)
		}
		mu.Unlock()
	}

	// The follower's replica has applied what it read after: the five commands and more.
	prog := c.nodes[follower].Progress()
	if len(prog) != 1 || prog[0].Shard != 1 || prog[0].Leader != leader || prog[0].Applied < 5 || prog[0].Applied > prog[0].LastIndex {
		t.Errorf("follower's progress = %+v, want shard 1 led by %d with at least 5 applied", prog, leader)
	}
}
