package messages

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func fixtureEvents() []ir.Event {
	return []ir.Event{
		{Kind: ir.EvStart, ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Model: "claude-sonnet-4-5-20250929",
			Usage: codec.Usage{Input: 472, CacheWrite: 100, CacheRead: 1800}},
		{Kind: ir.EvReasoning, Text: "The user wants the weather "},
		{Kind: ir.EvReasoning, Text: "in Paris and the time in <Tokyo> & more."},
		{Kind: ir.EvSignature, Text: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", Format: "messages"},
		{Kind: ir.EvText, Text: "I'll check both "},
		{Kind: ir.EvText, Text: "for you."},
		{Kind: ir.EvToolStart, Index: 0, ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather"},
		{Kind: ir.EvToolArgs, Index: 0, Text: `{"ci`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `ty": "Pa`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `ris", "unit"`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `: "celsius"}`},
		{Kind: ir.EvToolStart, Index: 1, ID: "toolu_01BQ7kh3SUdQ3dLQzexGq9jZ", Name: "get_time"},
		{Kind: ir.EvToolArgs, Index: 1, Text: `{"zone":`},
		{Kind: ir.EvToolArgs, Index: 1, Text: ` "Asia/Tokyo", "q": "a \"quoted\" {brace"}`},
		{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 472, CacheWrite: 100, CacheRead: 1800, Output: 189}},
	}
}

func TestStreamDecodeFixture(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testdata, "stream_thinking_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	got, done := decodeStream(t, b)
	if !done {
		t.Error("message_stop not reported as done")
	}
	if want := fixtureEvents(); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", dump(got), dump(want))
	}
}

func TestStreamDecodeEdges(t *testing.T) {
	type step struct{ name, data string }
	cases := []struct {
		name  string
		steps []step
		want  []ir.Event
		done  bool
	}{
		{"error event ends the stream",
			[]step{
				{"message_start", `{"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":5,"output_tokens":1}}}`},
				{"error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`},
				{"message_stop", `{"type":"message_stop"}`},
			},
			[]ir.Event{
				{Kind: ir.EvStart, ID: "msg_1", Model: "m", Usage: codec.Usage{Input: 5}},
				{Kind: ir.EvError, Err: &ir.Error{Status: 529, Kind: ir.ErrOverloaded, Message: "Overloaded"}},
			}, true},
		{"no event lines, input in start block, redacted, stop sequence, thinking tokens",
			[]step{
				{"", `{"type":"message_start","message":{"id":"msg_2","model":"m","usage":{"input_tokens":5}}}`},
				{"", `{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"opaque"}}`},
				{"", `{"type":"content_block_stop","index":0}`},
				{"", `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{"a": 1}}}`},
				{"", `{"type":"content_block_stop","index":1}`},
				{"", `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t2","name":"g","input":{}}}`},
				{"", `{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`},
				{"", `{"type":"content_block_stop","index":2}`},
				{"", `{"type":"content_block_delta","index":9,"delta":{"type":"text_delta","text":"orphan"}}`},
				{"", `{"type":"message_delta","delta":{"stop_reason":"stop_sequence","stop_sequence":"END"},"usage":{"output_tokens":50,"output_tokens_details":{"thinking_tokens":20}}}`},
				{"", `{"type":"message_stop"}`},
			},
			[]ir.Event{
				{Kind: ir.EvStart, ID: "msg_2", Model: "m", Usage: codec.Usage{Input: 5}},
				{Kind: ir.EvRedacted, Text: "opaque", Format: "messages"},
				{Kind: ir.EvToolStart, Index: 0, ID: "t1", Name: "f"},
				{Kind: ir.EvToolArgs, Index: 0, Text: `{"a":1}`},
				{Kind: ir.EvToolStart, Index: 1, ID: "t2", Name: "g"},
				{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 5, Output: 30, Reasoning: 20}},
			}, true},
		{"a stream cut short is not done",
			[]step{
				{"message_start", `{"type":"message_start","message":{"id":"msg_3","model":"m"}}`},
				{"ping", `{"type":"ping"}`},
				{"content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"Hi"}}`},
			},
			[]ir.Event{
				{Kind: ir.EvStart, ID: "msg_3", Model: "m"},
				{Kind: ir.EvText, Text: "Hi"},
			}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Format.NewStreamDecoder()
			var got []ir.Event
			done := false
			for _, s := range c.steps {
				evs, fin, err := d.Decode([]byte(s.name), []byte(s.data))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, evs...)
				done = fin
			}
			if done != c.done {
				t.Errorf("done %v", done)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %s\nwant %s", dump(got), dump(c.want))
			}
		})
	}
	if _, _, err := Format.NewStreamDecoder().Decode([]byte("message_start"), []byte(`{"type":`)); err == nil {
		t.Error("undecodable event accepted")
	}
}

