package messages

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written events decode to the same values as the
// encoding/json encoder's, for random answers (minted ids apart).
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	for seed := int64(0); seed < 64; seed++ {
		f.Add(seed, "x")
	}
	f.Add(int64(7), "\xff\u2028<&>\x00")
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		evs := irtest.RandomEvents(seed, extra)
		got := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return Format.NewStreamEncoder(o, nil, "m<&>") }, evs)
		want := irtest.Encode(func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, nil, "m<&>") }, evs)
		if d := irtest.SameValues(got, want, func(v any) any { return blankMinted(v) }); d != "" {
			t.Fatal(d)
		}
	})
}

// blankMinted blanks the ids the encoder mints when the answer has none (message, tool call).
func blankMinted(v any) any {
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"content_block", "message"} {
			if in, ok := m[k].(map[string]any); ok {
				if id, ok := in["id"].(string); ok && len(id) > 6 && (id[:6] == "toolu_" || id[:4] == "msg_") {
					in["id"] = ""
				}
			}
		}
	}
	return v
}
