package engine

import (
	"context"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// A node that joined without a vote and was promoted votes after a restart, although it
// starts every shard as it joined (non-voting): with four voters and the leader stopped, the
// other three elect a leader only with its vote. dragonboat makes the replica a voter again
// whether the entry promoting it is replayed or its snapshot already holds the promotion.
func TestAPromotedNodeVotesAfterARestart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		snapshot bool // a snapshot holds the promotion when the node restarts
	}{
		{name: "the promotion in the log it replays"},
		{name: "the promotion in its snapshot", snapshot: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCluster(t, 3, 1)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cfg := c.newJoiner(4)
			if err := c.nodes[1].AddNonVoting(ctx, 1, 4, cfg.RaftAddr); err != nil {
				t.Fatal(err)
			}
			c.startJoined(4, 1)
			if err := c.nodes[1].AddReplica(ctx, 1, 4, cfg.RaftAddr); err != nil {
				t.Fatal(err)
			}
			if tc.snapshot {
				for range 2 * cfg.SnapshotEntries { // past the snapshot cadence on every node
					if _, err := c.nodes[1].Propose(ctx, 1, c.cmd()); err != nil {
						t.Fatal(err)
					}
				}
				testutil.WaitWithin(t, 10*time.Second, "node 4 takes a snapshot holding its promotion", func() bool {
					lr, err := c.nodes[4].nh.GetLogReader(1)
					_, voter := lr.Snapshot().Membership.Addresses[4]
					return err == nil && voter
				})
			}
			c.stop(4)
			c.startJoined(4, 1)
			leader := c.leader(1, 10*time.Second)
			if leader == 4 {
				return // a non-voting replica never leads
			}
			c.stop(leader)
			if got := c.leader(1, 10*time.Second); got == leader {
				t.Fatalf("node %d still leads after it stopped", got)
			}
			if _, err := c.nodes[4].Propose(ctx, 1, c.cmd()); err != nil {
				t.Fatal(err)
			}
		})
	}
}