// StreamUsage reads the same usage as the decoder from the two events that carry it.
func TestStreamUsage(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(testdata, "stream_thinking_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	var s StreamUsage
	for _, f := range readFrames(t, b) {
		s.Observe([]byte(f.name), []byte(f.data))
	}
	if got, want := s.Usage(), (codec.Usage{Input: 472, CacheWrite: 100, CacheRead: 1800, Output: 189}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if !IsDone([]byte("message_stop")) || IsDone([]byte("message_delta")) {
		t.Error("IsDone")
	}
}

// blockCheck asserts the stream shape SDKs rely on: message_start then ping first, block
// indices 0, 1, 2… with no block started while another is open, deltas and stops only for
// the open block, and a proper end. It returns each tool block's id and concatenated input.
func blockCheck(t *testing.T, frames []frame) (ids []string, inputs []string) {
	t.Helper()
	if len(frames) < 2 || frames[0].name != "message_start" || frames[1].name != "ping" {
		t.Fatalf("stream does not begin with message_start, ping: %v", frames)
	}
	next, open := 0, -1
	openTool := false
	for i, f := range frames {
		var ev struct {
			Type         string          `json:"type"`
			Index        int             `json:"index"`
			ContentBlock json.RawMessage `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
		}
		if err := json.Unmarshal([]byte(f.data), &ev); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if ev.Type != f.name {
			t.Errorf("frame %d: event %q carries type %q", i, f.name, ev.Type)
		}
		switch f.name {
		case "content_block_start":
			if open >= 0 || ev.Index != next {
				t.Fatalf("frame %d: block %d starts while %d is open (next %d)", i, ev.Index, open, next)
			}
			open, next = ev.Index, next+1
			var b struct{ Type, ID string }
			json.Unmarshal(ev.ContentBlock, &b)
			openTool = b.Type == "tool_use"
			if openTool {
				ids, inputs = append(ids, b.ID), append(inputs, "")
			}
		case "content_block_delta":
			if ev.Index != open {
				t.Fatalf("frame %d: delta for %d while %d is open", i, ev.Index, open)
			}
			if openTool {
				if ev.Delta.Type != "input_json_delta" {
					t.Fatalf("frame %d: %s in a tool block", i, ev.Delta.Type)
				}
				inputs[len(inputs)-1] += ev.Delta.PartialJSON
			}
		case "content_block_stop":
			if ev.Index != open {
				t.Fatalf("frame %d: stop for %d while %d is open", i, ev.Index, open)
			}
			open = -1
		case "message_delta":
			if open >= 0 {
				t.Fatalf("frame %d: message_delta with block %d open", i, open)
			}
			if i != len(frames)-2 || frames[i+1].name != "message_stop" {
				t.Fatalf("frame %d: message_delta not followed by the final message_stop", i)
			}
		case "error":
			if i != len(frames)-1 {
				t.Fatalf("frame %d: frames after the error", i)
			}
		}
	}
	if last := frames[len(frames)-1].name; last != "message_stop" && last != "error" {
		t.Fatalf("stream ends with %q", last)
	}
	return ids, inputs
}

func TestStreamEncode(t *testing.T) {
	u := codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 2}
	cases := []struct {
		name   string
		events []ir.Event
		inputs map[string]string // tool id → its input, parsed and re-encoded compactly
	}{
		{"text_thinking", []ir.Event{
			{Kind: ir.EvStart, ID: "abc", Usage: u},
			{Kind: ir.EvReasoning, Text: "Hmm <x> & y"},
			{Kind: ir.EvReasoning, Text: ""},
			{Kind: ir.EvSignature, Text: "EqQBsig", Format: "messages"},
			{Kind: ir.EvText, Text: "Hello"},
			{Kind: ir.EvText, Text: ""},
			{Kind: ir.EvUsage, Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 2, Output: 3}},
			{Kind: ir.EvText, Text: " world"},
			{Kind: ir.EvFinish, Stop: ir.StopSequence, StopSequence: "END", Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 2, Output: 7, Reasoning: 3}},
		}, nil},
		{"interleaved_tools", []ir.Event{
			{Kind: ir.EvStart, ID: "chatcmpl-1", Usage: u},
			{Kind: ir.EvText, Text: "Let me check."},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_a", Name: "get_weather"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"city":`},
			{Kind: ir.EvToolStart, Index: 1, ID: "call_b", Name: "get_time"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"zone":"`},
			{Kind: ir.EvText, Text: "(late text)"},
			{Kind: ir.EvToolArgs, Index: 0, Text: ` "Pa}]ris"`},
			{Kind: ir.EvToolArgs, Index: 1, Text: `UTC\"}"}`},
			{Kind: ir.EvToolArgs, Index: 0, Text: `}`},
			{Kind: ir.EvToolStart, Index: 2, ID: "call_c", Name: "ping"},
			{Kind: ir.EvToolArgs, Index: 2, Text: `{}`},
			{Kind: ir.EvToolArgs, Index: 2, Text: ` `},
			{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 10, CacheRead: 5, CacheWrite: 2, Output: 20}},
		}, map[string]string{"call_a": `{"city":"Pa}]ris"}`, "call_b": `{"zone":"UTC\"}"}`, "call_c": `{}`}},
		{"empty_args_tool", []ir.Event{
			{Kind: ir.EvStart, ID: "g-1"},
			{Kind: ir.EvReasoning, Text: "gemini thought"},
			{Kind: ir.EvSignature, Text: "Z2Vt", Format: "gemini"},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_x", Name: "now", Signature: "AAEC"},
			{Kind: ir.EvToolStart, Index: 1, ID: "call_y", Name: "where"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"q":1}`},
			{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 4, Output: 9}},
		}, map[string]string{"call_x__thought__AAEC": `{}`, "call_y": `{"q":1}`}},
		{"incomplete_args_at_finish", []ir.Event{
			{Kind: ir.EvStart, ID: "msg_inc"},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_a", Name: "f"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"a":1`},
			{Kind: ir.EvToolStart, Index: 1, ID: "call_b", Name: "g"},
			{Kind: ir.EvToolArgs, Index: 1, Text: `{"b":`},
			{Kind: ir.EvFinish, Stop: ir.StopLength},
		}, map[string]string{"call_a": `{"a":1`, "call_b": `{"b":`}},
		{"redacted", []ir.Event{
			{Kind: ir.EvStart, ID: "msg_r"},
			{Kind: ir.EvReasoning, Text: "a"},
			{Kind: ir.EvRedacted, Text: "opaque", Format: "messages"},
			{Kind: ir.EvText, Text: "b"},
			{Kind: ir.EvFinish, Stop: ir.StopEnd},
		}, nil},
		{"error_mid_stream", []ir.Event{
			{Kind: ir.EvStart, ID: "msg_e", Usage: u},
			{Kind: ir.EvText, Text: "partial"},
			{Kind: ir.EvToolStart, Index: 0, ID: "call_a", Name: "f"},
			{Kind: ir.EvToolArgs, Index: 0, Text: `{"a":`},
			{Kind: ir.EvError, Err: &ir.Error{Status: 529, Kind: ir.ErrOverloaded, Message: "Overloaded"}},
			{Kind: ir.EvText, Text: "after the error"},
			{Kind: ir.EvFinish, Stop: ir.StopEnd},
		}, map[string]string{"call_a": `{"a":`}},
		{"close_without_finish", []ir.Event{
			{Kind: ir.EvStart, ID: "msg_c"},
			{Kind: ir.EvText, Text: "partial"},
		}, nil},
		{"no_events", nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := encodeStream(t, c.events, "client-model")
			golden(t, "encode_"+c.name+".sse", out)
			frames := readFrames(t, out)
			if c.name == "no_events" {
				if len(frames) != 1 || frames[0].name != "error" {
					t.Fatalf("frames %v", frames)
				}
				return
			}
			ids, inputs := blockCheck(t, frames)
			got := map[string]string{}
			for i, id := range ids {
				got[id] = inputs[i]
				if json.Valid([]byte(inputs[i])) {
					got[id] = canon(t, []byte(inputs[i]))
				}
			}
			if len(got) > 0 || len(c.inputs) > 0 {
				if !reflect.DeepEqual(got, c.inputs) {
					t.Errorf("tool inputs %q, want %q", got, c.inputs)
				}
			}
		})
	}
}

// Decoding what the encoder wrote gives back the events it was given.
func TestStreamRoundTrip(t *testing.T) {
	want := fixtureEvents()
	out := encodeStream(t, want, "claude-sonnet-4-5-20250929")
	got, done := decodeStream(t, out)
	if !done {
		t.Error("not done")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", dump(got), dump(want))
	}
	// And the upstream fixture itself survives decode → encode → decode.
	b, err := os.ReadFile(filepath.Join(testdata, "stream_thinking_tools.sse"))
	if err != nil {
		t.Fatal(err)
	}
	first, _ := decodeStream(t, b)
	again, _ := decodeStream(t, encodeStream(t, first, "claude-sonnet-4-5-20250929"))
	if !reflect.DeepEqual(again, first) {
		t.Errorf("got  %s\nwant %s", dump(again), dump(first))
	}
}
