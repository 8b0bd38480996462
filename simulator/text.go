package simulator

import (
	"regexp"
	"strconv"
	"strings"
)

// The simulator's token model is deliberately naive: one token is one whitespace-separated
// word. Tests can then compute expected usage by counting words in their own prompts.

const (
	// defaultReplyWords is the length of a text answer when the prompt does not ask otherwise.
	defaultReplyWords = 16
	// maxReplyWords caps "reply with N words" so a typo cannot make the simulator build a
	// gigabyte answer.
	maxReplyWords = 100_000
)

// fillerWords pad text answers to the requested length. A fixed cycle keeps every answer
// exact and predictable.
var fillerWords = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india " +
	"juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor " +
	"whiskey xray yankee zulu")

// Directives a test can put in the last user message to steer the answer.
var (
	replyWithRe = regexp.MustCompile(`(?i)\breply with (\d+) words?\b`)
	cachedRe    = regexp.MustCompile(`(?i)\bcached (\d+)\b`)
	parallelRe  = regexp.MustCompile(`(?i)\bparallel\b`)
)

// countWords is the simulator's token count for s.
func countWords(s string) int { return len(strings.Fields(s)) }

// replyWords returns the first n words of the simulator's answer for model:
// "Simulated reply from <model>." followed by filler words.
func replyWords(model string, n int) []string {
	return prefixedWords("Simulated reply from "+model+".", n)
}

// prefixedWords returns the first n words of head followed by filler words.
func prefixedWords(head string, n int) []string {
	prefix := strings.Fields(head)
	out := make([]string, 0, n)
	for i := range n {
		if i < len(prefix) {
			out = append(out, prefix[i])
		} else {
			out = append(out, fillerWords[(i-len(prefix))%len(fillerWords)])
		}
	}
	return out
}

// directiveInt finds a numeric directive such as "reply with 5 words" in text.
func directiveInt(re *regexp.Regexp, text string) (int, bool) {
	m := re.FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, false // too many digits for an int; ignore rather than guess
	}
	return n, true
}
