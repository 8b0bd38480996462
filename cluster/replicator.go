// Package cluster is what the cluster's parts share: the Replicator an account or metadata
// shard is proposed and read through, the state machine a replica applies, and the Batcher
// that packs many commands into one proposal.
package cluster

import (
	"context"
	"io"
)

// Replicator is the consensus engine as modelgate uses it (docs/cluster.md): a fixed set of
// shards, each a Raft group whose leader owns the shard's accounts. Everything above this seam
// (quota, keys, video tasks) proposes commands and reads state through it, so the engine
// (dragonboat today, hashicorp/raft as the fallback) can change without touching them.
type Replicator interface {
	// Propose commits cmd to shard's log and returns what the shard's state machine answered
	// when it applied it (StateMachine.Update's Result). A proposal made on a follower is
	// forwarded to the leader by the engine. An error means the outcome is unknown: the
	// command may or may not have been applied, so commands carry their own idempotency.
	Propose(ctx context.Context, shard uint64, cmd []byte) ([]byte, error)
	// Read answers query against shard's state after a linearizable read (ReadIndex): it sees
	// every command committed before Read was called.
	Read(ctx context.Context, shard uint64, query []byte) ([]byte, error)
	// Leader is the node leading shard as this node last heard, ok false when none is known.
	Leader(shard uint64) (node uint64, ok bool)
	// OnLeaderChange registers f, called (never concurrently, never while holding engine
	// locks) each time this node learns of a new leader of a shard; leader 0 means none.
	OnLeaderChange(f func(shard, leader uint64))
}

// Entry is one committed command handed to a state machine, with its log index. Update sets
// Result, which Propose returns to the proposer.
type Entry struct {
	Index  uint64
	Cmd    []byte
	Result []byte
}

// StateMachine is one shard's replicated state on one node, kept on disk: the engine applies
// committed entries in log order and never twice after a restart, because Update writes the
// applied index in the same atomic batch as the state it changed and Open reads it back.
// Update must be deterministic: the same entries applied to the same state give the same
// state and results on every replica (no clocks, no randomness, no map iteration order).
type StateMachine interface {
	// Open loads the state and returns the index of the last applied entry (0 for none).
	Open() (applied uint64, err error)
	// Update applies entries (consecutive, in log order) and fills each Result.
	Update(entries []Entry) error
	// Lookup answers a read-only query against the applied state.
	Lookup(query []byte) ([]byte, error)
	// Sync makes every applied entry durable (the engine calls it before compacting its log).
	Sync() error
	// PrepareSnapshot captures the state as of the last applied entry (a Pebble snapshot),
	// called between Updates; SaveSnapshot writes that captured state while Updates go on.
	// RecoverFromSnapshot replaces the state with one so written (a replica that fell behind
	// the log's start, or a new one).
	PrepareSnapshot() (any, error)
	SaveSnapshot(captured any, w io.Writer) error
	RecoverFromSnapshot(r io.Reader) error
	Close() error
}
