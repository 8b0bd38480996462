package check

import (
	"net/netip"
	"strconv"
	"strings"
)

// PrivateHost reports whether a URL's host (as url.URL.Hostname gives it) names this machine
// or a private network rather than the internet: localhost and names under .localhost,
// .internal (metadata.google.internal) and .local, and IP addresses AddressClass does not
// call public — written as a URL fetcher reads them, so 2130706433, 0x7f.1 and 127.1 are
// 127.0.0.1. A name that resolves to such an address is not caught: the provider resolves
// it, not the gateway (the gateway's own downloads check the address they dial,
// transport/fetch).
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
	return AddressClass(a) != ""
}

// AddressClass names why an address is not one of the internet's, "" when it is: loopback,
// private (RFC 1918, fc00::/7, where AWS's fd00:ec2::254 metadata lives), link-local
// (169.254.0.0/16, where clouds serve instance metadata and credentials), carrier-grade NAT
// (Alibaba's metadata at 100.100.100.200), this network (0.0.0.0/8), IETF protocol
// assignments (192.0.0.0/24, Oracle's old metadata at 192.0.0.192), benchmarking, reserved
// (240.0.0.0/4, the broadcast address), IPv4-compatible IPv6 (::/96), unspecified or
// multicast. An IPv4-mapped IPv6 address is its IPv4 address; a NAT64 address (64:ff9b::/96)
// is the IPv4 address it embeds, and the local-use NAT64 prefix (64:ff9b:1::/48) reaches the
// operator's own translator, so it is private.
func AddressClass(a netip.Addr) string {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		if class := AddressClass(netip.AddrFrom4([4]byte(b[12:]))); class != "" {
			return class + " through NAT64"
		}
		return ""
	}
	switch {
	case a.IsLoopback():
		return "loopback"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	case a.IsPrivate():
		return "private"
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(a) {
			return r.class
		}
	}
	if !a.IsGlobalUnicast() {
		return "not global unicast"
	}
	return ""
}

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052's well-known prefix

	specialRanges = []struct {
		prefix netip.Prefix
		class  string
	}{
		{netip.MustParsePrefix("0.0.0.0/8"), "this network"},
		{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"}, // RFC 6598
		{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
		{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
		{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
		{netip.MustParsePrefix("::/96"), "IPv4-compatible"},          // deprecated; never the internet
		{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"}, // RFC 8215
	}
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
