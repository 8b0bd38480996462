package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/membership"
)

// leads counts the account shards each node leads, as n's status says.
func leads(t *testing.T, n *Node) map[uint64]int {
	t.Helper()
	st, err := n.Status()
	if err != nil {
		t.Fatal(err)
	}
	count := map[uint64]int{1: 0, 2: 0, 3: 0}
	for _, s := range st.Shard {
		if s.Shard != membership.MetaShard {
			count[s.Leader]++
		}
	}
	return count
}

// TestRebalanceSpreadsTheLeadershipsARestartLeftUneven: node 2 is killed (the others take
// its leaderships) and started again, leading nothing; `cluster rebalance` through node 3
// moves leaderships to it until every node leads two of the six account shards, and a
// second rebalance moves nothing.
func TestRebalanceSpreadsTheLeadershipsARestartLeftUneven(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 6})
	c.StartAll()
	n2, n3 := c.Nodes[1], c.Nodes[2]
	c.WaitLeaders(30 * time.Second)
	n2.Kill()
	c.waitUntil(30*time.Second, "node 2's leaderships taken over", func() string {
		if l := leads(t, n3); l[2] != 0 || l[0] != 0 {
			return fmt.Sprintf("leaders %v", l)
		}
		return ""
	})
	n2.Start()
	c.WaitLeaders(30 * time.Second)
	c.WaitCaughtUp(30 * time.Second)

	out := c.MustRun("cluster", "rebalance", "--node", n3.AdminURL())
	if !strings.Contains(out, "→ node 2") {
		t.Errorf("rebalance said %q: nothing moved to node 2", out)
	}
	c.waitUntil(10*time.Second, "two account shards led by each node", func() string {
		if l := leads(t, n2); l[1] != 2 || l[2] != 2 || l[3] != 2 {
			return fmt.Sprintf("leaders %v", l)
		}
		return ""
	})
	if out := c.MustRun("cluster", "rebalance", "--node", n3.AdminURL()); out != "replicas and leaderships already even: nothing moved\n" {
		t.Errorf("a second rebalance said %q", out)
	}
}
