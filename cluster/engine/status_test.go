package engine

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestStatusOfAQuietShardShowsNoLag: entries that never reach Update (the
// founding members' membership changes, each new leader's empty entry) count as applied,
// so a healthy shard with no commands, or idle after some, shows every replica at the log's
// last index with lag 0, after a leader change as well.
func TestStatusOfAQuietShardShowsNoLag(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	settled := func(step string, commands uint64) {
		t.Helper()
		why := "not tried"
		for deadline := time.Now().Add(5 * time.Second); why != "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			why = lagging(ctx, c)
		}
		if why != "" {
			t.Fatalf("%s: not every replica at the same last index with lag 0 in 5 s: %s", step, why)
		}
		for id := range c.nodes {
			if n := c.sm(id, 1).count.Load(); n != commands {
				t.Errorf("%s: node %d applied %d commands, want %d", step, id, n, commands)
			}
		}
	}

	leader := c.leader(1, 10*time.Second)
	settled("right after the start", 0)

	for range 3 {
		if _, err := c.nodes[leader].Propose(ctx, 1, c.cmd()); err != nil {
			t.Fatal(err)
		}
	}
	settled("after three commands", 3)

	to := leader%3 + 1
	if err := c.nodes[leader].TransferLeader(ctx, 1, to); err != nil {
		t.Fatal(err)
	}
	settled("after a leader change", 3)
}

// lagging is "" when every node's replica of shard 1 has applied its whole log and all are
// at the same index, else what is not.
func lagging(ctx context.Context, c *testCluster) string {
	var first uint64
	for id, node := range c.nodes {
		st := node.Status(ctx)
		if len(st) != 1 {
			return fmt.Sprintf("node %d: status %+v", id, st)
		}
		s := st[0]
		if s.Applied == 0 || s.Applied != s.LastIndex || s.Unapplied() != 0 || (first != 0 && s.Applied != first) {
			return fmt.Sprintf("node %d: applied %d last index %d (another node: %d)", id, s.Applied, s.LastIndex, first)
		}
		first = s.Applied
	}
	return ""
}
