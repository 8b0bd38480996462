package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/lni/dragonboat/v4"
)

// Membership is a shard's members as its replicas have applied them.
type Membership struct {
	Voting    map[uint64]string // node id → raft address
	NonVoting map[uint64]string
	// Removed ids may never rejoin the shard (Raft forbids reusing them).
	Removed []uint64
	// ConfigChangeID is the log index of the last membership change applied.
	ConfigChangeID uint64
}

// Membership reads shard's members linearizably (through the leader).
func (n *Node) Membership(ctx context.Context, shard uint64) (Membership, error) {
	if n.isClosed() {
		return Membership{}, errClosed
	}
	var m Membership
	err := retry(ctx, fmt.Sprintf("membership of shard %d", shard), func(ctx context.Context) error {
		got, err := n.nh.SyncGetShardMembership(ctx, shard)
		if err != nil {
			return err
		}
		m = Membership{Voting: got.Nodes, NonVoting: got.NonVotings, ConfigChangeID: got.ConfigChangeID}
		for id := range got.Removed {
			m.Removed = append(m.Removed, id)
		}
		slices.Sort(m.Removed)
		return nil
	})
	return m, err
}

// AddReplica makes node a voting member of shard, reached at addr; the node then starts
// the shard with join true. Adding a member already there at that address succeeds, so a
// retry after an unknown outcome is safe.
func (n *Node) AddReplica(ctx context.Context, shard, node uint64, addr string) error {
	return n.changeMembers(ctx, fmt.Sprintf("add node %d to shard %d", node, shard), shard,
		func(ctx context.Context) error {
			return n.nh.SyncRequestAddReplica(ctx, shard, node, addr, 0)
		},
		func(m Membership) bool { return m.Voting[node] == addr })
}

// AddNonVoting makes node a non-voting member of shard (it receives the log, does not vote),
// reached at addr; the node then starts the shard with join and nonVoting true. A non-voting
// member is promoted by AddReplica.
func (n *Node) AddNonVoting(ctx context.Context, shard, node uint64, addr string) error {
	return n.changeMembers(ctx, fmt.Sprintf("add non-voting node %d to shard %d", node, shard), shard,
		func(ctx context.Context) error {
			return n.nh.SyncRequestAddNonVoting(ctx, shard, node, addr, 0)
		},
		func(m Membership) bool { return m.NonVoting[node] == addr })
}

// RemoveReplica takes node out of shard for good (voting or not). Removing a node that is
// no member succeeds.
func (n *Node) RemoveReplica(ctx context.Context, shard, node uint64) error {
	return n.changeMembers(ctx, fmt.Sprintf("remove node %d from shard %d", node, shard), shard,
		func(ctx context.Context) error {
			return n.nh.SyncRequestDeleteReplica(ctx, shard, node, 0)
		},
		func(m Membership) bool {
			_, voting := m.Voting[node]
			_, nonVoting := m.NonVoting[node]
			return !voting && !nonVoting
		})
}

// changeMembers retries a membership change like a proposal. The engine rejects a change
// that is already in place (the member is there, or gone); done tells whether it is, so a
// retry of a change that did commit is not reported as a failure.
func (n *Node) changeMembers(ctx context.Context, what string, shard uint64,
	change func(context.Context) error, done func(Membership) bool) error {
	if n.isClosed() {
		return errClosed
	}
	err := retry(ctx, what, change)
	if err == nil || !errors.Is(err, dragonboat.ErrRejected) {
		return err
	}
	m, merr := n.Membership(ctx, shard)
	if merr == nil && done(m) {
		return nil
	}
	return fmt.Errorf("%w (the shard refused the change: a removed id cannot come back, a member cannot be added twice, and the last member cannot leave)", err)
}

// leaderPoll is how often TransferLeader looks for the new leader.
const leaderPoll = 10 * time.Millisecond

// TransferLeader asks shard's leader to hand leadership to node, and waits until this node
// sees node lead. The request is repeated each try, since the engine drops it silently when
// the target is behind or an election intervenes.
func (n *Node) TransferLeader(ctx context.Context, shard, node uint64) error {
	if n.isClosed() {
		return errClosed
	}
	return retry(ctx, fmt.Sprintf("transfer the leadership of shard %d to node %d", shard, node),
		func(actx context.Context) error {
			if leader, ok := n.Leader(shard); ok && leader == node {
				return nil
			}
			if err := n.nh.RequestLeaderTransfer(shard, node); err != nil {
				return err
			}
			tick := time.NewTicker(leaderPoll)
			defer tick.Stop()
			for {
				select {
				case <-tick.C:
					if leader, ok := n.Leader(shard); ok && leader == node {
						return nil
					}
				case <-actx.Done():
					return dragonboat.ErrTimeout
				}
			}
		})
}
