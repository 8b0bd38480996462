package check

import (
	"net/netip"
	"strconv"
	"strings"
)

// PrivateHost reports whether a URL's host (as url.URL.Hostname gives it) names this machine
// or a private network rather than the internet: localhost and names under .localhost,
// .internal (metadata.google.internal) and .local, and IP addresses that are loopback, private
// (RFC 1918, fc00::/7), link-local (169.254.0.0/16, where clouds serve instance metadata and
// credentials), carrier-grade NAT, unspecified or multicast — written as a URL fetcher reads
// them, so 2130706433, 0x7f.1 and 127.1 are 127.0.0.1. A name that resolves to such an address
// is not caught: the provider resolves it, not the gateway.
func PrivateHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" {
		return true
	}
	for _, suffix := range []string{".localhost", ".internal", ".local"} {
		if strings.HasSuffix(h, suffix) {
			return true
		}
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		var ok bool
		if a, ok = numericIPv4(h); !ok {
			return false
		}
	}
	a = a.Unmap()
	return !a.IsGlobalUnicast() || a.IsPrivate() || sharedSpace.Contains(a) || thisNetwork.Contains(a)
}

var (
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10") // carrier-grade NAT (RFC 6598)
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
)

// numericIPv4 reads the forms of an IPv4 address inet_aton accepts: one to four numbers,
// decimal, octal (leading 0) or hex (0x), the last filling the bytes left.
func numericIPv4(h string) (netip.Addr, bool) {
	parts := strings.Split(h, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 0, 32)
		if err != nil || p == "" {
			return netip.Addr{}, false
		}
		bits := uint(8)
		if i == len(parts)-1 {
			bits = uint(8 * (4 - i))
		}
		if n >= 1<<bits {
			return netip.Addr{}, false
		}
		v = v<<bits | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}
