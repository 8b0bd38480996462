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

// AddressClass names why an address is not one of the internet's, "" when it is: cloud
// metadata (CloudMetadata), loopback, private (RFC 1918, fc00::/7), link-local
// (169.254.0.0/16), carrier-grade NAT, this network (0.0.0.0/8), IETF protocol assignments
// (192.0.0.0/24), benchmarking, reserved (240.0.0.0/4, the broadcast address),
// IPv4-compatible IPv6 (::/96), unspecified or multicast. An IPv4-mapped IPv6 address is its
// IPv4 address; a NAT64 address (64:ff9b::/96) is the IPv4 address it embeds; the local-use
// NAT64 prefix (64:ff9b:1::/48) is the operator's own translator, so never the internet.
func AddressClass(a netip.Addr) string {
	a, nat := unwrap(a)
	class := ""
	switch {
	case CloudMetadata(a):
		class = ClassMetadata
	case a.IsLoopback():
		class = "loopback"
	case a.IsUnspecified():
		class = "unspecified"
	case a.IsLinkLocalUnicast():
		class = "link-local"
	case a.IsMulticast():
		class = "multicast"
	case a.IsPrivate():
		class = "private"
	default:
		for _, r := range specialRanges {
			if r.prefix.Contains(a) {
				class = r.class
				break
			}
		}
		if class == "" && !a.IsGlobalUnicast() {
			class = "not global unicast"
		}
	}
	if class != "" && nat {
		class += " through NAT64"
	}
	return class
}

// ClassMetadata is AddressClass's name for a cloud's instance metadata address.
const ClassMetadata = "cloud metadata"

// CloudMetadata reports whether an address is where a cloud serves an instance its metadata
// and credentials (also as IPv4-mapped or NAT64): AWS, GCP, Azure, Oracle and OpenStack's
// 169.254.169.254, AWS's fd00:ec2::254, its ECS and EKS credential agents, Azure's WireServer
// (168.63.129.16, a public address reachable only from inside Azure), Alibaba's
// 100.100.100.200 and Oracle Cloud Classic's 192.0.0.192. No setting admits them.
func CloudMetadata(a netip.Addr) bool {
	a, _ = unwrap(a)
	for _, m := range metadataAddrs {
		if a == m {
			return true
		}
	}
	return false
}

// unwrap is the address an IPv4-mapped or NAT64 address stands for, and whether it was NAT64.
func unwrap(a netip.Addr) (netip.Addr, bool) {
	a = a.Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte(b[12:])), true
	}
	return a, false
}

var (
	nat64 = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052's well-known prefix

	metadataAddrs = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), netip.MustParseAddr("fd00:ec2::254"),
		netip.MustParseAddr("169.254.170.2"), netip.MustParseAddr("169.254.170.23"), netip.MustParseAddr("fd00:ec2::23"),
		netip.MustParseAddr("168.63.129.16"), netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("192.0.0.192"),
	}

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
