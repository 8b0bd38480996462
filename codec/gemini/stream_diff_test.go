package gemini

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written chunks decode to the same values as the
// encoding/json encoder's, for random answers, with and without thought parts.
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	for seed := int64(0); seed < 64; seed++ {
		f.Add(seed, "x")
	}
	f.Add(int64(7), "\xff\u2028<&>\x00")
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		evs := irtest.RandomEvents(seed, extra)
		for _, thoughts := range []bool{false, true} {
			req := &ir.Request{}
			req.Thinking.IncludeText = thoughts
			got := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return Format.NewStreamEncoder(o, req, "m<&>") }, evs)
			want := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, req, "m<&>") }, evs)
			if d := irtest.SameValues(got, want, nil); d != "" {
				t.Fatal(d)
			}
		}
	})
}
