package engine

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/lni/dragonboat/v4"

	"github.com/modelgate/modelgate/internal/supervise"
)

// ShardStatus is one shard as this node sees it: what `modelgate cluster status` shows per
// node.
type ShardStatus struct {
	Shard uint64
	// Voting and NonVoting are the shard's members (node id → address). MembersConfirmed
	// says they were read through the leader; when no leader answered in time, Voting is
	// what this replica has applied and NonVoting is unknown (nil).
	Voting           map[uint64]string
	NonVoting        map[uint64]string
	MembersConfirmed bool
	// Removed are the nodes taken out of the shard, which can never be its members again
	// (a replica's id is its node's id, and Raft forbids reusing one); known with the members.
	Removed []uint64
	// Leader is the leading node as last heard (0: none known); Term its term.
	Leader uint64
	Term   uint64
	// IsNonVoting says this node's replica does not vote.
	IsNonVoting bool
	// Applied is the index of the last entry this replica applied: commands, membership
	// changes and the empty entry each new leader appends (applying one changes nothing, so
	// it counts once it follows an applied entry in this replica's log).
	Applied uint64
	// LastIndex is the last entry in this replica's log (on the leader, the shard's newest
	// entry). LastIndex − Applied is what this replica has received and not yet applied;
	// Applied on the leader's Status minus Applied here is its lag behind the leader.
	LastIndex uint64
	// Pending says the replica has not loaded yet (its state machine still opening or
	// catching up from a snapshot); the other fields are then mostly zero.
	Pending bool
}

// Unapplied is how many entries this replica holds and has not applied yet.
func (s ShardStatus) Unapplied() uint64 {
	if s.LastIndex <= s.Applied {
		return 0
	}
	return s.LastIndex - s.Applied
}

// Status reports every shard running on this node, in shard order. It asks each shard's
// leader for the members once (one try, at most attemptTimeout, all shards at once), so
// it answers within that bound even when a shard has no leader.
func (n *Node) Status(ctx context.Context) []ShardStatus {
	if n.isClosed() {
		return nil
	}
	info := n.nh.GetNodeHostInfo(dragonboat.NodeHostInfoOption{SkipLogInfo: true})
	out := make([]ShardStatus, len(info.ShardInfoList))
	var wg sync.WaitGroup
	for i, si := range info.ShardInfoList {
		st := &out[i]
		*st = ShardStatus{
			Shard:       si.ShardID,
			Leader:      si.LeaderID,
			Term:        si.Term,
			IsNonVoting: si.IsNonVoting,
			Pending:     si.Pending,
			Voting:      map[uint64]string{},
		}
		for id, addr := range si.Replicas {
			st.Voting[id] = addr
		}
		st.Applied, st.LastIndex = n.appliedAndLast(si)
		wg.Add(1)
		supervise.Go("engine.status", func() {
			defer wg.Done() // after a panic too: the status waits for it
			actx, cancel := context.WithTimeout(ctx, attemptTimeout)
			defer cancel()
			if m, err := n.nh.SyncGetShardMembership(actx, st.Shard); err == nil {
				st.Voting, st.NonVoting, st.MembersConfirmed = m.Nodes, m.NonVotings, true
				st.Removed = slices.Sorted(maps.Keys(m.Removed))
			}
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(a, b ShardStatus) int { return cmp.Compare(a.Shard, b.Shard) })
	return out
}

// Progress reports every shard running on this node as its replica here knows it, with no
// round trip (Status asks each leader for the members), in shard order.
func (n *Node) Progress() []Progress {
	if n.isClosed() {
		return nil
	}
	info := n.nh.GetNodeHostInfo(dragonboat.NodeHostInfoOption{SkipLogInfo: true})
	out := make([]Progress, 0, len(info.ShardInfoList))
	for _, si := range info.ShardInfoList {
		p := Progress{Shard: si.ShardID, Leader: si.LeaderID, Pending: si.Pending}
		p.Applied, p.LastIndex = n.appliedAndLast(si)
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b Progress) int { return cmp.Compare(a.Shard, b.Shard) })
	return out
}

// appliedAndLast is the index si's replica here has applied and the last in its log.
func (n *Node) appliedAndLast(si dragonboat.ShardInfo) (applied, last uint64) {
	if r, ok := n.replica(si.ShardID); ok {
		applied = r.applied.Load()
	}
	// The last membership change applied: such entries never reach Update.
	applied = max(applied, si.ConfigChangeIndex)
	if lr, err := n.nh.GetLogReader(si.ShardID); err == nil {
		_, last = lr.GetRange()
		// After catching up from a snapshot, nothing was applied through Update yet.
		applied = appliedThroughNoOps(lr, max(applied, lr.Snapshot().Index), last)
	}
	return applied, last
}

// noOpScan bounds the log read behind appliedThroughNoOps: the scan stops at the first
// entry that is not a no-op, so a few bytes are enough for the empty entries it skips.
const noOpScan = 64 << 10

// appliedThroughNoOps extends applied (the index this replica is known to have applied)
// over the empty entries that follow it in the log, up to last. dragonboat applies a new
// leader's empty entry without handing it to the state machine, so Update never reports
// it: without this, a quiet shard shows a lag of one entry per election for ever. A
// config change or a command stops the scan (those are reported when applied).
func appliedThroughNoOps(lr dragonboat.ReadonlyLogReader, applied, last uint64) uint64 {
	if applied >= last {
		return applied
	}
	entries, err := lr.Entries(applied+1, last+1, noOpScan)
	if err != nil {
		return applied
	}
	for _, e := range entries {
		if e.Index != applied+1 || !e.IsEmpty() {
			break
		}
		applied = e.Index
	}
	return applied
}
