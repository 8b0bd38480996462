package peer

import (
	"net"
	"net/http"
	"net/netip"
)

// PublicBase is the gateway's address for links it hands out (an image url, a payment page's
// way back): configured (server.public_url) when set; else the host a trusted proxy forwards,
// with the scheme it reports (Of); else this listener's own address, the connection's local
// end (the listen address, or the interface reached when listening on all). Never the
// request's Host or anyone else's forwarding headers: a client could point a link it shares,
// or a page that shows it, anywhere.
func PublicBase(r *http.Request, configured string) string {
	if configured != "" {
		return configured
	}
	if p := Of(r); p.ForwardedHost != "" {
		return p.Scheme() + "://" + p.ForwardedHost
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr)
	if !ok {
		return "" // no listener (a test's bare handler): a relative link beats a wrong one
	}
	ap := local.AddrPort()
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	// A zone (fe80::1%eth0) means nothing to the client and would need escaping in a URL.
	return scheme + "://" + netip.AddrPortFrom(ap.Addr().WithZone("").Unmap(), ap.Port()).String()
}
