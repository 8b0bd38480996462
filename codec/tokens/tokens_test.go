package tokens

import "testing"

func TestCounters(t *testing.T) {
	cases := []struct {
		name, text string
		want       int
	}{
		{"", "hello world", 4},
		{"cl100k_base", "hello world", 2},
		{"o200k_base", "hello world", 2},
		{"cl100k_base", "The quick brown fox jumps over the lazy dog.", 10},
	}
	for _, c := range cases {
		count, err := For(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := count(c.text); got != c.want {
			t.Errorf("%q %q: %d tokens, want %d", c.name, c.text, got, c.want)
		}
	}
	if _, err := For("gpt2-typo"); err == nil {
		t.Fatal("unknown tokenizer accepted")
	}
}
