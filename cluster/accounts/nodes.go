package accounts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/persistence"
)

// A finished video's bytes are not in Raft: the leader stores the file, copies it to one
// more node over mutual TLS, and the completed task lists the nodes holding it
// (VideoTask.AssetHolders). A node finds a holder through its shard replica:
//
//	acctshard/<shard>/node/<node id, 20 digits>  → the node's internal (mutual TLS) address
//	acctshard/<shard>/asset/<asset id>           → the holders, msgpack []uint64
//
// Every node publishes its internal address in each account shard it holds a replica of
// when it starts (its port changes with every start), and the shard's Update writes an
// asset's holders when it applies a task that lists them. Both are in the shard's
// namespace, so its snapshots carry them.

// NodeAddr is a node's internal address as published in a shard, with the incarnation of
// the process publishing it: the shard then releases the calls an earlier incarnation of
// the node admitted (orphans.go).
type NodeAddr struct {
	ID   uint64 `msgpack:"id"`
	Addr string `msgpack:"addr"`
	Inc  uint64 `msgpack:"inc,omitempty"`
	// Gone says the node was removed from the cluster (no Addr, no Inc): its address is
	// forgotten and every call it admitted is released (orphans.go).
	Gone bool `msgpack:"gone,omitempty"`
}

// maxAddr bounds a published address (host:port).
const maxAddr = 300

func (m *StateMachine) nodeKey(id uint64) []byte {
	return m.key("node/", fmt.Sprintf("%020d", id))
}

func (m *StateMachine) assetKey(id string) []byte { return m.key("asset/", id) }

// nodeAddr applies a node's published address and incarnation (the latest ones stand).
func (u *update) nodeAddr(n *NodeAddr) (TaskResult, error) {
	if n.Gone {
		return u.nodeGone(n)
	}
	if n.ID == 0 || n.Addr == "" || len(n.Addr) > maxAddr || n.Inc == goneInc {
		return TaskResult{Fail: TaskInvalid}, nil
	}
	if n.Inc != 0 {
		if err := u.incarnation(n.ID, n.Inc); err != nil {
			return TaskResult{}, err
		}
	}
	return TaskResult{}, u.b.SetRaw(u.m.nodeKey(n.ID), []byte(n.Addr))
}

// nodeGone applies a node's removal: no incarnation of it is live any more, and its address
// is forgotten.
func (u *update) nodeGone(n *NodeAddr) (TaskResult, error) {
	if n.ID == 0 || n.Addr != "" || n.Inc != 0 {
		return TaskResult{Fail: TaskInvalid}, nil
	}
	if err := u.incarnation(n.ID, goneInc); err != nil {
		return TaskResult{}, err
	}
	return TaskResult{}, u.b.DeleteRaw(u.m.nodeKey(n.ID))
}

// holders writes the holders of a task's asset, when it lists them.
func (u *update) holders(t *persistence.VideoTask) error {
	if t.AssetID == "" || len(t.AssetHolders) == 0 {
		return nil
	}
	b, err := msgpack.Marshal(t.AssetHolders)
	if err != nil {
		return err
	}
	return u.b.SetRaw(u.m.assetKey(t.AssetID), b)
}

// PublishAddr publishes a node's internal address and incarnation in shard (or, Gone, its
// removal), retried (same command id) until it has applied or ctx ends.
func (o *Owner) PublishAddr(ctx context.Context, shard uint64, n NodeAddr) error {
	node := n.ID
	raw, err := (&Command{ID: NewCommandID(), Node: &n}).Encode()
	if err != nil {
		return err
	}
	for {
		out, err := o.submitRaw(ctx, shard, raw, TotalWait)
		if err == nil {
			var r TaskResult
			if err := r.Decode(out); err != nil || r.Fail != "" {
				return fmt.Errorf("accounts: shard %d refused the address of node %d: %q %v", shard, node, r.Fail, err)
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Peers are the nodes that published an internal address in shard, as this node's replica
// has them, in node order.
func Peers(store *persistence.Store, shard uint64) ([]NodeAddr, error) {
	m := NewStateMachine(store, shard)
	v := store.ViewShard()
	defer v.Close()
	prefix := m.key("node/")
	var out []NodeAddr
	err := v.ScanRaw(prefix, func(k, val []byte) error {
		id, err := strconv.ParseUint(string(k[len(prefix):]), 10, 64)
		if err != nil {
			return fmt.Errorf("accounts: node key %q: %w", k, err)
		}
		out = append(out, NodeAddr{ID: id, Addr: string(val)})
		return nil
	})
	return out, err
}

// PeersOf are the nodes that published an internal address in any of shards, as this
// node's replicas have them, each once (in the first shard that has it), in shard order.
func PeersOf(store *persistence.Store, shards []uint64) ([]NodeAddr, error) {
	seen := map[uint64]bool{}
	var out []NodeAddr
	for _, s := range shards {
		peers, err := Peers(store, s)
		if err != nil {
			return nil, err
		}
		for _, p := range peers {
			if !seen[p.ID] {
				seen[p.ID] = true
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// AssetHolders finds asset id among shards first … first+shards-1 on this node's replicas:
// the shard it is in and the nodes holding it (ok false when no shard lists it).
func AssetHolders(store *persistence.Store, first uint64, shards int, id string) (shard uint64, holders []uint64, ok bool, err error) {
	for s := first; s < first+uint64(shards); s++ {
		v, err := store.GetRaw(NewStateMachine(store, s).assetKey(id))
		if errors.Is(err, persistence.ErrNotFound) {
			continue
		}
		if err != nil {
			return 0, nil, false, err
		}
		if err := msgpack.Unmarshal(v, &holders); err != nil {
			return 0, nil, false, fmt.Errorf("accounts: holders of asset %s: %w", id, err)
		}
		return s, holders, true, nil
	}
	return 0, nil, false, nil
}
