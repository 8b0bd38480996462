package money

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Amount
		err  bool
	}{
		{"0", 0, false},
		{"1", 1_000_000_000_000, false},
		{"0.0000025", 2_500_000, false},
		{"0.000000000001", 1, false},
		{".5", 500_000_000_000, false},
		{"12.75", 12_750_000_000_000, false},
		{"0.0000000000001", 0, true},
		{"-1", 0, true},
		{"1e-6", 0, true},
		{"", 0, true},
		{".", 0, true},
		{"1.", 0, true},
		{"99999999999", 0, true},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("Parse(%q) = %d, %v; want %d, err=%v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestString(t *testing.T) {
	cases := map[Amount]string{
		0:                  "0",
		2_500_000:          "0.0000025",
		1_000_000_000_000:  "1",
		-500_000_000_000:   "-0.5",
		12_750_000_000_001: "12.750000000001",
	}
	for a, want := range cases {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(a), got, want)
		}
	}
	if got := Amount(math.MinInt64).String(); got != "-9223372.036854775808" {
		t.Errorf("min = %q", got)
	}
}

func TestTimesSaturates(t *testing.T) {
	if got := Amount(2_500_000).Times(1000); got != 2_500_000_000 {
		t.Fatalf("got %d", got)
	}
	if got := Amount(math.MaxInt64 / 2).Times(3); got != math.MaxInt64 {
		t.Fatalf("overflow not saturated: %d", got)
	}
}
