package accounts

import (
	"errors"
	"fmt"
	"sync"
)

// Placement says which account shards this node holds a replica of, and which nodes to
// ask first about a shard it does not hold (the shard's voters as placed at init). With no
// Placement set an Owner holds every shard.
type Placement struct {
	Held   func(shard uint64) bool
	Voters func(shard uint64) []uint64
}

// NotLeaderError is a node's answer to a step or read of a shard it does not lead or hold:
// Leader is the node it knows leads the shard (0 when it knows none). errors.Is it
// ErrNotLeader.
type NotLeaderError struct{ Leader uint64 }

func (e *NotLeaderError) Error() string {
	if e.Leader == 0 {
		return ErrNotLeader.Error()
	}
	return fmt.Sprintf("%v: node %d does", ErrNotLeader, e.Leader)
}

func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// router picks the node a step or read of a shard this node holds no replica of goes to:
// the leader it last heard of (from a success, or from a node that knew better), else the
// shard's placed voters in turn. The engine cannot say, since it runs no replica of the
// shard here.
type router struct {
	voters func(shard uint64) []uint64
	self   uint64 // never a target: this node holds no replica of the shards it routes

	mu   sync.Mutex
	hint map[uint64]uint64 // shard → the node last known to lead it
	turn map[uint64]int    // shard → the voter to try next without a hint
}

func newRouter(voters func(shard uint64) []uint64) *router {
	return &router{voters: voters, hint: map[uint64]uint64{}, turn: map[uint64]int{}}
}

// target is the node to send shard's next try to; ok false when there is none to ask.
func (r *router) target(shard uint64) (uint64, bool) {
	r.mu.Lock()
	n, ok := r.hint[shard]
	r.mu.Unlock()
	if ok && n != r.self {
		return n, true
	}
	vs := r.voters(shard) // outside the lock: it may read the replicas' addresses
	r.mu.Lock()
	defer r.mu.Unlock()
	for range vs {
		n := vs[r.turn[shard]%len(vs)]
		if n != r.self {
			return n, true
		}
		r.turn[shard]++
	}
	return 0, false
}

// heard takes the outcome of a try sent to node: a success makes node the shard's leader
// hint, an answer naming another leader makes that one the hint, anything else (no answer,
// a node that knows no leader) drops the hint and moves on to the next voter.
func (r *router) heard(shard, node uint64, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var nl *NotLeaderError
	switch {
	case err == nil:
		r.hint[shard] = node
	case errors.As(err, &nl) && nl.Leader != 0 && nl.Leader != node:
		r.hint[shard] = nl.Leader
	default:
		delete(r.hint, shard)
		r.turn[shard]++
	}
}
