// Package edge bounds what a slow or greedy client can hold of a listener: the time its
// request body may take (server.body_timeout, body_min_rate), the memory request bodies hold
// together (server.max_body_bytes_in_flight), its address's open connections
// (server.max_conns_per_ip) and how long a write may wait for it to read (WriteTimeout). A
// request whose body goes unread is answered with its HTTP/1 connection closed, so no
// refusal waits for a body that never comes. docs/running.md, "Slow and greedy clients".
package edge

import (
	"cmp"
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// Config is what a Guard works with.
type Config struct {
	// Server is the settings in force (the catalog's, read at each request and connection).
	Server func() *catalog.Server
	// Refuse answers a refusal of the guard's own (a connection over its cap) in the
	// envelope of the API r belongs to.
	Refuse func(w http.ResponseWriter, r *http.Request, p *Problem)
	// Refused counts a refusal by its Reason (metrics); nil: not counted.
	Refused func(reason string)
	// Memory is what the process may use, for the default in-flight cap; 0: Memory().
	Memory int64
	Logger *slog.Logger
	// WriteTimeout and Grace replace catalog.WriteTimeout and catalog.BodyGrace (tests).
	WriteTimeout, Grace time.Duration
}

// Guard is the edge of one listener: its middleware (Handler), its connection hooks
// (Install) and its listener (Listener).
type Guard struct {
	cfg        Config
	defaultCap int64 // the in-flight cap when the catalog sets none (before max_body_bytes)
	budget     *Budget
	conns      *conns
}

// New builds a Guard, sizing the default in-flight cap from the process's memory.
func New(cfg Config) *Guard {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Refused == nil {
		cfg.Refused = func(string) {}
	}
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, catalog.WriteTimeout)
	cfg.Grace = cmp.Or(cfg.Grace, catalog.BodyGrace)
	g := &Guard{cfg: cfg}
	mem, source := cfg.Memory, "configured"
	if mem == 0 {
		var ok bool
		if mem, source, ok = Memory(); !ok {
			mem, source = 2<<30, "unknown (2 GiB assumed)"
		}
	}
	g.defaultCap = DefaultBodyBudget(mem)
	g.budget = NewBudget(func() int64 { return g.bodyCap(cfg.Server()) })
	g.conns = newConns(func() (int, []netip.Prefix) {
		s := cfg.Server()
		return s.MaxConnsPerIP, s.TrustedProxies
	})
	if s := cfg.Server(); s.MaxBodyBytesInFlight == 0 {
		cfg.Logger.Info("request bodies in flight capped from memory (server.max_body_bytes_in_flight: 0)",
			"cap_bytes", g.bodyCap(s), "memory_bytes", mem, "memory_from", source)
	}
	return g
}

// bodyCap is the in-flight cap under s: the catalog's, or the default (at least one body).
func (g *Guard) bodyCap(s *catalog.Server) int64 {
	if s.MaxBodyBytesInFlight > 0 {
		return s.MaxBodyBytesInFlight
	}
	return max(g.defaultCap, s.MaxBodyBytes)
}

// Budget is the node's count of body bytes in flight.
func (g *Guard) Budget() *Budget { return g.budget }

// BodyCap is the in-flight cap in force.
func (g *Guard) BodyCap() int64 { return g.bodyCap(g.cfg.Server()) }

// Conns is addr's open connections, as the per-address cap counts them.
func (g *Guard) Conns(addr netip.Addr) int { return g.conns.count(addr) }

// Handler bounds each request of next: its body's deadline and rate and its share of the
// bytes in flight (through ReadBody), each write's deadline, and the Connection header. A
// request on a connection over its address's cap is refused here, before next.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := g.cfg.Server()
		st := &request{start: time.Now(), timeout: s.BodyTimeout, minRate: s.BodyMinRate, grace: g.cfg.Grace,
			budget: g.budget, refused: g.cfg.Refused}
		defer st.release()
		r = withState(r, st)
		ew := &writer{ResponseWriter: w, rc: http.NewResponseController(w), st: st, r: r, timeout: g.cfg.WriteTimeout}
		if over := overConn(r.Context()); over != nil {
			// Refused and to be closed: it stops counting now, before its client can read
			// the answer and dial again (the ConnState hook's uncount comes later, a no-op).
			g.conns.closed(over)
			ew.closeConn = true
			g.cfg.Refused(ReasonConnCap)
			g.cfg.Refuse(ew, r, tooManyConns(s.MaxConnsPerIP))
		} else {
			next.ServeHTTP(ew, r)
		}
		ew.finish()
	})
}

// Install sets srv's connection hooks, which keep the per-address count (ConnContext,
// ConnState).
func (g *Guard) Install(srv *http.Server) {
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if g.conns.admit(c) {
			return markOver(ctx, c)
		}
		return ctx
	}
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed || s == http.StateHijacked {
			g.conns.closed(c)
		}
	}
}

// Listener closes, at accept, a connection whose address already has twice its cap open,
// before net/http spends a goroutine on it; the rest are counted by Install's hooks.
func (g *Guard) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, g: g} }

type listener struct {
	net.Listener
	g *Guard
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.g.conns.atCeiling(c) {
			c.Close()
			l.g.cfg.Refused(ReasonConnCeiling)
			continue
		}
		return c, nil
	}
}
