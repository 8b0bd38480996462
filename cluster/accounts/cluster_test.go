package accounts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/cluster/engine"
	"github.com/modelgate/modelgate/cluster/enginetest"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
)

// testCluster is three engine nodes on loopback ports in this process (mutual TLS from
// cluster/certs), each with its own Pebble store, the account shards first..first+shards-1
// over StateMachines, and a quota.Service over an Owner: what a node of the cluster runs.
type testCluster struct {
	t      *testing.T
	shards []uint64
	nodes  []*testNode
	clock  *testutil.Clock
}

type testNode struct {
	id    uint64
	node  *engine.Node
	store *persistence.Store
	owner *Owner
	quota *quota.Service

	mu      sync.Mutex
	sms     map[uint64]*StateMachine
	stopped atomic.Bool // set before its engine closes (what other nodes' goroutines read)
}

const firstShard = 1

func newTestCluster(t *testing.T, shards int, now func() time.Time) *testCluster {
	t.Helper()
	return newTestClusterOver(t, shards, now, nil)
}

// newTestClusterOver is newTestCluster with each node's Owner proposing through
// over(node id, its engine) when over is set.
func newTestClusterOver(t *testing.T, shards int, now func() time.Time, over func(uint64, cluster.Replicator) cluster.Replicator) *testCluster {
	t.Helper()
	certDir := t.TempDir()
	c := &testCluster{t: t}
	for i := range shards {
		c.shards = append(c.shards, firstShard+uint64(i))
	}
	layout, err := enginetest.Layout(certDir, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	initial := map[uint64]string{}
	cfgs := map[uint64]engine.Config{}
	for _, node := range layout {
		cfgs[node.ID] = engine.Config{
			NodeID: node.ID, RaftAddr: node.RaftAddr, DataDir: node.DataDir,
			RTTMillisecond: 10, ElectionRTT: 20, HeartbeatRTT: 2, SnapshotEntries: 1000, CompactionOverhead: 500, LogDBShards: 1,
			CAFile: node.CAFile, CertFile: node.CertFile, KeyFile: node.KeyFile,
		}
		initial[node.ID] = node.RaftAddr
	}
	for id := uint64(1); id <= 3; id++ {
		n := &testNode{id: id, sms: map[uint64]*StateMachine{}}
		n.store, _ = openStore(t, "")
		node, err := engine.New(cfgs[id])
		if err != nil {
			t.Fatal(err)
		}
		n.node = node
		for _, shard := range c.shards {
			err := node.StartShard(shard, initial, false, false, func(shard, _ uint64) cluster.StateMachine {
				sm := NewStateMachine(n.store, shard)
				n.mu.Lock()
				n.sms[shard] = sm
				n.mu.Unlock()
				return sm
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		var rep cluster.Replicator = node
		if over != nil {
			rep = over(id, node)
		}
		n.owner = NewOwner(rep, firstShard, shards)
		n.owner.LeadAdmissions(id, n.replica, forwardFunc(c.forward))
		n.quota = quota.NewServiceOver(n.owner, quota.Config{Now: now})
		c.nodes = append(c.nodes, n)
	}
	t.Cleanup(func() {
		for _, n := range c.running() {
			n.owner.Close()
			n.node.Close()
		}
	})
	for _, shard := range c.shards {
		c.leader(shard)
	}
	return c
}

// forwardFunc is a Forward that is a function.
type forwardFunc func(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error)

func (f forwardFunc) Step(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error) {
	return f(ctx, node, shard, cmd)
}

// Read implements Forward: every node here holds every shard, so none reads elsewhere.
func (f forwardFunc) Read(context.Context, uint64, uint64, []byte) ([]byte, error) {
	return nil, errors.New("every node here holds every shard")
}

// forward hands a step to node's Owner in this process, as its internal listener would;
// a stopped node is a connection refused.
func (c *testCluster) forward(ctx context.Context, node, shard uint64, cmd []byte) ([]byte, error) {
	for _, n := range c.nodes {
		if n.id == node && !n.stopped.Load() {
			return n.owner.Lead(ctx, shard, cmd)
		}
	}
	return nil, fmt.Errorf("node %d: connection refused", node)
}

// replica is n's state machine of shard.
func (n *testNode) replica(shard uint64) *StateMachine {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.sms[shard]
}

// leader waits until the running nodes agree on shard's leader (one of them).
func (c *testCluster) leader(shard uint64) *testNode {
	c.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var seen uint64
		agree := true
		for _, n := range c.running() {
			l, ok := n.node.Leader(shard)
			if !ok || seen != 0 && l != seen {
				agree = false
				break
			}
			seen = l
		}
		for _, n := range c.running() {
			if agree && n.id == seen {
				return n
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.t.Fatalf("no leader of shard %d agreed on", shard)
	return nil
}

func (c *testCluster) running() []*testNode {
	var out []*testNode
	for _, n := range c.nodes {
		if n.node != nil {
			out = append(out, n)
		}
	}
	return out
}

// stop closes node n's engine (its replicas stop at once, as in a crash of the process;
// its store stays for the checks).
func (c *testCluster) stop(n *testNode) {
	n.stopped.Store(true)
	n.owner.Close()
	n.node.Close()
	n.node = nil
}

// converged waits until every running node has applied the same entries of every shard
// and holds byte-identical shard state, and returns one node's store.
func (c *testCluster) converged() {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, shard := range c.shards {
		for {
			var snaps [][]byte
			for _, n := range c.running() {
				n.mu.Lock()
				sm := n.sms[shard]
				n.mu.Unlock()
				snaps = append(snaps, snapshot(c.t, sm))
			}
			same := true
			for _, s := range snaps[1:] {
				same = same && bytes.Equal(s, snaps[0])
			}
			if same {
				break
			}
			if time.Now().After(deadline) {
				c.t.Fatalf("shard %d: replicas differ after 20 s", shard)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
