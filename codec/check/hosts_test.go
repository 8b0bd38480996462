package check

import (
	"net/netip"
	"testing"
)

// TestPrivateHost: the hosts a provider must not be sent to fetch from (video frames), in
// every spelling a URL fetcher reads, and public hosts left alone.
func TestPrivateHost(t *testing.T) {
	cases := []struct {
		host    string
		private bool
	}{
		{"example.com", false},
		{"cdn.example.com.", false},
		{"8.8.8.8", false},
		{"2606:4700::1111", false},
		{"134744072", false}, // 8.8.8.8 as one number
		{"localhost", true},
		{"LOCALHOST.", true},
		{"app.localhost", true},
		{"metadata.google.internal", true},
		{"printer.local", true},
		{"127.0.0.1", true},
		{"127.1", true},
		{"2130706433", true},
		{"0x7f000001", true},
		{"0x7f.1", true},
		{"017700000001", true},
		{"169.254.169.254", true},
		{"10.0.0.1", true},
		{"172.16.5.4", true},
		{"192.168.1.1", true},
		{"100.64.0.1", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"224.0.0.1", true},
		{"::1", true},
		{"::", true},
		{"fe80::1%eth0", true},
		{"fd00::1", true},
		{"::ffff:127.0.0.1", true},
		{"64:ff9b::7f00:1", true}, // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", false},
		{"192.0.0.192", true},
		{"1.2.3.4.5", false}, // not an address: a name, the provider's to resolve
		{"4294967296", false},
	}
	for _, c := range cases {
		if got := PrivateHost(c.host); got != c.private {
			t.Errorf("PrivateHost(%q) = %v, want %v", c.host, got, c.private)
		}
	}
}

// TestAddressClass: each class of address the gateway's own downloads refuse, by name, in
// IPv4, IPv6, IPv4-mapped and NAT64 forms; public addresses (NAT64 of a public one
// included) have none, except a cloud's metadata address.
func TestAddressClass(t *testing.T) {
	cases := []struct{ addr, class string }{
		{"8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"127.0.0.1", "loopback"},
		{"127.255.0.9", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"169.254.169.254", "cloud metadata"},
		{"169.254.170.2", "cloud metadata"},
		{"169.254.1.1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"192.168.0.1", "private"},
		{"fd00:ec2::254", "cloud metadata"},
		{"fd00:ec2::1", "private"},
		{"168.63.129.16", "cloud metadata"}, // public, yet Azure's WireServer
		{"0.1.2.3", "this network"},
		{"100.100.100.200", "cloud metadata"},
		{"100.64.0.1", "carrier-grade NAT"},
		{"192.0.0.192", "cloud metadata"},
		{"192.0.0.8", "IETF protocol assignment"},
		{"198.18.0.1", "benchmarking"},
		{"255.255.255.255", "reserved"},
		{"240.0.0.1", "reserved"},
		{"::7f00:1", "IPv4-compatible"}, // 127.0.0.1 in the deprecated form
		{"64:ff9b::7f00:1", "loopback through NAT64"},
		{"64:ff9b::a9fe:a9fe", "cloud metadata through NAT64"},
		{"64:ff9b::a9fe:101", "link-local through NAT64"},
		{"64:ff9b::a00:1", "private through NAT64"},
		{"64:ff9b:1::a00:1", "local-use NAT64"},
	}
	for _, c := range cases {
		if got := AddressClass(netip.MustParseAddr(c.addr)); got != c.class {
			t.Errorf("AddressClass(%s) = %q, want %q", c.addr, got, c.class)
		}
	}
}
