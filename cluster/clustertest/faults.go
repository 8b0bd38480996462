package clustertest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/modelgate/modelgate/cluster/faultproxy"
)

// startNet starts the fault proxies between the nodes and writes each node's peer routes
// (peer j's real raft address → proxy (i→j)), which the node reads at start
// (node.PeerRoutesEnv). The memberships keep the real addresses.
func (c *Cluster) startNet() {
	c.t.Helper()
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.RaftAddr
	}
	var hosts []string // where each node reaches the proxies: its namespace's gateway
	if c.ns != nil {
		hosts = c.ns.gws
	}
	pairs, err := faultproxy.NewNetOn(hosts, addrs)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { pairs.Close() })
	c.Net = pairs
	for i, n := range c.Nodes {
		routes := map[string]string{}
		for _, addr := range addrs {
			if to := pairs.Route(i, addr); to != addr {
				routes[addr] = to
			}
		}
		b, err := json.Marshal(routes)
		if err != nil {
			c.t.Fatal(err)
		}
		n.routes = filepath.Join(c.Dir, fmt.Sprintf("routes-node%d.json", n.ID))
		if err := os.WriteFile(n.routes, b, 0o600); err != nil {
			c.t.Fatal(err)
		}
	}
}

// index is n's place in Net.
func (c *Cluster) index(n *Node) int {
	c.t.Helper()
	if c.Net == nil {
		c.t.Fatal("clustertest: a fault needs Options.Faults")
	}
	for i, m := range c.Nodes {
		if m == n && m.routes != "" {
			return i
		}
	}
	c.t.Fatalf("clustertest: node %d is not behind the fault proxies", n.ID)
	return -1
}

// Isolate black-holes everything to and from n's raft transport (its HTTP API still
// answers): a partition with n alone on the minority side.
func (c *Cluster) Isolate(n *Node) { c.Net.Isolate(c.index(n)) }

// Cut black-holes the raft traffic between a and b, both ways.
func (c *Cluster) Cut(a, b *Node) { c.Net.Cut(c.index(a), c.index(b)) }

// OneWay black-holes what from sends to to; what to sends to from still arrives.
func (c *Cluster) OneWay(from, to *Node) { c.Net.OneWay(c.index(from), c.index(to)) }

// Link is the proxy carrying what from sends to to (for Delay and Drop).
func (c *Cluster) Link(from, to *Node) *faultproxy.Proxy {
	return c.Net.Link(c.index(from), c.index(to))
}

// Heal lifts every fault between the nodes.
func (c *Cluster) Heal() {
	c.t.Helper()
	if c.Net == nil {
		c.t.Fatal("clustertest: Heal needs Options.Faults")
	}
	c.Net.Heal()
}
