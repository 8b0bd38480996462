package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// leaderLog records what OnLeaderChange delivered on one node.
type leaderLog struct {
	mu     sync.Mutex
	events [][2]uint64 // (shard, leader)
}

func (l *leaderLog) record(shard, leader uint64) {
	l.mu.Lock()
	l.events = append(l.events, [2]uint64{shard, leader})
	l.mu.Unlock()
}

// last is the last leader reported for shard (0 when none was).
func (l *leaderLog) last(shard uint64) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.events) - 1; i >= 0; i-- {
		if l.events[i][0] == shard {
			return l.events[i][1]
		}
	}
	return 0
}

func TestTransferLeaderMovesTheLeaderAndEveryNodeHearsOfIt(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	logs := map[uint64]*leaderLog{}
	for id, node := range c.nodes {
		logs[id] = &leaderLog{}
		node.OnLeaderChange(logs[id].record)
	}
	from := c.leader(1, 5*time.Second)
	to := from%3 + 1
	asker := to%3 + 1 // neither the leader nor the target: the request is forwarded
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.nodes[asker].TransferLeader(ctx, 1, to); err != nil {
		t.Fatal(err)
	}
	for id, node := range c.nodes {
		testutil.WaitWithin(t, 5*time.Second, "leader change heard on every node", func() bool {
			l, ok := node.Leader(1)
			return ok && l == to && logs[id].last(1) == to
		})
	}
	// The new leader serves.
	if _, err := c.nodes[from].Propose(ctx, 1, c.cmd()); err != nil {
		t.Fatal(err)
	}
	// Transferring to the leader it already has is done at once.
	if err := c.nodes[from].TransferLeader(ctx, 1, to); err != nil {
		t.Fatal(err)
	}
}

func TestALeaderThatDiesIsReplacedAndCatchesUpOnRestartWithoutApplyingTwice(t *testing.T) {
	c := newTestCluster(t, 3, 1, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	proposed := map[uint64]uint64{}
	propose := func(nodes []uint64, n int) {
		t.Helper()
		for i := range n {
			for _, shard := range c.shards {
				node := c.nodes[nodes[i%len(nodes)]]
				if _, err := node.Propose(ctx, shard, c.cmd()); err != nil {
					t.Fatalf("propose on node %d to shard %d: %v", node.ID(), shard, err)
				}
				proposed[shard]++
			}
		}
	}
	propose([]uint64{1, 2, 3}, 60)

	// Put both shards' leadership on one node, then stop it.
	dead := c.leader(1, 5*time.Second)
	if err := c.nodes[dead].TransferLeader(ctx, 2, dead); err != nil {
		t.Fatal(err)
	}
	appliedAtStop := map[uint64]uint64{}
	for _, shard := range c.shards {
		appliedAtStop[shard] = c.sm(dead, shard).applied.Load()
	}
	var survivors []uint64
	for id := range c.nodes {
		if id != dead {
			survivors = append(survivors, id)
		}
	}
	stopped := time.Now()
	c.stop(dead)
	for _, shard := range c.shards {
		l := c.leader(shard, 5*time.Second)
		if l == dead {
			t.Fatalf("shard %d still led by the stopped node", shard)
		}
	}
	t.Logf("new leaders after %v", time.Since(stopped))

	// The survivors go on; enough entries that the leaders snapshot and compact past the
	// stopped node's log (SnapshotEntries 100).
	propose(survivors, 150)

	node := c.start(dead)
	for _, shard := range c.shards {
		deadline := time.Now().Add(20 * time.Second)
		for c.sm(dead, shard).count.Load() != proposed[shard] {
			if time.Now().After(deadline) {
				for id, n := range c.nodes {
					t.Logf("node %d: counter %d, status %+v", id, c.sm(id, shard).count.Load(), n.Status(ctx))
				}
				t.Fatalf("shard %d: the restarted node did not catch up within 20s", shard)
			}
			time.Sleep(10 * time.Millisecond)
		}
		sm := c.sm(dead, shard)
		t.Logf("shard %d: the restarted node opened at %d, recovered %d snapshots", shard, sm.opened.Load(), sm.recovered.Load())
		if sm.opened.Load() != appliedAtStop[shard] {
			t.Errorf("shard %d: Open read applied %d, the node had applied %d when stopped", shard, sm.opened.Load(), appliedAtStop[shard])
		}
		if r := sm.replays.Load(); r != 0 {
			t.Errorf("shard %d: %d entries applied twice after the restart", shard, r)
		}
		if n := readCount(t, node, shard); n != proposed[shard] {
			t.Errorf("shard %d: Read on the restarted node = %d, want %d", shard, n, proposed[shard])
		}
		for _, id := range survivors {
			if n := c.sm(id, shard).count.Load(); n != proposed[shard] {
				t.Errorf("shard %d: node %d counter = %d, want %d", shard, id, n, proposed[shard])
			}
		}
	}
}
