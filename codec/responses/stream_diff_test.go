package responses

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written events decode to the same values as the
// encoding/json encoder's, for random answers (minted ids and clock times apart).
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	irtest.SeedAnswers(f)
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		req := &ir.Request{}
		irtest.SameAsReference(t, irtest.RandomEvents(seed, extra),
			func(o ir.Frames) ir.StreamEncoder { return Format.NewStreamEncoder(o, req, "m<&>") },
			func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, req, "m<&>") },
			func(v any) any { return irtest.Blank(v, "id", "item_id", "created_at", "completed_at") })
	})
}
