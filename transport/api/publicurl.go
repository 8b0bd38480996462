package api

import (
	"net"
	"net/http"
	"net/netip"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/peer"
)

// publicBase is the gateway's address for links in an answer (image url, video
// metadata.url): server.public_url when the catalog sets it; else the host a trusted proxy
// forwards, with the scheme it reports (peer.Of); else this listener's own address, the
// connection's local end (the listen address, or the interface reached when listening on
// all). Never the request's Host or anyone else's forwarding headers: a client could point
// a link it shares, or a page that shows it, anywhere.
func publicBase(r *http.Request, cat *catalog.Catalog) string {
	if u := cat.Server.PublicURL; u != "" {
		return u
	}
	if p := peer.Of(r); p.ForwardedHost != "" {
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
