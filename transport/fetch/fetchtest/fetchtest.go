// Package fetchtest has the servers the tests of the gateway's own downloads aim at: an
// internal one on loopback, standing for what only the gateway reaches, that counts the
// connections it accepts; and link hosts on 127.0.0.2, standing for hosts of the internet
// (a test has no public address to listen on), which the tests admit with fetch_allow.
package fetchtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"
)

// PublicPrefix is the fetch_allow that admits the link hosts, as the catalog writes it.
const PublicPrefix = "127.0.0.2/32"

// Internal is a server on 127.0.0.1 that answers a page labelled image/png (an admin page,
// instance credentials) and counts the connections it accepts.
type Internal struct {
	URL, Port string
	accepted  atomic.Int64
}

// Accepted is how many connections the server has accepted.
func (in *Internal) Accepted() int64 { return in.accepted.Load() }

// StartInternal starts an Internal server, closed when the test ends.
func StartInternal(tb testing.TB) *Internal {
	tb.Helper()
	in := &Internal{}
	ln := listen(tb, "127.0.0.1:0")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(Page))
	srv.Listener = counting{ln, &in.accepted}
	srv.Start()
	tb.Cleanup(srv.Close)
	in.URL = srv.URL
	_, in.Port, _ = net.SplitHostPort(ln.Addr().String())
	return in
}

// Page answers an HTML page labelled image/png.
func Page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "image/png")
	fmt.Fprint(w, "<html><body>internal admin page</body></html>")
}

// Public starts h on 127.0.0.2 and returns its URL; it is closed when the test ends.
func Public(tb testing.TB, h http.Handler) string {
	tb.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.Listener = listen(tb, "127.0.0.2:0")
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv.URL
}

// Allow is PublicPrefix as a fetch.Want's Allow.
func Allow() []netip.Prefix { return []netip.Prefix{netip.MustParsePrefix(PublicPrefix)} }

func listen(tb testing.TB, addr string) net.Listener {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	return ln
}

type counting struct {
	net.Listener
	n *atomic.Int64
}

func (l counting) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
