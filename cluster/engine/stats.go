package engine

import (
	"sync/atomic"
	"time"

	"github.com/lni/dragonboat/v4/raftio"
)

// Stats are the engine's counts since it started, for the metrics listener.
type Stats struct {
	Proposals, ProposalsForwarded, ProposalsFailed uint64 // forwarded: made while another node led the shard
	Reads, ReadsFailed                             uint64 // linearizable reads and catch-up waits
	LeaderChanges                                  uint64 // as this node heard them, every shard
	SnapshotsCreated, SnapshotsSent                uint64
	SnapshotsReceived, SnapshotsRecovered          uint64
	ConnectionsFailed                              uint64 // raft connections that could not be made or broke
}

// stats is Stats as it is counted, and where request latencies go.
type stats struct {
	proposals, forwarded, proposeFailed atomic.Uint64
	reads, readFailed, leaderChanges    atomic.Uint64
	snapCreated, snapSent, snapReceived atomic.Uint64
	snapRecovered, connFailed           atomic.Uint64
	observe                             atomic.Pointer[func(op string, d time.Duration)]
}

// Stats reads the engine's counts.
func (n *Node) Stats() Stats {
	s := n.stats
	return Stats{
		Proposals: s.proposals.Load(), ProposalsForwarded: s.forwarded.Load(), ProposalsFailed: s.proposeFailed.Load(),
		Reads: s.reads.Load(), ReadsFailed: s.readFailed.Load(), LeaderChanges: s.leaderChanges.Load(),
		SnapshotsCreated: s.snapCreated.Load(), SnapshotsSent: s.snapSent.Load(),
		SnapshotsReceived: s.snapReceived.Load(), SnapshotsRecovered: s.snapRecovered.Load(),
		ConnectionsFailed: s.connFailed.Load(),
	}
}

// ObserveLatency hands f the duration of every proposal ("propose") and read ("read"),
// retries included, once each ends.
func (n *Node) ObserveLatency(f func(op string, d time.Duration)) { n.stats.observe.Store(&f) }

// done counts one proposal or read that started at began.
func (s *stats) done(op string, began time.Time, err error) {
	if op == opPropose {
		s.proposals.Add(1)
		if err != nil {
			s.proposeFailed.Add(1)
		}
	} else {
		s.reads.Add(1)
		if err != nil {
			s.readFailed.Add(1)
		}
	}
	if f := s.observe.Load(); f != nil {
		(*f)(op, time.Since(began))
	}
}

const (
	opPropose = "propose"
	opRead    = "read"
)

// systemEvents counts dragonboat's snapshot and connection events; the rest it ignores.
type systemEvents struct{ s *stats }

var _ raftio.ISystemEventListener = systemEvents{}

func (systemEvents) NodeHostShuttingDown()                       {}
func (systemEvents) NodeUnloaded(raftio.NodeInfo)                {}
func (systemEvents) NodeDeleted(raftio.NodeInfo)                 {}
func (systemEvents) NodeReady(raftio.NodeInfo)                   {}
func (systemEvents) MembershipChanged(raftio.NodeInfo)           {}
func (systemEvents) ConnectionEstablished(raftio.ConnectionInfo) {}
func (e systemEvents) ConnectionFailed(raftio.ConnectionInfo)    { e.s.connFailed.Add(1) }
func (systemEvents) SendSnapshotStarted(raftio.SnapshotInfo)     {}
func (e systemEvents) SendSnapshotCompleted(raftio.SnapshotInfo) { e.s.snapSent.Add(1) }
func (systemEvents) SendSnapshotAborted(raftio.SnapshotInfo)     {}
func (e systemEvents) SnapshotReceived(raftio.SnapshotInfo)      { e.s.snapReceived.Add(1) }
func (e systemEvents) SnapshotRecovered(raftio.SnapshotInfo)     { e.s.snapRecovered.Add(1) }
func (e systemEvents) SnapshotCreated(raftio.SnapshotInfo)       { e.s.snapCreated.Add(1) }
func (systemEvents) SnapshotCompacted(raftio.SnapshotInfo)       {}
func (systemEvents) LogCompacted(raftio.EntryInfo)               {}
func (systemEvents) LogDBCompacted(raftio.EntryInfo)             {}

// Progress is one shard's replica on this node, read locally (no round trip): what the
// metrics report per shard.
type Progress struct {
	Shard     uint64
	Leader    uint64 // 0: none known
	Applied   uint64
	LastIndex uint64 // Unapplied = LastIndex − Applied
	Pending   bool
}

// Unapplied is how many entries this replica holds and has not applied yet.
func (p Progress) Unapplied() uint64 {
	return ShardStatus{Applied: p.Applied, LastIndex: p.LastIndex}.Unapplied()
}
