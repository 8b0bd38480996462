package engine

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

func TestANodeJoinsNonVotingIsPromotedAndRemoved(t *testing.T) {
	c := newTestCluster(t, 3, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for range 20 {
		if _, err := c.nodes[1].Propose(ctx, 1, c.cmd()); err != nil {
			t.Fatal(err)
		}
	}
	// A fourth node, certificate from the same CA.
	cfg := c.newJoiner(4)

	// Added twice (a retry after an unknown outcome): both succeed.
	for range 2 {
		if err := c.nodes[2].AddNonVoting(ctx, 1, 4, cfg.RaftAddr); err != nil {
			t.Fatal(err)
		}
	}
	n4 := c.startJoined(4, 1)
	if got := readCount(t, n4, 1); got != 20 {
		t.Errorf("Read on the non-voting node = %d, want 20", got)
	}
	m, err := c.nodes[3].Membership(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	voting := maps.Clone(c.initial)
	if !maps.Equal(m.Voting, voting) || !maps.Equal(m.NonVoting, map[uint64]string{4: cfg.RaftAddr}) || len(m.Removed) != 0 {
		t.Errorf("membership after AddNonVoting: %+v", m)
	}
	if st := n4.Status(ctx); len(st) != 1 || !st[0].IsNonVoting || !st[0].MembersConfirmed || st[0].NonVoting[4] != cfg.RaftAddr {
		t.Errorf("status on the non-voting node: %+v", st)
	}

	if err := c.nodes[1].AddReplica(ctx, 1, 4, cfg.RaftAddr); err != nil {
		t.Fatal(err)
	}
	voting[4] = cfg.RaftAddr
	testutil.WaitWithin(t, 5*time.Second, "node 4 votes", func() bool {
		m, err := c.nodes[4].Membership(ctx, 1)
		return err == nil && maps.Equal(m.Voting, voting) && len(m.NonVoting) == 0
	})

	for range 2 {
		if err := c.nodes[4].RemoveReplica(ctx, 1, 1); err != nil {
			t.Fatal(err)
		}
	}
	delete(voting, 1)
	m, err = c.nodes[2].Membership(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(m.Voting, voting) || len(m.Removed) != 1 || m.Removed[0] != 1 {
		t.Errorf("membership after RemoveReplica: %+v", m)
	}
	// A removed id cannot come back.
	err = c.nodes[2].AddReplica(ctx, 1, 1, c.initial[1])
	want := "add node 1 to shard 1: request rejected (the shard refused the change: a removed id cannot come back, a member cannot be added twice, and the last member cannot leave)"
	if err == nil || err.Error() != want {
		t.Errorf("re-adding a removed node: %v\nwant %s", err, want)
	}
	if _, err := c.nodes[4].Propose(ctx, 1, c.cmd()); err != nil {
		t.Fatal(err)
	}
}

func TestStartShardRefusesMembersThatDisagreeWithTheNode(t *testing.T) {
	c := newTestCluster(t, 1, 1)
	n := c.nodes[1]
	self := c.cfgs[1].RaftAddr
	tests := []struct {
		name     string
		initial  map[uint64]string
		join, nv bool
		want     string
	}{
		{"without this node", map[uint64]string{2: "127.0.0.1:2"}, false, false,
			"shard 7: the initial members do not include this node (id 1)"},
		{"at another address", map[uint64]string{1: "127.0.0.1:2"}, false, false,
			"shard 7: the initial members give this node (id 1) the address 127.0.0.1:2, but it listens at " + self},
		{"join with members", map[uint64]string{1: self}, true, false,
			"shard 7: a joining node starts with no initial members"},
		{"non-voting founder", map[uint64]string{1: self}, false, true,
			"shard 7: a non-voting replica joins a running shard (join true)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := n.StartShard(7, tc.initial, tc.join, tc.nv, c.factory(1))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("err = %v\nwant %s", err, tc.want)
			}
		})
	}
}
