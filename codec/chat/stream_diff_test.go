package chat

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written chunks decode to the same values as the
// encoding/json encoder's, for random answers (ids and clock times minted apart).
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	for seed := int64(0); seed < 64; seed++ {
		f.Add(seed, "x")
	}
	f.Add(int64(7), "\xff\u2028<&>\x00")
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		evs := irtest.RandomEvents(seed, extra)
		for _, usage := range []bool{false, true} {
			req := &ir.Request{IncludeUsage: usage}
			got := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return NewStreamEncoder(o, req, "m<&>") }, evs)
			want := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, req, "m<&>") }, evs)
			if d := irtest.SameValues(got, want, func(v any) any { return irtest.Blank(v, "created") }); d != "" {
				t.Fatal(d)
			}
		}
	})
}
