package faultproxy

import "fmt"

// Net is one proxy per ordered pair of N nodes: proxy (i→j) forwards to node j's real address
// and carries everything on connections node i opens to node j, both ways. Nodes are named by
// their index in the address list given to NewNet.
//
// Each node must reach its peers through Net: either its peer table lists peer j at
// PeerAddr(i, j), or every node keeps the same (real) peer addresses and its transport rewrites
// the address it dials with Route(i, addr). Prefer Route with dragonboat: its node registry
// panics when one replica is registered at two addresses ("inconsistent target"), which
// per-node peer tables cause as soon as a membership record or snapshot crosses nodes.
type Net struct {
	addrs []string
	links [][]*Proxy // links[from][to]; nil where from == to
}

// NewNet starts the N×(N−1) proxies for nodes listening on addrs, on loopback.
func NewNet(addrs []string) (*Net, error) { return NewNetOn(nil, addrs) }

// NewNetOn is NewNet with proxy (i→j) listening on hosts[i], where node i reaches this
// machine (its network namespace's gateway); nil hosts: loopback.
func NewNetOn(hosts, addrs []string) (*Net, error) {
	n := &Net{addrs: append([]string(nil), addrs...), links: make([][]*Proxy, len(addrs))}
	for from := range addrs {
		n.links[from] = make([]*Proxy, len(addrs))
		host := "127.0.0.1"
		if hosts != nil {
			host = hosts[from]
		}
		for to, target := range addrs {
			if from == to {
				continue
			}
			p, err := NewOn(host, target)
			if err != nil {
				_ = n.Close()
				return nil, fmt.Errorf("faultproxy: proxy %d→%d: %w", from, to, err)
			}
			n.links[from][to] = p
		}
	}
	return n, nil
}

// PeerAddr is where node from dials node to: the proxy (from→to), or from's own real address
// when from == to.
func (n *Net) PeerAddr(from, to int) string {
	if from == to {
		return n.addrs[from]
	}
	return n.links[from][to].Addr()
}

// Peers is node from's peer table: PeerAddr(from, j) for every node j.
func (n *Net) Peers(from int) []string {
	peers := make([]string, len(n.addrs))
	for to := range n.addrs {
		peers[to] = n.PeerAddr(from, to)
	}
	return peers
}

// Route maps a node's real address to where node from must dial it; any other address is
// returned as it is.
func (n *Net) Route(from int, addr string) string {
	for to, listen := range n.addrs {
		if listen == addr {
			return n.PeerAddr(from, to)
		}
	}
	return addr
}

// Link is the proxy (from→to), for faults Net has no verb for (Drop, Delay).
func (n *Net) Link(from, to int) *Proxy { return n.links[from][to] }

// Isolate black-holes every byte to and from node i. Faults add up: Isolate(0) then Cut(1, 2)
// leaves no pair talking.
func (n *Net) Isolate(i int) {
	for j := range n.addrs {
		if j != i {
			n.Cut(i, j)
		}
	}
}

// Cut black-holes everything between nodes i and j, both ways.
func (n *Net) Cut(i, j int) {
	n.links[i][j].Set(Blackhole)
	n.links[j][i].Set(Blackhole)
}

// OneWay black-holes what node from sends to node to, on connections either of them opened;
// what to sends to from still arrives.
func (n *Net) OneWay(from, to int) {
	n.links[from][to].SetOneWay(ClientToTarget, Blackhole)
	n.links[to][from].SetOneWay(TargetToClient, Blackhole)
}

// SetAll puts f on every proxy, both ways (a network condition between every pair).
func (n *Net) SetAll(f Fault) {
	n.each(func(p *Proxy) { p.Set(f) })
}

// Heal returns every proxy to Pass.
func (n *Net) Heal() {
	n.each(func(p *Proxy) { p.Heal() })
}

// Close closes every proxy.
func (n *Net) Close() error {
	var first error
	n.each(func(p *Proxy) {
		if err := p.Close(); err != nil && first == nil {
			first = err
		}
	})
	return first
}

func (n *Net) each(f func(*Proxy)) {
	for _, row := range n.links {
		for _, p := range row {
			if p != nil {
				f(p)
			}
		}
	}
}
