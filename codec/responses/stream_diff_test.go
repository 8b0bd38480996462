package responses

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written events decode to the same values as the
// encoding/json encoder's, for random answers (minted ids and clock times apart).
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	for seed := int64(0); seed < 64; seed++ {
		f.Add(seed, "x")
	}
	f.Add(int64(7), "\xff\u2028<&>\x00")
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		evs := irtest.RandomEvents(seed, extra)
		req := &ir.Request{}
		got := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return Format.NewStreamEncoder(o, req, "m<&>") }, evs)
		want := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, req, "m<&>") }, evs)
		blank := func(v any) any { return irtest.Blank(v, "id", "item_id", "created_at", "completed_at") }
		if d := irtest.SameValues(got, want, blank); d != "" {
			t.Fatal(d)
		}
	})
}
