package engine

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/certs"
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
			if _, err := certs.Generate(c.certDir, []certs.NodeSpec{{Name: "n4", Hosts: []string{"127.0.0.1"}}}, certs.Options{}); err != nil {
				t.Fatal(err)
			}
			cfg := testEngine(Config{NodeID: 4, RaftAddr: freeAddr(t), DataDir: t.TempDir(),
				CAFile: filepath.Join(c.certDir, "ca.crt"), CertFile: filepath.Join(c.certDir, "n4.crt"), KeyFile: filepath.Join(c.certDir, "n4.key")})
			c.cfgs[4] = cfg
			if err := c.nodes[1].AddNonVoting(ctx, 1, 4, cfg.RaftAddr); err != nil {
				t.Fatal(err)
			}
			startJoined := func() {
				n4, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				c.nodes[4] = n4
				if err := n4.StartShard(1, nil, true, true, c.factory(4)); err != nil {
					t.Fatal(err)
				}
			}
			startJoined()
			if err := c.nodes[1].AddReplica(ctx, 1, 4, cfg.RaftAddr); err != nil {
				t.Fatal(err)
			}
			if tc.snapshot {
				for range 2 * cfg.SnapshotEntries { // past the snapshot cadence on every node
					if _, err := c.nodes[1].Propose(ctx, 1, c.cmd()); err != nil {
						t.Fatal(err)
					}
				}
				waitFor(t, 10*time.Second, "node 4 takes a snapshot holding its promotion", func() bool {
					lr, err := c.nodes[4].nh.GetLogReader(1)
					_, voter := lr.Snapshot().Membership.Addresses[4]
					return err == nil && voter
				})
			}
			c.stop(4)
			startJoined()
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
