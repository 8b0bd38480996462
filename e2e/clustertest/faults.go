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
	internal := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i], internal[i] = n.RaftAddr, n.InternalAddr
	}
	var hosts []string // where each node reaches the proxies: its namespace's gateway
	if c.ns != nil {
		hosts = c.ns.gws
	}
	c.Net, c.Internal = c.proxies(hosts, addrs), c.proxies(hosts, internal)
	for i, n := range c.Nodes {
		routes := map[string]string{}
		for _, net := range []*faultproxy.Net{c.Net, c.Internal} {
			for _, addr := range append(addrs, internal...) {
				if to := net.Route(i, addr); to != addr {
					routes[addr] = to
				}
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

// proxies is a fault proxy for each pair of nodes in front of addrs (one per node).
func (c *Cluster) proxies(hosts, addrs []string) *faultproxy.Net {
	pairs, err := faultproxy.NewNetOn(hosts, addrs)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { pairs.Close() })
	return pairs
}

// both applies a fault to the raft transports' proxies and the internal listeners'.
func (c *Cluster) both(f func(*faultproxy.Net)) {
	f(c.Net)
	f(c.Internal)
}

// SetAll puts f on every link between the nodes, raft and internal alike.
func (c *Cluster) SetAll(f faultproxy.Fault) {
	c.t.Helper()
	c.index(c.Nodes[0])
	c.both(func(n *faultproxy.Net) { n.SetAll(f) })
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

// Isolate black-holes everything to and from n's raft transport and internal listener (its
// HTTP API still answers): a partition with n alone on the minority side.
func (c *Cluster) Isolate(n *Node) {
	i := c.index(n)
	c.both(func(net *faultproxy.Net) { net.Isolate(i) })
}

// Cut black-holes the raft and internal traffic between a and b, both ways.
func (c *Cluster) Cut(a, b *Node) {
	i, j := c.index(a), c.index(b)
	c.both(func(net *faultproxy.Net) { net.Cut(i, j) })
}

// OneWay black-holes what from sends to to; what to sends to from still arrives.
func (c *Cluster) OneWay(from, to *Node) {
	i, j := c.index(from), c.index(to)
	c.both(func(net *faultproxy.Net) { net.OneWay(i, j) })
}

// Link is the proxy carrying what from's raft transport sends to to (for Delay and Drop).
func (c *Cluster) Link(from, to *Node) *faultproxy.Proxy {
	return c.Net.Link(c.index(from), c.index(to))
}

// Heal lifts every fault between the nodes.
func (c *Cluster) Heal() {
	c.t.Helper()
	if c.Net == nil {
		c.t.Fatal("clustertest: Heal needs Options.Faults")
	}
	c.both((*faultproxy.Net).Heal)
}
