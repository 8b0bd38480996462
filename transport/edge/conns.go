package edge

import (
	"context"
	"net"
	"net/netip"
	"sync"

	"github.com/modelgate/modelgate/transport/peer"
)

// conns counts each client address's open connections to one listener. A connection over
// the address's cap is still served one answer — 429 with Retry-After in its API's envelope,
// and the connection closed — so a client learns why; past twice the cap it is closed at
// accept without a word, since answering costs a goroutine and buffers per connection. A
// trusted proxy's own address is not counted: its connections carry many clients.
type conns struct {
	limits func() (perIP int, trusted []netip.Prefix)
	mu     sync.Mutex
	open   map[netip.Addr]int
	of     map[net.Conn]netip.Addr // the counted connections and their address
}

func newConns(limits func() (int, []netip.Prefix)) *conns {
	return &conns{limits: limits, open: map[netip.Addr]int{}, of: map[net.Conn]netip.Addr{}}
}

// admit counts c and reports whether it is over its address's cap.
func (cs *conns) admit(c net.Conn) (over bool) {
	perIP, trusted := cs.limits()
	a, counted := cs.addr(c, trusted)
	if !counted {
		return false
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := cs.open[a]
	cs.open[a] = n + 1
	cs.of[c] = a
	return n >= perIP
}

// atCeiling reports whether c's address already has twice its cap open.
func (cs *conns) atCeiling(c net.Conn) bool {
	perIP, trusted := cs.limits()
	a, counted := cs.addr(c, trusted)
	return counted && cs.count(a) >= 2*perIP
}

// addr is the address c counts under; false for a trusted proxy or no address.
func (cs *conns) addr(c net.Conn, trusted []netip.Prefix) (netip.Addr, bool) {
	a := peer.AddrOf(c.RemoteAddr().String())
	return a, a.IsValid() && !peer.Trusted(a, trusted)
}

// closed uncounts c (a no-op for one never counted).
func (cs *conns) closed(c net.Conn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	a, ok := cs.of[c]
	if !ok {
		return
	}
	delete(cs.of, c)
	if cs.open[a] <= 1 {
		delete(cs.open, a)
	} else {
		cs.open[a]--
	}
}

// count is a's open connections.
func (cs *conns) count(a netip.Addr) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.open[a]
}

type overKey struct{}

// markOver marks the requests of c, a connection over its address's cap.
func markOver(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, overKey{}, c)
}

// overConn is the connection of a request marked by markOver, nil for any other.
func overConn(ctx context.Context) net.Conn { c, _ := ctx.Value(overKey{}).(net.Conn); return c }
