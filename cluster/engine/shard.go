package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4"
	sm "github.com/lni/dragonboat/v4/statemachine"

	"github.com/modelgate/modelgate/cluster"
)

// StartShard runs this node's replica of shard. For a shard's first start on its founding
// members, initial maps each member's node id to its RaftAddr and must name this node at
// its own address; a node added later (AddReplica or AddNonVoting on a member) starts with
// join true and no initial members, nonVoting telling which kind it was added as. On a
// restart the engine's stored membership wins and initial is ignored. factory makes the
// replica's state machine; its Open tells the engine where to resume applying.
func (n *Node) StartShard(shard uint64, initial map[uint64]string, join bool, nonVoting bool,
	factory func(shard, replica uint64) cluster.StateMachine) error {
	if n.isClosed() {
		return errClosed
	}
	if err := n.checkInitial(shard, initial, join, nonVoting); err != nil {
		return err
	}
	members := make(map[uint64]dragonboat.Target, len(initial))
	for id, addr := range initial {
		members[id] = addr
	}
	create := func(shardID, replicaID uint64) sm.IOnDiskStateMachine {
		r := &replica{sm: factory(shardID, replicaID)}
		n.mu.Lock()
		n.replicas[shardID] = r
		n.mu.Unlock()
		return r
	}
	if err := n.nh.StartOnDiskReplica(members, join, create, n.cfg.shardConfig(shard, nonVoting)); err != nil {
		return fmt.Errorf("start shard %d on node %d: %w", shard, n.cfg.NodeID, err)
	}
	return nil
}

func (n *Node) checkInitial(shard uint64, initial map[uint64]string, join, nonVoting bool) error {
	switch {
	case join && len(initial) > 0:
		return fmt.Errorf("shard %d: a joining node starts with no initial members", shard)
	case !join && nonVoting:
		return fmt.Errorf("shard %d: a non-voting replica joins a running shard (join true)", shard)
	case join:
		return nil
	}
	addr, ok := initial[n.cfg.NodeID]
	if !ok {
		return fmt.Errorf("shard %d: the initial members do not include this node (id %d)", shard, n.cfg.NodeID)
	}
	if addr != n.cfg.RaftAddr {
		return fmt.Errorf("shard %d: the initial members give this node (id %d) the address %s, but it listens at %s",
			shard, n.cfg.NodeID, addr, n.cfg.RaftAddr)
	}
	for id := range initial {
		if id == 0 {
			return fmt.Errorf("shard %d: initial member ids must be > 0", shard)
		}
	}
	return nil
}

func (n *Node) replica(shard uint64) (*replica, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r, ok := n.replicas[shard]
	return r, ok
}

// replica adapts a cluster.StateMachine to dragonboat's on-disk state machine and keeps the
// applied index for Status. dragonboat calls Update, Sync, PrepareSnapshot and
// RecoverFromSnapshot from one goroutine at a time, Lookup and SaveSnapshot concurrently
// with Update, as cluster.StateMachine allows.
type replica struct {
	sm      cluster.StateMachine
	applied atomic.Uint64
	batch   []cluster.Entry // reused by Update, which is never concurrent with itself
}

var _ sm.IOnDiskStateMachine = (*replica)(nil)

func (r *replica) Open(<-chan struct{}) (uint64, error) {
	applied, err := r.sm.Open()
	if err != nil {
		return 0, err
	}
	r.applied.Store(applied)
	return applied, nil
}

func (r *replica) Update(entries []sm.Entry) ([]sm.Entry, error) {
	if len(entries) == 0 {
		return entries, nil
	}
	batch := r.batch[:0]
	for _, e := range entries {
		batch = append(batch, cluster.Entry{Index: e.Index, Cmd: e.Cmd})
	}
	if err := r.sm.Update(batch); err != nil {
		return nil, err
	}
	for i := range entries {
		entries[i].Result = sm.Result{Data: batch[i].Result}
		batch[i] = cluster.Entry{} // let the commands and results go
	}
	r.batch = batch
	r.applied.Store(entries[len(entries)-1].Index)
	return entries, nil
}

func (r *replica) Lookup(query interface{}) (interface{}, error) {
	q, ok := query.([]byte)
	if !ok {
		return nil, fmt.Errorf("engine: a query is []byte, not %T", query)
	}
	return r.sm.Lookup(q)
}

func (r *replica) Sync() error { return r.sm.Sync() }

func (r *replica) PrepareSnapshot() (interface{}, error) { return r.sm.PrepareSnapshot() }

func (r *replica) SaveSnapshot(captured interface{}, w io.Writer, _ <-chan struct{}) error {
	return r.sm.SaveSnapshot(captured, w)
}

// RecoverFromSnapshot replaces the state. Its applied index is the snapshot's, which Status
// reads from the engine's log (this interface does not carry it).
func (r *replica) RecoverFromSnapshot(rd io.Reader, _ <-chan struct{}) error {
	return r.sm.RecoverFromSnapshot(rd)
}

func (r *replica) Close() error { return r.sm.Close() }

// StopShard stops this node's replica of shard (taken out of the shard, its replicas now
// elsewhere) and deletes the engine's log and snapshots of it, so that the shard can later
// be added here again as a new replica. A replica the engine stopped itself (it applied its
// own removal) is only deleted.
func (n *Node) StopShard(ctx context.Context, shard uint64) error {
	if n.isClosed() {
		return errClosed
	}
	if err := n.nh.StopShard(shard); err != nil && !errors.Is(err, dragonboat.ErrShardNotFound) {
		return fmt.Errorf("stop shard %d on node %d: %w", shard, n.cfg.NodeID, err)
	}
	n.mu.Lock()
	delete(n.replicas, shard)
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, time.Minute) // the engine wants a deadline
	defer cancel()
	for {
		err := n.nh.SyncRemoveData(ctx, shard, n.cfg.NodeID)
		if !errors.Is(err, dragonboat.ErrShardNotStopped) {
			if err != nil {
				return fmt.Errorf("remove the data of shard %d on node %d: %w", shard, n.cfg.NodeID, err)
			}
			return nil
		}
		select { // still being offloaded
		case <-time.After(leaderPoll):
		case <-ctx.Done():
			return fmt.Errorf("remove the data of shard %d on node %d: %w", shard, n.cfg.NodeID, ctx.Err())
		}
	}
}
