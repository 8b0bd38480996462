// Package engine is the Raft engine behind cluster.Replicator: one dragonboat NodeHost per
// node, one Raft group per shard, node-to-node traffic over mutual TLS (docs/cluster.md).
package engine

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/lni/dragonboat/v4"

	"github.com/modelgate/modelgate/cluster"
)

// Node is this process's member of the cluster: it runs the replicas of the shards started
// on it and proposes, reads and changes membership through them.
type Node struct {
	cfg    Config
	nh     *dragonboat.NodeHost
	events *eventListener
	stats  *stats

	mu       sync.Mutex
	replicas map[uint64]*replica // by shard
	closed   bool
}

var _ cluster.Replicator = (*Node)(nil)

// New checks cfg and the node's certificate, then starts the engine; no shard runs until
// StartShard.
func New(cfg Config) (*Node, error) {
	cfg, fixedKnown, err := withFixed(cfg)
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.PlainTCPForMeasurement {
		if err := checkNodeCert(cfg, time.Now()); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(cfg.raftDir(), 0o700); err != nil {
		return nil, fmt.Errorf("engine data directory: %w", err)
	}
	quietDragonboat()
	events := newEventListener()
	st := &stats{}
	nh, err := dragonboat.NewNodeHost(cfg.nodeHostConfig(events, systemEvents{st}))
	if err != nil {
		events.stop()
		return nil, fmt.Errorf("start raft node %d on %s: %w", cfg.NodeID, cfg.RaftAddr, err)
	}
	if !fixedKnown {
		if err := writeFixed(cfg); err != nil {
			nh.Close()
			events.stop()
			return nil, err
		}
	}
	n := &Node{cfg: cfg, nh: nh, events: events, stats: st, replicas: map[uint64]*replica{}}
	n.OnLeaderChange(func(_, _ uint64) { st.leaderChanges.Add(1) })
	return n, nil
}

// ID is this node's id, its replica id in every shard.
func (n *Node) ID() uint64 { return n.cfg.NodeID }

// RaftAddr is the address peers reach this node at.
func (n *Node) RaftAddr() string { return n.cfg.RaftAddr }

// Close stops every shard on this node (closing their state machines) and the engine.
// Callbacks already running finish first; leader changes not yet delivered are dropped.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.nh.Close()
	n.events.stop()
	return nil
}

// Leader implements cluster.Replicator.
func (n *Node) Leader(shard uint64) (uint64, bool) {
	leader, _, valid, err := n.nh.GetLeaderID(shard)
	if err != nil || !valid || leader == 0 {
		return 0, false
	}
	return leader, true
}

// OnLeaderChange implements cluster.Replicator. f hears of changes after it is registered;
// the leader as of now is Leader's answer.
func (n *Node) OnLeaderChange(f func(shard, leader uint64)) { n.events.subscribe(f) }

// errClosed is returned by calls on a closed Node.
var errClosed = errors.New("raft node is closed")

func (n *Node) isClosed() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.closed
}
