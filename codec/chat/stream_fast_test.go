package chat

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamDecoderFastMatchesSlow: the byte-level reading gives the events, the errors and
// the state (through the later chunks) that encoding/json's reading gives, chunk by chunk.
func FuzzStreamDecoderFastMatchesSlow(f *testing.F) {
	for _, s := range []string{
		`{"id":"c1","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi \u00e9\n"},"finish_reason":null}]}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"reasoning":"r","reasoning_content":""}}]}` + "\n" + `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8,"prompt_tokens_details":{"cached_tokens":2},"completion_tokens_details":{"reasoning_tokens":1}}}`,
		`{"id":"c1","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"a__thought__AAE","type":"function","function":{"name":"f","arguments":""}}]}}]}` + "\n" + `{"choices":[{"index":1,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"a\":1}"}}]}}]}`,
		`{"id":"","object":"","created":0,"model":"","choices":[],"prompt_filter_results":[]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"Content":"x"}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"content":[{"type":"text","text":"x"}]}}]}`,
		`{"id":"c","choices":[{"index":0,"delta":{"content":"a","content":null}}]}`,
		`{"id":5,"choices":[{"index":1.0,"delta":{"content":"x"}}],"x_groq":{"usage":{"prompt_tokens":1}}}`,
		`{"error":{"message":"boom","type":"server_error"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast, slow := &streamDecoder{}, &streamDecoder{}
		for _, chunk := range bytes.Split(data, []byte("\n")) {
			var got, want irtest.Decoding
			got.Events, got.Done, got.Err = fast.Decode(nil, chunk)
			switch {
			case IsDone(chunk):
				want.Events, want.Done = []ir.Event{slow.finish()}, true
			case len(chunk) == 0:
			default:
				want.Events, want.Done, want.Err = slow.decodeSlow(chunk)
			}
			if irtest.SameDecoding(t, chunk, got, want) {
				return
			}
		}
		if g, w := fast.finish(), slow.finish(); !reflect.DeepEqual(g, w) {
			t.Fatalf("finish %+v, want %+v", g, w)
		}
	})
}

// TestSimulatorChunksReadFast: every chunk of the simulator's chat streams (the shape nearly
// every provider sends) is read byte by byte, not by the encoding/json fallback.
func TestSimulatorChunksReadFast(t *testing.T) {
	for _, name := range []string{"chat_stream_text", "chat_stream_tools", "chat_stream_agent_tool"} {
		d := &streamDecoder{}
		for _, chunk := range irtest.Chunks(t, "../../testdata/sim/"+name+".txt") {
			if IsDone(chunk) {
				continue
			}
			if _, ok := d.decodeFast(chunk, nil); !ok {
				t.Errorf("%s: %s is not read by the fast path", name, chunk)
			}
		}
	}
}
