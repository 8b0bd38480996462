package ir

import "testing"

func TestCallIDRoundTrip(t *testing.T) {
	cases := []struct{ id, sig string }{
		{"call_abc", ""},
		{"call_abc", "CiQBjz1rX+/w"},
		{"toolu_01", "AAECAwQFBgcICQ=="},
	}
	for _, c := range cases {
		joined := JoinCallID(c.id, c.sig)
		for _, r := range joined {
			if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				t.Fatalf("%q has %q, invalid in a messages tool id", joined, r)
			}
		}
		id, sig := SplitCallID(joined)
		if id != c.id || sig != c.sig {
			t.Errorf("round trip of (%q, %q) = (%q, %q) via %q", c.id, c.sig, id, sig, joined)
		}
	}
}
