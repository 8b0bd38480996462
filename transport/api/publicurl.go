package api

import (
	"net/http"
	"strings"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// publicBase is the gateway's address for links in an answer (image url, video
// metadata.url): server.public_url when the catalog sets it, else the scheme and host this
// client used, as a reverse proxy reports them in X-Forwarded-Proto and X-Forwarded-Host —
// never the listen address. The forwarded headers are taken from any client: the link goes
// back only to the client that sent them, which could as well have sent that Host. Links
// that reach anyone else (e-mails) must use public_url alone.
func publicBase(r *http.Request, cat *catalog.Catalog) string {
	if u := cat.Server.PublicURL; u != "" {
		return u
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := strings.ToLower(firstValue(r.Header.Get("X-Forwarded-Proto"))); p == "https" || p == "http" {
		scheme = p
	}
	host := r.Host
	if h := firstValue(r.Header.Get("X-Forwarded-Host")); validHost(h) {
		host = h
	}
	if !validHost(host) {
		return "" // no usable host (an HTTP/1.0 request): a relative link beats a wrong one
	}
	return scheme + "://" + host
}

// firstValue is the first of a comma-separated header value: the client-side hop, when
// several proxies appended theirs.
func firstValue(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// validHost accepts host[:port] (names, IPv4, bracketed IPv6) and nothing that could
// change the link's meaning (a path, a user, a query, spaces).
func validHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(".-_:[]", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}
