// Package accounts is the account shards of a cluster (docs/cluster.md, "Accounts over shards"): the
// quota state of the accounts hashed to a shard as a deterministic state machine applying
// the pure quota step (actors/quota/step) to committed commands, and the owner through which
// a node's quota service proposes its accounts' steps to their shards.
package accounts

import (
	"fmt"
	"hash/fnv"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster/meta"
	"github.com/modelgate/modelgate/internal/bincode"
	"github.com/modelgate/modelgate/persistence"
)

// Command is one quota step of one account, one element of a Batcher batch in the shard's
// log. The proposer decides everything in it: the id, the time (Step.Now) and the plan.
type Command struct {
	// ID is the proposer's random id (NewCommandID); a retry after an unknown outcome
	// carries the same one, so the step applies once.
	ID      string       `msgpack:"id"`
	Account string       `msgpack:"acct"`
	Step    step.Command `msgpack:"step"`
	// Task, when set, is a change of one of the account's video tasks (tasks.go) and Step
	// is unused.
	Task *TaskChange `msgpack:"task,omitempty"`
	// Node, when set, publishes a node's internal address in the shard (nodes.go).
	Node *NodeAddr `msgpack:"node,omitempty"`
	// Prune, when set, deletes the shard's old request-log entries (logprune.go).
	Prune *LogPrune `msgpack:"prune,omitempty"`
}

// maxCommandID bounds a command id (it is part of a store key).
const maxCommandID = 64

// NewCommandID is a fresh random command id: 128 bits in hex, as the metadata shard's.
func NewCommandID() string { return meta.NewCommandID() }

// binaryV1 starts a command in binary (a quota step: its id, its account, then the step's
// own binary encoding); any other first byte is msgpack, which the rare commands (a task
// change, a node's address, a log prune) and commands written before stay in.
const binaryV1 = 0x01

// Encode is the command as a batch element.
func (c *Command) Encode() ([]byte, error) {
	if c.Task != nil || c.Node != nil || c.Prune != nil {
		return msgpack.Marshal(c)
	}
	w := bincode.Writer{B: make([]byte, 0, 160)}
	w.Byte(binaryV1)
	w.String(c.ID)
	w.String(c.Account)
	return c.Step.AppendBinary(w.B), nil
}

// decodeCommand reads a batch element.
func decodeCommand(b []byte) (Command, error) {
	var c Command
	if len(b) > 0 && b[0] == binaryV1 {
		r := bincode.NewReader(b[1:])
		c.ID, c.Account = r.String(), r.String()
		rest := r.Rest()
		if err := r.Err(); err != nil {
			return Command{}, fmt.Errorf("accounts: decode command: %w", err)
		}
		if err := c.Step.Decode(rest); err != nil {
			return Command{}, fmt.Errorf("accounts: decode command: %w", err)
		}
		return c, nil
	}
	if err := msgpack.Unmarshal(b, &c); err != nil {
		return Command{}, fmt.Errorf("accounts: decode command: %w", err)
	}
	return c, nil
}

// Query asks a replica for an account's admin view (step.View) under Plan at Now, applied
// to a copy of the account: a read changes nothing.
type Query struct {
	Account string    `msgpack:"acct"`
	Now     int64     `msgpack:"now"`
	Plan    step.Plan `msgpack:"plan"`
	// Task, when set, asks for that video task instead (a TaskLookup); Sync asks for nothing
	// (the read only makes this replica catch up).
	Task string `msgpack:"task,omitempty"`
	Sync bool   `msgpack:"sync,omitempty"`
	// Key and KeyLimits ask for that key's own limits too (step.State.Key).
	Key       string                 `msgpack:"key,omitempty"`
	KeyLimits *persistence.KeyLimits `msgpack:"kl,omitempty"`
}

// Encode is the query as Lookup takes it.
func (q *Query) Encode() ([]byte, error) { return msgpack.Marshal(q) }

// ShardOf is the shard holding account: fnv-1a 64 of the account id modulo the shard count,
// counted from the first shard id. Every node must agree on shards and first.
func ShardOf(account string, first uint64, shards int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(account))
	return first + h.Sum64()%uint64(shards)
}

func decodeQuery(b []byte) (Query, error) {
	var q Query
	if err := msgpack.Unmarshal(b, &q); err != nil {
		return Query{}, fmt.Errorf("accounts: decode query: %w", err)
	}
	return q, nil
}
