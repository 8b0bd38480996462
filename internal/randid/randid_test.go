package randid

import (
	"math"
	"strings"
	"testing"
)

// TestBase62IsUniformAndOfTheLengthAsked: every length asked comes back exactly, of the
// alphabet only; over many draws each character's share is within a tight bound of 1/62
// (a draw reduced mod 62 without dropping would give the first 8 characters 5/256 against
// the others' 4/256, a quarter more, far outside it).
func TestBase62IsUniformAndOfTheLengthAsked(t *testing.T) {
	for _, n := range []int{0, 1, 20, 24, 40, 63, 64, 65, 200} {
		s := Base62(n)
		if len(s) != n || !Is(s) {
			t.Errorf("Base62(%d) = %q", n, s)
		}
	}
	if got := string(Append([]byte("key_"), 5)); len(got) != 9 || !strings.HasPrefix(got, "key_") || !Is(got[4:]) {
		t.Errorf("Append: %q", got)
	}
	const draws = 620_000
	counts := map[byte]int{}
	for _, c := range []byte(Base62(draws)) {
		counts[c]++
	}
	want := float64(draws) / 62
	for i := 0; i < len(Alphabet); i++ {
		// 10,000 a character expected, sd about 99: 6 sd is 600.
		if d := math.Abs(float64(counts[Alphabet[i]]) - want); d > 600 {
			t.Errorf("%q drawn %d times, want %.0f ± 600", Alphabet[i], counts[Alphabet[i]], want)
		}
	}
}

func TestIsAcceptsTheAlphabetOnly(t *testing.T) {
	cases := []struct {
		s    string
		want bool
	}{
		{"", true},
		{Alphabet, true},
		{"abc-def", false},
		{"abc def", false},
		{"é", false},
		{"abc/", false},
	}
	for _, c := range cases {
		if got := Is(c.s); got != c.want {
			t.Errorf("Is(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

func BenchmarkBase62Of24(b *testing.B) {
	for b.Loop() {
		Base62(24)
	}
}
