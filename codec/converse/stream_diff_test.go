package converse

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamDecoderFastMatchesSlow: the byte-level reading gives the events, the errors and
// the state (through the later events and the end) that encoding/json's reading gives. Each
// line of the input is an event: its name, a space, its data.
func FuzzStreamDecoderFastMatchesSlow(f *testing.F) {
	start := `messageStart {"role":"assistant"}` + "\n"
	for _, s := range []string{
		`contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"Hi \u00e9\n"},"p":"abc"}` + "\n" +
			`contentBlockStop {"contentBlockIndex":0,"p":"x"}`,
		`contentBlockDelta {"contentBlockIndex":1,"delta":{"reasoningContent":{"text":"t"}}}` + "\n" +
			`contentBlockDelta {"contentBlockIndex":1,"delta":{"reasoningContent":{"signature":"s","redactedContent":null}}}` + "\n" +
			`contentBlockDelta {"contentBlockIndex":1,"delta":{"reasoningContent":{"redactedContent":"cg=="}}}`,
		`contentBlockStart {"contentBlockIndex":2,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}` + "\n" +
			`contentBlockDelta {"contentBlockIndex":2,"delta":{"toolUse":{"input":"{\"b\":"}}}` + "\n" +
			`contentBlockStop {"contentBlockIndex":2}` + "\n" + `messageStop {"stopReason":"tool_use"}` + "\n" +
			`metadata {"usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3}}`,
		`contentBlockStart {"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}` + "\n" +
			`contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"x","toolUse":{"input":5}}}` + "\n" +
			`contentBlockDelta {"contentBlockIndex":0,"delta":{"toolUse":{"input":"1"},"reasoningContent":[]}}`,
		`contentBlockDelta {"contentBlockIndex":0,"delta":{"text":5}}`,
		`contentBlockDelta {"contentBlockIndex":0.5,"delta":{"text":"x"}}`,
		`contentBlockDelta {"contentBlockIndex":0,"Delta":{"text":"x"},"delta":{"text":"y"}}`,
		`contentBlockDelta {"contentBlockIndex":0,"delta":{"te\u0078t":"x"}}`,
		`contentBlockStop {"contentBlockIndex":0,"usage":{"inputTokens":"x"}}` + "\n" +
			`contentBlockDelta {"contentBlockIndex":0,"delta":null,"stopReason":"end_turn"}`,
		`contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"a"}} trailing` + "\n" +
			`throttlingException {"message":"slow"}`,
	} {
		f.Add([]byte(start + s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := Format.NewStreamDecoder().(*streamDecoder)
		slow := Format.NewStreamDecoder().(*streamDecoder)
		for _, line := range bytes.Split(data, []byte("\n")) {
			name, ev, _ := bytes.Cut(line, []byte(" "))
			var got irtest.Decoding
			got.Events, got.Done, got.Err = fast.Decode(name, ev)
			want := irtest.Decoding{Done: true}
			if !slow.done {
				want.Events, want.Done, want.Err = slow.decodeSlow(string(name), ev)
			}
			if irtest.SameDecoding(t, line, got, want) {
				return
			}
		}
		ge, _, gf := fast.End()
		we, _, wf := slow.End()
		if gf != wf || !reflect.DeepEqual(ge, we) {
			t.Fatalf("End %s %v, want %s %v", dump(ge), gf, dump(we), wf)
		}
	})
}
