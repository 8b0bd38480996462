package peer

import (
	"net/netip"
	"testing"
)

// TestNetwork: an IPv4 client is its address, an IPv6 client its /64, no address one network.
func TestNetwork(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"203.0.113.5", "203.0.113.5/32"},
		{"2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"::1", "::/64"},
	} {
		if got := (Info{Addr: netip.MustParseAddr(c.addr)}).Network(); got != netip.MustParsePrefix(c.want) {
			t.Errorf("%s: %s, want %s", c.addr, got, c.want)
		}
	}
	if got := (Info{}).Network(); got.IsValid() {
		t.Errorf("no address: %s, want the zero prefix", got)
	}
}
