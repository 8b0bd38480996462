package messages

import (
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamEncoderMatchesReference: the hand-written events decode to the same values as the
// encoding/json encoder's, for random answers (minted ids apart).
func FuzzStreamEncoderMatchesReference(f *testing.F) {
	irtest.SeedAnswers(f)
	f.Fuzz(func(t *testing.T, seed int64, extra string) {
		irtest.SameAsReference(t, irtest.RandomEvents(seed, extra),
			func(o ir.Frames) ir.StreamEncoder { return Format.NewStreamEncoder(o, nil, "m<&>") },
			func(o ir.Frames) ir.StreamEncoder { return newRefStreamEncoder(o, nil, "m<&>") },
			blankMinted)
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
