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

// TestInclusiveUsageTakesTheCacheOutOfTheInputAndTheReasoningOutOfTheOutput: OpenAI's
// counts (inclusive), a provider that counts the reasoning beside the output (its total
// says so), and a cache larger than the input it is said to be part of.
func TestInclusiveUsageTakesTheCacheOutOfTheInputAndTheReasoningOutOfTheOutput(t *testing.T) {
	cases := []struct {
		name                                                 string
		input, cacheRead, cacheWrite, output, reasoning, tot int64
		want                                                 Usage
	}{
		{"inclusive", 100, 30, 10, 50, 20, 150, Usage{Input: 60, CacheRead: 30, CacheWrite: 10, Output: 30, Reasoning: 20}},
		{"reasoning beside", 100, 0, 0, 50, 20, 170, Usage{Input: 100, Output: 50, Reasoning: 20}},
		{"no reasoning, no total", 10, 0, 0, 5, 0, 0, Usage{Input: 10, Output: 5}},
		{"a cache over the input", 10, 8, 5, 5, 0, 15, Usage{Input: 0, CacheRead: 8, CacheWrite: 5, Output: 5}},
	}
	for _, c := range cases {
		if got := InclusiveUsage(c.input, c.cacheRead, c.cacheWrite, c.output, c.reasoning, c.tot); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
