package codec

import "testing"

func TestVisibleOutput(t *testing.T) {
	cases := []struct {
		name                            string
		input, output, reasoning, total int64
		want                            int64
	}{
		{"reasoning inside the output (OpenAI)", 32, 103, 94, 135, 9},
		{"reasoning beside the output (xAI)", 32, 9, 94, 135, 9},
		{"no reasoning", 10, 5, 0, 15, 5},
		{"no total, output holds the reasoning", 20, 43, 40, 0, 3},
		{"no total, output smaller than its reasoning", 20, 3, 40, 0, 3},
		{"a total that fits neither reading", 20, 43, 40, 100, 3},
	}
	for _, c := range cases {
		if got := VisibleOutput(c.input, c.output, c.reasoning, c.total); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

func TestReasoningBeside(t *testing.T) {
	cases := []struct {
		name                            string
		input, output, reasoning, total int64
		want                            bool
	}{
		{"xAI: total = input + output + reasoning", 12, 1, 290, 303, true},
		{"OpenAI: total = input + output", 32, 103, 94, 135, false},
		{"no reasoning", 10, 5, 0, 15, false},
		{"no total, output smaller than its reasoning", 20, 3, 40, 0, true},
		{"no total, output holds the reasoning", 20, 43, 40, 0, false},
		{"a total that fits neither reading", 20, 43, 40, 100, false},
	}
	for _, c := range cases {
		if got := ReasoningBeside(c.input, c.output, c.reasoning, c.total); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
