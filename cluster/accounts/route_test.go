package accounts

import (
	"errors"
	"testing"
)

// TestTheRouterFollowsWhatTheNodesAnswer: without a hint a shard's tries go to its voters in
// turn; a success pins the node; a node naming another leader moves the tries there; a
// failure, or a node that knows no leader, drops the hint and goes on to the next voter.
func TestTheRouterFollowsWhatTheNodesAnswer(t *testing.T) {
	r := newRouter(func(shard uint64) []uint64 {
		if shard == 9 {
			return nil
		}
		return []uint64{1, 2, 3}
	})
	down := errors.New("connection refused")
	steps := []struct {
		heard error // the answer of the node the router picked
		want  uint64
	}{
		{nil, 1},                        // first voter
		{nil, 1},                        // a success keeps it
		{&NotLeaderError{Leader: 3}, 1}, // node 1 names node 3
		{down, 3},                       // node 3 is down: next voter
		{&NotLeaderError{}, 2},          // node 2 knows no leader: next voter
		{&NotLeaderError{Leader: 2}, 3}, // node 3 names node 2
		{nil, 2},
	}
	for i, s := range steps {
		got, ok := r.target(4)
		if !ok || got != s.want {
			t.Fatalf("step %d: target %d %v, want %d", i, got, ok, s.want)
		}
		r.heard(4, got, s.heard)
	}
	if got, ok := r.target(9); ok {
		t.Errorf("a shard with no voters: target %d, want none", got)
	}
	// This node is never a target (it holds no replica of the shards it routes), even named.
	r.self = 2
	r.heard(4, 1, &NotLeaderError{Leader: 2})
	for i, want := range []uint64{3, 1, 3} {
		got, ok := r.target(4)
		if !ok || got != want {
			t.Fatalf("with node 2 this node, try %d: target %d %v, want %d", i, got, ok, want)
		}
		r.heard(4, got, down)
	}
	if !errors.Is(&NotLeaderError{Leader: 2}, ErrNotLeader) {
		t.Error("a NotLeaderError is not ErrNotLeader")
	}
}
