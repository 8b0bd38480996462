package peer

import "net/netip"

// Network is the client as throttles count it: its IPv4 address, or the /64 an IPv6 address
// is in (one host is normally given a whole /64, and could step through it address by
// address). The zero Addr (a RemoteAddr that is no address) is one network of its own.
func (i Info) Network() netip.Prefix {
	if !i.Addr.IsValid() {
		return netip.Prefix{}
	}
	bits := 32
	if i.Addr.Is6() {
		bits = 64
	}
	p, _ := i.Addr.Prefix(bits)
	return p
}
