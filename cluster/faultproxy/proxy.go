// Package faultproxy is a fault-injecting TCP proxy for partition tests: it stands between two
// nodes and passes, drops, black-holes or delays their traffic, per direction, switched while
// the test runs. Net wires one proxy per ordered pair of N nodes, so a test can isolate a node,
// cut a pair or cut one way only.
//
// A test gives each node a peer table in which node i reaches node j at Net.PeerAddr(i, j),
// the address of the proxy (i→j), and lets every node listen on its real address:
//
//	pairs, err := faultproxy.NewNet([]string{addr0, addr1, addr2}) // each node's real raft address
//	defer pairs.Close()
//	// start node i dialling peer j at pairs.PeerAddr(i, j) (or rewriting with pairs.Route(i, addr))
//	pairs.Isolate(0)   // node 0 hears nobody and nobody hears it
//	pairs.OneWay(1, 2) // 1's bytes no longer reach 2; 2's still reach 1
//	pairs.Heal()       // every pair passes again; hung connections are reset so nodes redial
//
// Proxying outbound dials per pair is enough because a Raft engine accepts connections on its
// own address and takes the sender from the message, not from the socket: everything i sends
// to j, and everything j answers on a connection i opened, crosses proxy (i→j).
package faultproxy

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// dialTimeout bounds the proxy's own dial of the target; a target that does not answer in it
// is a refused link for the client.
const dialTimeout = 2 * time.Second

// Stats are a proxy's counters since it started.
type Stats struct {
	// Accepted counts connections the proxy accepted, dropped ones included.
	Accepted int64
	// Open counts connections the proxy holds now (forwarding or hung).
	Open int64
	// Forwarded counts bytes delivered per Direction; Discarded bytes a black hole swallowed.
	Forwarded [2]int64
	Discarded [2]int64
}

// Proxy listens on a loopback port and forwards each accepted connection to a target address,
// both ways, under the faults set for each direction. It is safe for concurrent use.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex // guards faults, links, closed and every link's state
	faults [2]Fault
	links  map[*link]struct{}
	closed bool

	wg        sync.WaitGroup
	accepted  atomic.Int64
	forwarded [2]atomic.Int64
	discarded [2]atomic.Int64
}

// New starts a proxy on 127.0.0.1 (a free port) forwarding to target.
func New(target string) (*Proxy, error) { return NewOn("127.0.0.1", target) }

// NewOn is New listening on host (an address of this machine, on a free port): a proxy that
// nodes in other network namespaces reach at their side's gateway.
func NewOn(host, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, links: map[*link]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// Set puts f on both directions.
func (p *Proxy) Set(f Fault) { p.setFaults(func(fs *[2]Fault) { fs[0], fs[1] = f, f }) }

// SetOneWay puts f on dir only, leaving the other direction as it is.
func (p *Proxy) SetOneWay(dir Direction, f Fault) {
	p.setFaults(func(fs *[2]Fault) { fs[dir] = f })
}

// Heal returns both directions to Pass.
func (p *Proxy) Heal() { p.Set(Pass) }

// Fault is what dir does now.
func (p *Proxy) Fault(dir Direction) Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.faults[dir]
}

// setFaults applies change, then ends the connections the new faults cannot keep: all of them
// under Drop, and those a lifted black hole leaves broken. A connection that lost bytes has a
// hole in its stream, and one opened while both ways were black-holed was never dialled
// through; resuming either would hand the ends a corrupt or half-made link. They are reset
// rather than left hung because Raft engines notice a dead peer only by a failing write
// (dragonboat's sender never reads), which a discarding proxy never produces: left open, they
// would keep the pair partitioned after the heal. A reset makes the ends redial.
func (p *Proxy) setFaults(change func(*[2]Fault)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	change(&p.faults)
	for l := range p.links {
		if p.dropping() || l.brokenUnder(p.faults) {
			p.endLocked(l, true)
		}
	}
}

// dropping reports whether Drop is on either direction; p.mu is held.
func (p *Proxy) dropping() bool { return p.faults[0] == Drop || p.faults[1] == Drop }

// Stats reads the counters.
func (p *Proxy) Stats() Stats {
	p.mu.Lock()
	open := int64(len(p.links))
	p.mu.Unlock()
	s := Stats{Accepted: p.accepted.Load(), Open: open}
	for d := range s.Forwarded {
		s.Forwarded[d] = p.forwarded[d].Load()
		s.Discarded[d] = p.discarded[d].Load()
	}
	return s
}

// Close stops the listener and every connection and waits for all of the proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	err := p.ln.Close()
	for l := range p.links {
		p.endLocked(l, false)
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(5 * time.Millisecond) // a transient error (EMFILE): the listener is still ours
			continue
		}
		p.accepted.Add(1)
		p.mu.Lock()
		if p.closed || p.dropping() {
			p.mu.Unlock()
			closeConn(c, true)
			continue
		}
		faults := p.faults
		ctx, cancel := context.WithCancel(context.Background())
		l := &link{p: p, client: c, cancel: cancel, done: make(chan struct{})}
		// Both ways black-holed: a real network would lose the handshake, so the target is
		// never dialled and the connection hangs.
		l.hung = faults[ClientToTarget] == Blackhole && faults[TargetToClient] == Blackhole
		p.links[l] = struct{}{}
		p.wg.Add(1)
		p.mu.Unlock()
		go l.run(ctx)
	}
}

// endLocked closes l's connections (with a reset when rst) once; p.mu is held.
func (p *Proxy) endLocked(l *link, rst bool) {
	if l.ended {
		return
	}
	l.ended = true
	delete(p.links, l)
	l.cancel()
	close(l.done)
	closeConn(l.client, rst)
	if l.target != nil {
		closeConn(l.target, rst)
	}
}

func (p *Proxy) end(l *link, rst bool) {
	p.mu.Lock()
	p.endLocked(l, rst)
	p.mu.Unlock()
}

// closeConn closes c; with rst the peer gets a reset instead of an orderly end of stream.
func closeConn(c net.Conn, rst bool) {
	if tc, ok := c.(*net.TCPConn); ok && rst {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
