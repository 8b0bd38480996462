package check

import "testing"

// TestPrivateHost: the hosts a provider must not be sent to fetch from (issue #12 item 9,
// video frames), in every spelling a URL fetcher reads, and public hosts left alone.
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
		{"1.2.3.4.5", false}, // not an address: a name, the provider's to resolve
		{"4294967296", false},
	}
	for _, c := range cases {
		if got := PrivateHost(c.host); got != c.private {
			t.Errorf("PrivateHost(%q) = %v, want %v", c.host, got, c.private)
		}
	}
}
