package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/transport/node"
)

// Status is the node's GET /admin/cluster/status.
func (n *Node) Status() (node.StatusView, error) {
	status, b := n.Admin(http.MethodGet, "/admin/cluster/status", nil)
	var st node.StatusView
	if status != http.StatusOK {
		return st, fmt.Errorf("node %d: status %d: %s", n.ID, status, b)
	}
	return st, json.Unmarshal(b, &st)
}

// WaitLeaders waits until every running node sees a leader of every shard it runs, the
// same one as every other running node of that shard, and fails the test after d.
func (c *Cluster) WaitLeaders(d time.Duration) {
	c.t.Helper()
	c.waitUntil(d, "no agreed leader of every shard", c.leadersAgreed)
}

// waitUntil polls check (every 50 ms) until it returns "" and fails the test after d with
// what and check's last answer.
func (c *Cluster) waitUntil(d time.Duration, what string, check func() string) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	why := check()
	for ; why != "" && time.Now().Before(deadline); why = check() {
		time.Sleep(50 * time.Millisecond)
	}
	if why != "" {
		c.t.Fatalf("%s within %s: %s", what, d, why)
	}
}

// leadersAgreed is "" when every shard has one leader all running nodes agree on, else why
// not.
func (c *Cluster) leadersAgreed() string {
	leaders := map[uint64]uint64{}
	return c.eachShard(func(n *Node, s node.ShardView) string {
		switch prev, seen := leaders[s.Shard]; {
		case s.Leader == 0:
			return fmt.Sprintf("node %d knows no leader of shard %d", n.ID, s.Shard)
		case seen && prev != s.Leader:
			return fmt.Sprintf("shard %d: leader %d on one node, %d on node %d", s.Shard, prev, s.Leader, n.ID)
		}
		leaders[s.Shard] = s.Leader
		return ""
	})
}

// eachShard calls f with every shard in the status of every running node, and returns the
// first thing f says is wrong (or a node's status error), "" when none.
func (c *Cluster) eachShard(f func(n *Node, s node.ShardView) string) string {
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		st, err := n.Status()
		if err != nil {
			return err.Error()
		}
		for _, s := range st.Shard {
			if why := f(n, s); why != "" {
				return why
			}
		}
	}
	return ""
}

// WaitCaughtUp waits until every running node reports every shard it runs with lag 0 and the
// same applied index as the shard's other running replicas (an idle, healthy cluster), and
// fails the test after d saying which replica lags.
func (c *Cluster) WaitCaughtUp(d time.Duration) {
	c.t.Helper()
	c.waitUntil(d, "the replicas did not catch up", c.caughtUp)
}

func (c *Cluster) caughtUp() string {
	applied := map[uint64]uint64{}
	return c.eachShard(func(n *Node, s node.ShardView) string {
		prev, seen := applied[s.Shard]
		switch {
		case s.Lag != 0 || s.Applied != s.LastIndex || s.Applied == 0:
			return fmt.Sprintf("node %d shard %d: applied %d, last index %d, lag %d", n.ID, s.Shard, s.Applied, s.LastIndex, s.Lag)
		case seen && prev != s.Applied:
			return fmt.Sprintf("shard %d: applied %d on one node, %d on node %d", s.Shard, prev, s.Applied, n.ID)
		}
		applied[s.Shard] = s.Applied
		return ""
	})
}
