package converse

import (
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func TestStreamDecodeFixture(t *testing.T) {
	got, done := decodeFrames(t, readFrames(t, readFixture(t, "stream_thinking_tools.sse")))
	if !done {
		t.Error("metadata after messageStop not reported as done")
	}
	want := []ir.Event{
		{Kind: ir.EvStart},
		{Kind: ir.EvReasoning, Text: "The user wants the weather "},
		{Kind: ir.EvReasoning, Text: "in Paris and the time in <Tokyo> & more."},
		{Kind: ir.EvSignature, Text: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", Format: SignatureFormat},
		{Kind: ir.EvText, Text: "I'll check both "},
		{Kind: ir.EvText, Text: "for you."},
		{Kind: ir.EvToolStart, Index: 0, ID: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", Name: "get_weather"},
		{Kind: ir.EvToolArgs, Index: 0, Text: `{"ci`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `ty": "Pa`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `ris", "unit"`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `: "celsius"}`},
		{Kind: ir.EvToolStart, Index: 1, ID: "tooluse_BQ7kh3SUdQ3dLQzexGq9jZ", Name: "get_time"},
		{Kind: ir.EvToolArgs, Index: 1, Text: `{"zone":`},
		{Kind: ir.EvToolArgs, Index: 1, Text: ` "Asia/Tokyo", "q": "a \"quoted\" {brace"}`},
		{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 472, CacheWrite: 100, CacheRead: 1800, Output: 189}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %s\nwant %s", dump(got), dump(want))
	}
}

func TestStreamDecodeEdges(t *testing.T) {
	start := frame{"messageStart", `{"role":"assistant"}`}
	stop := func(reason string) frame { return frame{"messageStop", `{"stopReason":"` + reason + `"}`} }
	meta := frame{"metadata", `{"usage":{"inputTokens":10,"outputTokens":5,"totalTokens":15},"metrics":{"latencyMs":20}}`}
	cases := []struct {
		name   string
		frames []frame
		want   []ir.Event
		done   bool
	}{
		{"an exception mid-stream ends it as an in-band error; later events are ignored",
			[]frame{start, {"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hel"}}`},
				{"throttlingException", `{"message":"Too many tokens, please wait before trying again."}`},
				{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"lo"}}`}, stop("end_turn"), meta},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvText, Text: "Hel"},
				{Kind: ir.EvError, Err: &ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "ThrottlingException",
					Message: "Too many tokens, please wait before trying again."}}}, true},
		{"an exception before anything: the error alone",
			[]frame{{"serviceUnavailableException", `{"message":"Bedrock is unable to process your request."}`}},
			[]ir.Event{{Kind: ir.EvError, Err: &ir.Error{Status: 503, Kind: ir.ErrOverloaded, Code: "ServiceUnavailableException",
				Message: "Bedrock is unable to process your request."}}}, true},
		{"a model stream error carries the model's message; an exception's payload need not be JSON",
			[]frame{start, {"modelStreamErrorException", `{"originalMessage":"overloaded","originalStatusCode":529}`}},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvError, Err: &ir.Error{Status: 424, Kind: ir.ErrServer,
				Code: "ModelStreamErrorException", Message: "overloaded"}}}, true},
		{"every exception type has its class",
			[]frame{{"validationException", `{"message":"Input is too long for requested model."}`}},
			[]ir.Event{{Kind: ir.EvError, Err: &ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Code: "ValidationException",
				Message: "Input is too long for requested model."}}}, true},
		{"an unknown exception is a server error",
			[]frame{{"somethingNewException", `not json`}},
			[]ir.Event{{Kind: ir.EvError, Err: &ir.Error{Status: 500, Kind: ir.ErrServer, Code: "SomethingNewException",
				Message: "the upstream stream failed (somethingNewException)"}}}, true},
		{"internal and timeout exceptions",
			[]frame{start, {"modelTimeoutException", `{"message":"Model has timed out."}`}},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvError, Err: &ir.Error{Status: 408, Kind: ir.ErrTimeout,
				Code: "ModelTimeoutException", Message: "Model has timed out."}}}, true},
		{"the stop sequence Claude matched, usage with cache reads",
			[]frame{start, {"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"1 2 3"}}`},
				{"contentBlockStop", `{"contentBlockIndex":0}`},
				{"messageStop", `{"stopReason":"stop_sequence","additionalModelResponseFields":{"stop_sequence":"4"}}`},
				{"metadata", `{"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":2007,"cacheReadInputTokens":2000}}`}},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvText, Text: "1 2 3"},
				{Kind: ir.EvFinish, Stop: ir.StopSequence, StopSequence: "4", Usage: codec.Usage{Input: 3, CacheRead: 2000, Output: 4}}}, true},
		{"metadata before messageStop: the usage, then the finish at the stop",
			[]frame{start, meta, stop("guardrail_intervened")},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvUsage, Usage: codec.Usage{Input: 10, Output: 5}},
				{Kind: ir.EvFinish, Stop: ir.StopContentFilter, Usage: codec.Usage{Input: 10, Output: 5}}}, true},
		{"redacted reasoning; a tool call without input gets {}; the call makes end_turn tool_use",
			[]frame{{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"reasoningContent":{"redactedContent":"b3BhcXVl"}}}`},
				{"contentBlockStop", `{"contentBlockIndex":0}`},
				{"contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"now"}}}`},
				{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":""}}}`},
				{"contentBlockStop", `{"contentBlockIndex":1}`}, stop("end_turn"), meta},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvRedacted, Text: "opaque", Format: SignatureFormat},
				{Kind: ir.EvToolStart, Index: 0, ID: "t1", Name: "now"}, {Kind: ir.EvToolArgs, Index: 0, Text: "{}"},
				{Kind: ir.EvFinish, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 10, Output: 5}}}, true},
		{"tool blocks still open at the finish are closed in order",
			[]frame{start,
				{"contentBlockStart", `{"contentBlockIndex":3,"start":{"toolUse":{"toolUseId":"b","name":"g"}}}`},
				{"contentBlockStart", `{"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"a","name":"f"}}}`},
				{"contentBlockDelta", `{"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"x\":1}"}}}`},
				stop("max_tokens"), meta},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvToolStart, Index: 0, ID: "b", Name: "g"},
				{Kind: ir.EvToolStart, Index: 1, ID: "a", Name: "f"}, {Kind: ir.EvToolArgs, Index: 1, Text: `{"x":1}`},
				{Kind: ir.EvToolArgs, Index: 0, Text: "{}"},
				{Kind: ir.EvFinish, Stop: ir.StopLength, Usage: codec.Usage{Input: 10, Output: 5}}}, true},
		{"unknown events, input for no tool block and empty deltas carry nothing",
			[]frame{start, {"ping", `{}`}, {"contentBlockDelta", `{"contentBlockIndex":4,"delta":{"toolUse":{"input":"{}"}}}`},
				{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":""}}`},
				{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"citation":{"title":"x"}}}`},
				{"contentBlockStart", `{"contentBlockIndex":5,"start":{"image":{"format":"png"}}}`},
				{"contentBlockStop", `{"contentBlockIndex":9}`}},
			[]ir.Event{{Kind: ir.EvStart}}, false},
		{"events written as the API's union, without a name",
			[]frame{{"", `{"messageStart":{"role":"assistant"}}`}, {"", `{"contentBlockDelta":{"contentBlockIndex":0,"delta":{"text":"Hi"}},"p":"x"}`},
				{"", `{"messageStop":{"stopReason":"end_turn"}}`}, {"", `{"metadata":{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}}`}},
			[]ir.Event{{Kind: ir.EvStart}, {Kind: ir.EvText, Text: "Hi"},
				{Kind: ir.EvFinish, Stop: ir.StopEnd, Usage: codec.Usage{Input: 1, Output: 1}}}, true},
		{"an exception written as the API's union",
			[]frame{{"", `{"internalServerException":{"message":"boom"}}`}},
			[]ir.Event{{Kind: ir.EvError, Err: &ir.Error{Status: 500, Kind: ir.ErrServer, Code: "InternalServerException", Message: "boom"}}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, done := decodeFrames(t, c.frames)
			if done != c.done {
				t.Errorf("done %v, want %v", done, c.done)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %s\nwant %s", dump(got), dump(c.want))
			}
		})
	}
}

func TestStreamDecodeUndecodable(t *testing.T) {
	d := Format.NewStreamDecoder()
	if _, _, err := d.Decode([]byte("contentBlockDelta"), []byte(`{"contentBlockIndex":0,"delta":`)); err == nil {
		t.Error("a cut event decoded without error")
	}
	if _, _, err := d.Decode([]byte("contentBlockDelta"), []byte(`{"contentBlockIndex":0,"delta":{"text":5}}`)); err == nil {
		t.Error("a mistyped event decoded without error")
	}
	if _, _, err := d.Decode(nil, []byte(`{"contentBlockDelta":`)); err == nil {
		t.Error("a cut event without a name decoded without error")
	}
}

// TestStreamEnd: a stream that stopped after messageStop without its metadata is whole (its
// usage unknown); one that stopped before messageStop is not.
func TestStreamEnd(t *testing.T) {
	cases := []struct {
		name     string
		frames   []frame
		want     []ir.Event
		finished bool
	}{
		{"after messageStop", []frame{{"messageStart", `{"role":"assistant"}`},
			{"contentBlockStart", `{"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t","name":"f"}}}`},
			{"messageStop", `{"stopReason":"tool_use"}`}},
			[]ir.Event{{Kind: ir.EvToolArgs, Index: 0, Text: "{}"}, {Kind: ir.EvFinish, Stop: ir.StopToolUse}}, true},
		{"before messageStop", []frame{{"messageStart", `{"role":"assistant"}`},
			{"contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"}}`}}, nil, false},
		{"after the finish", []frame{{"messageStop", `{"stopReason":"end_turn"}`}, {"metadata", `{"usage":{}}`}}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Format.NewStreamDecoder()
			for _, f := range c.frames {
				if _, _, err := d.Decode([]byte(f.name), []byte(f.data)); err != nil {
					t.Fatal(err)
				}
			}
			evs, marker, finished := d.(ir.EndingDecoder).End()
			if finished != c.finished || marker != nil || !reflect.DeepEqual(evs, c.want) {
				t.Errorf("End() = %s, %v, %v; want %s, nil, %v", dump(evs), marker, finished, dump(c.want), c.finished)
			}
		})
	}
}
