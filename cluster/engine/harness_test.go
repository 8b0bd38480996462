package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/cluster/enginetest"
)

// testCluster is n real nodes on loopback ports in this process, with mutual TLS from
// certificates made by cluster/certs, each running the same shards over counterSMs.
type testCluster struct {
	t       *testing.T
	certDir string // the layout's directory (enginetest)
	shards  []uint64
	cfgs    map[uint64]Config // by node id
	initial map[uint64]string
	nodes   map[uint64]*Node

	mu  sync.Mutex
	sms map[[2]uint64]*counterSM // (node, shard) → the running instance

	lastCmd atomic.Uint64
}

// cmd is a new command: a unique id, which counterSM counts once however often it is
// proposed.
func (c *testCluster) cmd() []byte { return u64(c.lastCmd.Add(1)) }

// testEngine is short ticks so elections and failover take well under a second, and a
// small snapshot cadence so catching up from a snapshot happens within a test.
func testEngine(c Config) Config {
	c.RTTMillisecond = 10
	c.ElectionRTT = 10
	c.HeartbeatRTT = 1
	c.SnapshotEntries = 100
	c.CompactionOverhead = 50
	c.LogDBShards = 1
	return c
}

func newTestCluster(t *testing.T, n int, shards ...uint64) *testCluster {
	t.Helper()
	return newTestClusterWith(t, n, nil, shards...)
}

// newTestClusterWith is newTestCluster with configure run on every node's config (addresses
// chosen) before any node starts.
func newTestClusterWith(t *testing.T, n int, configure func(cfgs map[uint64]Config), shards ...uint64) *testCluster {
	t.Helper()
	c := &testCluster{
		t: t, certDir: t.TempDir(), shards: shards,
		cfgs: map[uint64]Config{}, initial: map[uint64]string{}, nodes: map[uint64]*Node{},
		sms: map[[2]uint64]*counterSM{},
	}
	layout, err := enginetest.Layout(c.certDir, n, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range layout {
		cfg := testEngine(configOf(node))
		c.cfgs[node.ID] = cfg
		c.initial[node.ID] = cfg.RaftAddr
	}
	if configure != nil {
		configure(c.cfgs)
	}
	for id := range c.cfgs {
		c.start(id)
	}
	t.Cleanup(func() {
		for _, node := range c.nodes {
			node.Close()
		}
	})
	return c
}

// newJoiner makes the config of a node id that joins later, with a certificate from the
// cluster's CA; nothing runs yet.
func (c *testCluster) newJoiner(id uint64) Config {
	c.t.Helper()
	node, err := enginetest.Joiner(c.certDir, id)
	if err != nil {
		c.t.Fatal(err)
	}
	cfg := testEngine(configOf(node))
	c.cfgs[id] = cfg
	return cfg
}

// configOf is the engine config of a node of the layout.
func configOf(n enginetest.Node) Config {
	return Config{NodeID: n.ID, RaftAddr: n.RaftAddr, DataDir: n.DataDir, CAFile: n.CAFile, CertFile: n.CertFile, KeyFile: n.KeyFile}
}

// startJoined starts node id's engine (again) with shard as it joined: non-voting.
func (c *testCluster) startJoined(id, shard uint64) *Node {
	c.t.Helper()
	node, err := New(c.cfgs[id])
	if err != nil {
		c.t.Fatal(err)
	}
	c.nodes[id] = node
	if err := node.StartShard(shard, nil, true, true, c.factory(id)); err != nil {
		c.t.Fatal(err)
	}
	return node
}

// start starts node id (again, on the same directories) with every shard.
func (c *testCluster) start(id uint64) *Node {
	c.t.Helper()
	node, err := New(c.cfgs[id])
	if err != nil {
		c.t.Fatal(err)
	}
	for _, shard := range c.shards {
		if err := node.StartShard(shard, c.initial, false, false, c.factory(id)); err != nil {
			c.t.Fatal(err)
		}
	}
	c.nodes[id] = node
	return node
}

func (c *testCluster) factory(id uint64) func(shard, replica uint64) cluster.StateMachine {
	return func(shard, replica uint64) cluster.StateMachine {
		if replica != id {
			c.t.Errorf("node %d made a replica %d", id, replica)
		}
		sm := &counterSM{dir: filepath.Join(c.cfgs[id].DataDir, "sm", fmt.Sprint(shard))}
		c.mu.Lock()
		c.sms[[2]uint64{id, shard}] = sm
		c.mu.Unlock()
		return sm
	}
}

func (c *testCluster) sm(node, shard uint64) *counterSM {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sms[[2]uint64{node, shard}]
}

// stop closes node id, as a crash would leave its directories.
func (c *testCluster) stop(id uint64) {
	c.nodes[id].Close()
	delete(c.nodes, id)
}

// leader waits until every running node agrees on shard's leader, and returns it.
func (c *testCluster) leader(shard uint64, within time.Duration) uint64 {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var seen uint64
		agree := true
		for _, node := range c.nodes {
			l, ok := node.Leader(shard)
			if !ok || (seen != 0 && l != seen) {
				agree = false
				break
			}
			seen = l
		}
		if agree && seen != 0 {
			if _, running := c.nodes[seen]; running {
				return seen
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no leader of shard %d agreed within %v", shard, within)
	return 0
}

func readCount(t *testing.T, node *Node, shard uint64) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v, err := node.Read(ctx, shard, nil)
	if err != nil {
		t.Fatalf("read shard %d on node %d: %v", shard, node.ID(), err)
	}
	return decodeU64(v)
}

func decodeU64(b []byte) uint64 {
	if len(b) != 8 {
		return 1<<64 - 1
	}
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}
