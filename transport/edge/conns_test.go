package edge_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence/catalog"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// The per-address connection cap: connections up to the cap are served; one over it gets
// 429 with Retry-After and is closed, uncounted before its answer can be read (so its client,
// dialling again at once, meets the count without it); at twice the cap a new connection is
// closed at accept without an answer; a closed connection is uncounted; a trusted proxy's are
// never counted.
func TestConnsPerIPCap(t *testing.T) {
	f := newFixture(t, fixtureOpts{server: catalog.Server{MaxConnsPerIP: 2}})
	get := func(c *raw) (int, string, bool) {
		c.head("GET", "/read")
		resp, body := c.response()
		return resp.StatusCode, body, resp.Close
	}
	// Two connections, kept alive.
	var kept []*raw
	for range 2 {
		c := f.dial(t)
		if status, body, closed := get(c); status != 200 || body != "0 bytes" || closed {
			t.Fatalf("a connection within the cap: %d %q, closed %v", status, body, closed)
		}
		kept = append(kept, c)
	}
	testutil.WaitFor(t, "two connections counted", func() bool { return f.g.Conns(loopback) == 2 })

	over := f.dial(t)
	over.head("GET", "/read")
	resp, body := over.response()
	if resp.StatusCode != 429 || code(body) != "too_many_connections" || resp.Header.Get("Retry-After") != "1" || !resp.Close {
		t.Fatalf("a connection over the cap: %d %s, Retry-After %q, closed %v; want 429 too_many_connections, 1, closed",
			resp.StatusCode, body, resp.Header.Get("Retry-After"), resp.Close)
	}
	if got := f.g.Conns(loopback); got != 2 {
		t.Errorf("%d connections counted once the refusal was read, want 2 (the refused one not counted)", got)
	}
	if err := over.closedWithin(2 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Two more open and silent (over the cap, counted): the fifth meets the ceiling.
	for range 2 {
		f.dial(t)
	}
	testutil.WaitFor(t, "four connections counted", func() bool { return f.g.Conns(loopback) == 4 })
	dropped := f.dial(t)
	if err := dropped.closedWithin(2 * time.Second); err != nil {
		t.Fatalf("a connection at twice the cap: %v", err)
	}
	if got := f.g.Conns(loopback); got != 4 {
		t.Errorf("%d connections counted after the drop, want 4", got)
	}

	// Behind a trusted proxy the proxy's own connections are not capped.
	s := *f.server.Load()
	s.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	f.server.Store(&s)
	proxied := f.dial(t)
	if status, body, _ := get(proxied); status != 200 || body != "0 bytes" {
		t.Fatalf("a trusted proxy's connection: %d %q, want 200", status, body)
	}
	if got := f.g.Conns(loopback); got != 4 {
		t.Errorf("%d connections counted with the proxy's, want 4", got)
	}
	for _, c := range kept {
		c.conn.Close()
	}
	testutil.WaitFor(t, "closed connections uncounted", func() bool { return f.g.Conns(loopback) == 2 })
	if got, want := f.refusals(), map[string]int{"conns_per_ip": 1, "conns_per_ip_closed": 1}; !equalCounts(got, want) {
		t.Errorf("refusals %v, want %v", got, want)
	}
}
