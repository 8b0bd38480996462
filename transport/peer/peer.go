// Package peer says who is on the other end of a request: the client's address, and the
// scheme and host it used to reach the gateway. Forwarding headers (X-Forwarded-For,
// X-Forwarded-Proto, X-Forwarded-Host, Forwarded) are believed only when the connection comes
// from a trusted proxy; from anyone else they are ignored, since a client can write them.
//
// Every throttle, log line and link reads the client through Of, so all of them agree.
package peer

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Info is what the gateway knows of a request's client.
type Info struct {
	// Addr is the client's address: the connection's, or behind trusted proxies the first
	// untrusted address they report (the zero Addr when RemoteAddr is not an address).
	Addr netip.Addr
	// HTTPS says the client reached the gateway over TLS: this listener's, or a trusted
	// proxy's (its forwarded proto).
	HTTPS bool
	// ForwardedHost is the host a trusted proxy says the client asked for; "" when there is
	// no trusted proxy or it said none. A request's own Host header is the client's to write.
	ForwardedHost string
	// Proxied says the connection came from a trusted proxy.
	Proxied bool
}

// Scheme is "https" or "http".
func (i Info) Scheme() string {
	if i.HTTPS {
		return "https"
	}
	return "http"
}

// String is the client's address for logs and throttle keys ("" when unknown).
func (i Info) String() string {
	if !i.Addr.IsValid() {
		return ""
	}
	return i.Addr.String()
}

type ctxKey struct{}

// Resolve puts each request's Info in its context for Of, reading forwarding headers only
// from the proxies trusted returns (read per request: a catalog reload changes them).
func Resolve(trusted func() []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := Read(r, trusted())
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, info)))
	})
}

// Of is r's Info as Resolve found it; without Resolve (a test's bare handler) it is read
// from the connection alone, trusting no proxy.
func Of(r *http.Request) Info {
	if info, ok := r.Context().Value(ctxKey{}).(Info); ok {
		return info
	}
	return Read(r, nil)
}

// Read works out r's Info, believing forwarding headers from the trusted proxies only.
func Read(r *http.Request, trusted []netip.Prefix) Info {
	info := Info{Addr: remoteAddr(r.RemoteAddr), HTTPS: r.TLS != nil}
	if !isTrusted(info.Addr, trusted) {
		return info
	}
	info.Proxied = true
	hops, proto, host := forwarded(r.Header)
	// The client is the nearest hop no trusted proxy owns: walking from the right, every
	// address a trusted proxy appended is passed over, and what a client wrote itself on the
	// left is never reached while an untrusted hop stands between.
	for i := len(hops) - 1; i >= 0; i-- {
		a := hops[i]
		if !a.IsValid() {
			break // an obfuscated or unparsable hop: the last address known stands
		}
		info.Addr = a
		if !isTrusted(a, trusted) {
			break
		}
	}
	switch strings.ToLower(proto) {
	case "https":
		info.HTTPS = true
	case "http":
		info.HTTPS = false
	}
	if ValidHost(host) {
		info.ForwardedHost = host
	}
	return info
}

// forwarded reads the hops, proto and host of Forwarded (RFC 7239) when present, else of
// X-Forwarded-For, -Proto and -Host. Proto and host are the nearest proxy's (the last value):
// a proxy that appends rather than overwrites would otherwise pass on the client's own.
func forwarded(h http.Header) (hops []netip.Addr, proto, host string) {
	if fw := h.Values("Forwarded"); len(fw) > 0 {
		for _, line := range fw {
			for _, elem := range strings.Split(line, ",") {
				for _, pair := range strings.Split(elem, ";") {
					k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
					if !ok {
						continue
					}
					v = strings.Trim(strings.TrimSpace(v), `"`)
					switch strings.ToLower(k) {
					case "for":
						hops = append(hops, hostAddr(v))
					case "proto":
						proto = v
					case "host":
						host = v
					}
				}
			}
		}
		return hops, proto, host
	}
	for _, line := range h.Values("X-Forwarded-For") {
		for _, v := range strings.Split(line, ",") {
			if v = strings.TrimSpace(v); v != "" {
				hops = append(hops, hostAddr(v))
			}
		}
	}
	return hops, last(h.Values("X-Forwarded-Proto")), last(h.Values("X-Forwarded-Host"))
}

// last is the last comma-separated value of a header's lines.
func last(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	vals := strings.Split(lines[len(lines)-1], ",")
	return strings.TrimSpace(vals[len(vals)-1])
}

// hostAddr reads an address as forwarding headers write it: 1.2.3.4, 1.2.3.4:5678,
// [2001:db8::1], [2001:db8::1]:5678 or 2001:db8::1. Anything else is the zero Addr.
func hostAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}

// AddrOf is the address of a connection's remote end (RemoteAddr's text), the zero Addr when
// it is none: what a per-connection count keys on.
func AddrOf(remote string) netip.Addr { return remoteAddr(remote) }

// Trusted reports whether a is one of the trusted proxies.
func Trusted(a netip.Addr, trusted []netip.Prefix) bool { return isTrusted(a, trusted) }

func remoteAddr(s string) netip.Addr {
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.WithZone("").Unmap()
}

func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	if !a.IsValid() {
		return false
	}
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ValidHost accepts host[:port] (names, IPv4, bracketed IPv6) and nothing that could change a
// link's meaning (a path, a user, a query, spaces).
func ValidHost(h string) bool {
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
