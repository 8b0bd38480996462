package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	_ "unsafe" // go:linkname, for the built-in TCP transport (see newTCPTransport)

	"github.com/lni/dragonboat/v4/config"
	"github.com/lni/dragonboat/v4/raftio"
)

// PeerRoutes is a test and diagnostic hook: a peer's real raft address → the address this
// node dials instead (a fault-injecting proxy in front of that peer). Memberships, snapshots
// and the certificate check keep the real addresses; only the TCP dial is redirected.
type PeerRoutes map[string]string

// ReadPeerRoutes reads a JSON object of routes ({"real host:port": "dialled host:port"}).
func ReadPeerRoutes(path string) (PeerRoutes, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("peer routes: %w", err)
	}
	var routes PeerRoutes
	if err := json.Unmarshal(b, &routes); err != nil {
		return nil, fmt.Errorf("peer routes %s: not a JSON object of host:port → host:port: %w", path, err)
	}
	return routes, routes.validate()
}

func (r PeerRoutes) validate() error {
	for from, to := range r {
		if !validAddr(from) || !validAddr(to) {
			return fmt.Errorf("peer routes: %q → %q: both must be host:port", from, to)
		}
	}
	return nil
}

// validAddr is dragonboat's own check of a raft address: host:port with a port in range.
func validAddr(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	p, err := strconv.Atoi(port)
	return err == nil && p > 0 && p <= 65535
}

// newTCPTransport is dragonboat's built-in TCP transport (the one every node uses), which it
// does not export. The rewrite wraps it rather than replacing it, so partition tests run
// the real transport with its TLS, framing and reconnects. A node registry
// (Expert.NodeRegistryFactory) cannot do this job: setting one switches dragonboat to
// addressing nodes by NodeHostID, and it then refuses raft addresses as member targets.
//
//go:linkname newTCPTransport github.com/lni/dragonboat/v4/internal/transport.NewTCPTransport
func newTCPTransport(config.NodeHostConfig, raftio.MessageHandler, raftio.ChunkHandler) raftio.ITransport

// raftTransportFactory makes the built-in transport with its raft connections watched
// (liveconn.go) and its dials rewritten by routes (none outside tests).
type raftTransportFactory struct{ routes PeerRoutes }

var _ config.TransportFactory = raftTransportFactory{}

func (f raftTransportFactory) Create(c config.NodeHostConfig, h raftio.MessageHandler, ch raftio.ChunkHandler) raftio.ITransport {
	return raftTransport{ITransport: newTCPTransport(c, h, ch), routes: f.routes}
}

func (raftTransportFactory) Validate(addr string) bool { return validAddr(addr) }

// raftTransport is dragonboat's TCP transport with watched raft connections, dialling
// routes[target] instead of target where a route is set. TLS still checks the peer's
// certificate against the dialled host, so a route must keep the host (a loopback proxy
// for loopback nodes).
type raftTransport struct {
	raftio.ITransport
	routes PeerRoutes
}

func (t raftTransport) route(target string) string {
	if to, ok := t.routes[target]; ok {
		return to
	}
	return target
}

func (t raftTransport) GetConnection(ctx context.Context, target string) (raftio.IConnection, error) {
	return dialLive(ctx, t.ITransport, t.route(target))
}

func (t raftTransport) GetSnapshotConnection(ctx context.Context, target string) (raftio.ISnapshotConnection, error) {
	return t.ITransport.GetSnapshotConnection(ctx, t.route(target))
}

// Dial dials addr, or the address r routes it to: the node's other node-to-node
// connections (the internal listener's) take the same routes as the raft transport.
func (r PeerRoutes) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if to, ok := r[addr]; ok {
		addr = to
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
