package responses

import (
	"bytes"
	"testing"

	"github.com/modelgate/modelgate/codec/ir/irtest"
)

// FuzzStreamDecoderFastMatchesSlow: the byte-level reading gives the events, the errors and
// the state (through the later events) that encoding/json's reading gives. Each line of the
// input is an event: its name, a space, its data.
func FuzzStreamDecoderFastMatchesSlow(f *testing.F) {
	for _, s := range []string{
		`response.created {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","model":"m","status":"in_progress"}}` + "\n" +
			`response.output_item.added {"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_1"}}` + "\n" +
			`response.reasoning_summary_text.delta {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":0,"delta":"a"}` + "\n" +
			`response.reasoning_summary_text.delta {"type":"response.reasoning_summary_text.delta","item_id":"rs_1","output_index":0,"summary_index":1,"delta":"b"}` + "\n" +
			`response.output_text.delta {"type":"response.output_text.delta","item_id":"msg_1","output_index":1,"content_index":0,"delta":"Hi \u00e9","logprobs":[]}` + "\n" +
			`response.output_text.done {"type":"response.output_text.done","item_id":"msg_1","output_index":1,"text":"Hi é"}`,
		`response.output_item.added {"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":""}}` + "\n" +
			`response.function_call_arguments.delta {"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"a\":"}` + "\n" +
			` {"type":"response.function_call_arguments.delta","item_id":"fc_2","delta":"1}"}` + "\n" +
			`response.completed {"type":"response.completed","response":{"status":"completed"}}`,
		`response.output_item.added {"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ct","call_id":"c","name":"f"}}` + "\n" +
			`response.custom_tool_call_input.delta {"type":"response.custom_tool_call_input.delta","output_index":0,"delta":"x\"y"}`,
		`response.output_text.delta {"type":"response.output_text.delta","output_index":1.5,"delta":"x","Delta":"y"}`,
		`response.output_text.delta {"type":"response.output_text.delta","output_index":0,"delta":5}`,
		`x {"type":"error","code":"rate_limit_exceeded","message":"slow down"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fast := Format.NewStreamDecoder().(*streamDecoder)
		slow := Format.NewStreamDecoder().(*streamDecoder)
		for _, line := range bytes.Split(data, []byte("\n")) {
			name, ev, _ := bytes.Cut(line, []byte(" "))
			var got, want irtest.Decoding
			got.Events, got.Done, got.Err = fast.Decode(name, ev)
			switch trimmed := bytes.TrimSpace(ev); {
			case len(trimmed) == 0 || string(trimmed) == "[DONE]":
				want.Done = slow.ended
			case slow.ended:
				want.Done = true
			default:
				want.Events, want.Done, want.Err = slow.decodeSlow(name, trimmed)
			}
			if irtest.SameDecoding(t, line, got, want) {
				return
			}
		}
	})
}
