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
	deadline := time.Now().Add(d)
	var why string
	for time.Now().Before(deadline) {
		if why = c.leadersAgreed(); why == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("no agreed leader of every shard within %s: %s", d, why)
}

// leadersAgreed is "" when every shard has one leader all running nodes agree on, else why
// not.
func (c *Cluster) leadersAgreed() string {
	leaders := map[uint64]uint64{}
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		st, err := n.Status()
		if err != nil {
			return err.Error()
		}
		for _, s := range st.Shard {
			switch prev, seen := leaders[s.Shard]; {
			case s.Leader == 0:
				return fmt.Sprintf("node %d knows no leader of shard %d", n.ID, s.Shard)
			case seen && prev != s.Leader:
				return fmt.Sprintf("shard %d: leader %d on one node, %d on node %d", s.Shard, prev, s.Leader, n.ID)
			}
			leaders[s.Shard] = s.Leader
		}
	}
	return ""
}
