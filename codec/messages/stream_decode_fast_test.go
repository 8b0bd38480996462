package messages

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamDecoderFastMatchesSlow: the byte-level reading gives the events, the errors and
// the state (through the later events) that encoding/json's reading gives. Each line of the
// input is an event: its name, a space, its data.
func FuzzStreamDecoderFastMatchesSlow(f *testing.F) {
	start := `message_start {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":3}}}` + "\n"
	for _, s := range []string{
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n" +
			`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi \u00e9\n"}}` + "\n" +
			`ping {"type":"ping"}` + "\n" + `content_block_stop {"type":"content_block_stop","index":0}`,
		`content_block_start {"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}` + "\n" +
			`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"t"}}` + "\n" +
			`content_block_delta {"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"s"}}`,
		`content_block_start {"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t","name":"f","input":{"a":1}}}` + "\n" +
			`content_block_stop {"type":"content_block_stop","index":2}` + "\n" +
			`content_block_start {"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"u","name":"g","input":{}}}` + "\n" +
			`content_block_delta {"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":"{\"b\":"}}`,
		` {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","Text":"y"}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"d"}}` + "\n" +
			`message_delta {"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"##"},"usage":{"output_tokens":7,"output_tokens_details":{"thinking_tokens":2}}}` + "\n" +
			`message_delta {"type":"message_delta","delta":{"stop_reason":null},"usage":{"input_tokens":1,"cache_read_input_tokens":2,"cache_creation_input_tokens":null}}` + "\n" +
			`message_stop {"type":"message_stop"}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":"pre","input":{}}}` + "\n" +
			`message_delta {"type":"message_delta","delta":{"stop_reason":5},"usage":{"output_tokens":1.5}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}`,
		`content_block_delta {"type":"content_block_delta","index":0.5,"delta":{"type":"text\u005fdelta","text":"x"}}`,
		`ping {"type":"ping","index":1}` + "\n" + `error {"type":"error","error":{"type":"overloaded_error","message":"busy"}}`,
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
				want.Events, want.Done, want.Err = slow.decodeSlow(name, ev)
			}
			if irtest.SameDecoding(t, line, got, want) {
				return
			}
		}
		if g, w := fast.finish(), slow.finish(); !reflect.DeepEqual(g, w) {
			t.Fatalf("finish %+v, want %+v", g, w)
		}
	})
}
