package codec

import (
	"regexp"
	"testing"
)

func TestRandomIDShapeAndUniqueness(t *testing.T) {
	for _, prefix := range []string{"", "call_", "chatcmpl-", "a-prefix-longer-than-the-stack-array-holds-with-room-to-spare__"} {
		re := regexp.MustCompile(`^` + regexp.QuoteMeta(prefix) + `[0-9A-Za-z]{24}$`)
		seen := map[string]bool{}
		for range 5000 { // several refills of the block
			id := RandomID(prefix)
			if !re.MatchString(id) || seen[id] {
				t.Fatalf("bad or repeated id %q", id)
			}
			seen[id] = true
		}
	}
}
