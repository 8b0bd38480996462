package converse

import (
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func TestDecodeResponse(t *testing.T) {
	cases := []struct {
		name string
		body string
		want *ir.Response
	}{
		{"reasoning with its signature, redacted reasoning, text, tool calls, cache reads",
			string(readFixture(t, "response_thinking_tools.json")),
			&ir.Response{Parts: []ir.Part{
				{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "The user wants the weather in Paris and the time in <Tokyo> & more.",
					Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", SignatureFormat: SignatureFormat}},
				{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP", SignatureFormat: SignatureFormat}},
				{Kind: ir.PartText, Text: "I'll check both for you."},
				{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "tooluse_kZJMlvQmRJ6eAyJE5GIl7Q", Name: "get_weather", Arguments: `{"city":"Paris","unit":"celsius"}`}},
				{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "tooluse_BQ7kh3SUdQ3dLQzexGq9jZ", Name: "get_time", Arguments: `{"zone":"Asia/Tokyo","q":"a \"quoted\" {brace"}`}},
			}, Stop: ir.StopToolUse, Usage: codec.Usage{Input: 472, CacheRead: 1800, CacheWrite: 100, Output: 189}}},
		{"the matched stop sequence from Claude's additional fields",
			`{"output":{"message":{"role":"assistant","content":[{"text":"1, 2, 3"}]}},"stopReason":"stop_sequence",
			  "additionalModelResponseFields":{"stop_sequence":"4"},"usage":{"inputTokens":9,"outputTokens":7,"totalTokens":16},"metrics":{"latencyMs":300}}`,
			&ir.Response{Parts: []ir.Part{{Kind: ir.PartText, Text: "1, 2, 3"}}, Stop: ir.StopSequence, StopSequence: "4",
				Usage: codec.Usage{Input: 9, Output: 7}}},
		{"a guardrail stopped it: a content filter, empty text left out",
			`{"output":{"message":{"role":"assistant","content":[{"text":""}]}},"stopReason":"guardrail_intervened","usage":{"inputTokens":12,"outputTokens":0,"totalTokens":12}}`,
			&ir.Response{Stop: ir.StopContentFilter, Usage: codec.Usage{Input: 12}}},
		{"content_filtered, citations read as their text, unsigned reasoning",
			`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"hmm"}}},
			  {"citationsContent":{"content":[{"text":"Cited."}],"citations":[{"title":"doc"}]}}]}},"stopReason":"content_filtered"}`,
			&ir.Response{Parts: []ir.Part{
				{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "hmm", SignatureFormat: SignatureFormat}},
				{Kind: ir.PartText, Text: "Cited."}}, Stop: ir.StopContentFilter}},
		{"max_tokens is a length stop even with a tool call; input not an object becomes {}",
			`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":"{\"a\""}}]}},"stopReason":"max_tokens"}`,
			&ir.Response{Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "t1", Name: "f", Arguments: "{}"}}}, Stop: ir.StopLength}},
		{"end_turn with a tool call is tool_use; the context window is a length stop elsewhere",
			`{"output":{"message":{"role":"assistant","content":[{"toolUse":{"toolUseId":"t1","name":"f","input":null}}]}},"stopReason":"end_turn"}`,
			&ir.Response{Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "t1", Name: "f", Arguments: "{}"}}}, Stop: ir.StopToolUse}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format.DecodeResponse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestStopReasons(t *testing.T) {
	cases := []struct {
		reason  string
		sawTool bool
		want    ir.StopReason
	}{
		{"end_turn", false, ir.StopEnd},
		{"end_turn", true, ir.StopToolUse},
		{"tool_use", true, ir.StopToolUse},
		{"max_tokens", false, ir.StopLength},
		{"max_tokens", true, ir.StopLength},
		{"model_context_window_exceeded", false, ir.StopLength},
		{"stop_sequence", false, ir.StopSequence},
		{"stop_sequence", true, ir.StopToolUse},
		{"guardrail_intervened", false, ir.StopContentFilter},
		{"content_filtered", true, ir.StopContentFilter},
		{"malformed_model_output", false, ir.StopEnd},
		{"malformed_tool_use", true, ir.StopToolUse},
		{"", false, ir.StopEnd},
	}
	for _, c := range cases {
		if got := stopFrom(c.reason, c.sawTool); got != c.want {
			t.Errorf("stopFrom(%q, %v) = %q, want %q", c.reason, c.sawTool, got, c.want)
		}
	}
}

func TestDecodeResponseRefuses(t *testing.T) {
	for _, body := range []string{`not json`, `{"stopReason":"end_turn"}`, `{"output":{}}`, `[]`, `{"output":{"message":{"content":[{"text":5}]}}}`} {
		if r, err := Format.DecodeResponse([]byte(body)); err == nil {
			t.Errorf("%s: decoded %+v, want an error", body, r)
		}
	}
}
