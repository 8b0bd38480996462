package chat

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written chunks decode to the same values as the
// encoding/json encoder's, for random answers (ids and clock times minted apart).
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	irtest.SeedAnswers(f)
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		evs := irtest.RandomEvents(seed, extra)
		for _, usage := range []bool{false, true} {
			req := &ir.Request{IncludeUsage: usage}
			irtest.SameAsReference(t, evs,
				func(o ir.Frames) ir.StreamEncoder { return NewStreamEncoder(o, req, "m<&>") },
				func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, req, "m<&>") },
				func(v any) any { return irtest.Blank(v, "created") })
		}
	})
}
