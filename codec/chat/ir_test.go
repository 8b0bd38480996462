package chat

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func canon(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestDecodeIR(t *testing.T) {
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":50,"max_tokens":9,
	 "stop":"END","reasoning_effort":"low","parallel_tool_calls":false,"x_vendor":{"a":1},
	 "tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],
	 "tool_choice":{"type":"function","function":{"name":"f"}},
	 "messages":[
	  {"role":"system","content":"be terse"},
	  {"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"low"}}]},
	  {"role":"assistant","content":"","reasoning_content":"thought","tool_calls":[{"id":"call_1__thought__AAEC","type":"function","function":{"name":"f","arguments":""}}]},
	  {"role":"tool","tool_call_id":"call_1__thought__AAEC","content":"42"},
	  {"role":"developer","content":[{"type":"text","text":"mid"}]},
	  {"role":"assistant","thinking_blocks":[{"type":"thinking","thinking":"t","signature":"sig"}],"content":"ok"}]}`
	r, err := DecodeIR([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"max tokens prefers max_completion_tokens", r.MaxTokens, 50},
		{"stop string", strings.Join(r.Stop, "|"), "END"},
		{"effort", r.Thinking.Effort, "low"},
		{"parallel", *r.Parallel, false},
		{"include usage", r.IncludeUsage, true},
		{"extra kept", string(r.Extra["x_vendor"]), `{"a":1}`},
		{"tool choice", r.ToolChoice, ir.ToolChoice{Mode: ir.ToolNamed, Name: "f"}},
		{"system first", r.Messages[0].Role, ir.RoleSystem},
		{"system in the middle keeps its place", r.Messages[4].Role, ir.RoleSystem},
		{"image inline", *r.Messages[1].Parts[1].Image, ir.Image{MediaType: "image/png", Data: "AAAA", Detail: "low"}},
		{"reasoning first", r.Messages[2].Parts[0].Reasoning.Text, "thought"},
		{"empty content dropped", len(r.Messages[2].Parts), 2},
		{"empty args become {}", r.Messages[2].Parts[1].ToolCall.Arguments, "{}"},
		{"gemini signature split from id", r.Messages[2].Parts[1].ToolCall.ID, "call_1"},
		{"signature restored", r.Messages[2].Parts[1].ToolCall.Signature, "AAEC"},
		{"tool result id split too", r.Messages[3].Parts[0].ToolResult.CallID, "call_1"},
		{"thinking block signature", r.Messages[5].Parts[0].Reasoning.Signature, "sig"},
		{"thinking block format", r.Messages[5].Parts[0].Reasoning.SignatureFormat, "messages"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestDecodeIRErrors(t *testing.T) {
	cases := map[string]string{
		`{"model":"m","messages":[{"role":"robot","content":"x"}]}`:                                   "messages[0].role",
		`{"model":"m","messages":[{"role":"tool","content":"x"}]}`:                                    "messages[0].tool_call_id",
		`{"model":"m","messages":[{"role":"user","content":[{"type":"video"}]}]}`:                     "messages[0].content[0].type",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tool_choice":"sometimes"}`:          "tool_choice",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]}`:      "tools[0]",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"thinking":{"type":"maybe"}}`:        "thinking.type",
		`{"model":"m","messages":[{"role":"user","content":"x"}],"reasoning_effort":"extreme"}`:       "reasoning_effort",
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function"}]}]}`: "messages[0].tool_calls[0].function",
	}
	for body, param := range cases {
		_, err := DecodeIR([]byte(body))
		e, ok := err.(*ir.Error)
		if !ok || e.Param != param {
			t.Errorf("%s: err %v, want param %s", body, err, param)
		}
	}
}

func TestEncodeIR(t *testing.T) {
	yes := true
	r := &ir.Request{
		Model: "client", Stream: true, MaxTokens: 100, Stop: []string{"x"},
		Thinking: ir.Thinking{Effort: "high", Enabled: &yes},
		Messages: []ir.Message{
			{Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "sys"}}},
			{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi"}, {Kind: ir.PartImage, Image: &ir.Image{URL: "https://x/y.png"}}}},
			{Role: ir.RoleAssistant, Parts: []ir.Part{
				{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "hmm", Signature: "s", SignatureFormat: "messages"}},
				{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "a", Name: "f", Arguments: "{}"}},
				{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "b", Name: "g", Arguments: `{"q":1}`}}}},
			{Role: ir.RoleTool, Parts: []ir.Part{
				{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "a", Content: []ir.Part{{Kind: ir.PartText, Text: "r1"}}}},
				{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "b", IsError: true, Content: []ir.Part{{Kind: ir.PartText, Text: "bad"}, {Kind: ir.PartImage, Image: &ir.Image{URL: "u"}}}}}}},
		},
		Tools:      []ir.Tool{{Name: "f"}, {Name: "g", Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired},
	}
	var loss ir.Loss
	got, err := EncodeIR(r, "up", &loss)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"max_tokens":100,"messages":[{"content":"sys","role":"system"},{"content":[{"text":"hi","type":"text"},{"image_url":{"url":"https://x/y.png"},"type":"image_url"}],"role":"user"},{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"f"},"id":"a","type":"function"},{"function":{"arguments":"{\"q\":1}","name":"g"},"id":"b","type":"function"}]},{"content":"r1","role":"tool","tool_call_id":"a"},{"content":"Error: bad","role":"tool","tool_call_id":"b"}],"model":"up","reasoning_effort":"high","stop":["x"],"stream":true,"stream_options":{"include_usage":true},"tool_choice":"required","tools":[{"function":{"name":"f"},"type":"function"},{"function":{"description":"d","name":"g","parameters":{"type":"object"}},"type":"function"}]}`
	if canon(t, got) != want {
		t.Fatalf("got  %s\nwant %s", canon(t, got), want)
	}
	if l := loss.Header(); l != "messages[].reasoning, messages[].tool_result.image" {
		t.Fatalf("loss %q", l)
	}
}

func TestAnswerRoundTrip(t *testing.T) {
	resp := &ir.Response{ID: "x1", Model: "up", Created: 1700000000, Stop: ir.StopEnd,
		Parts: []ir.Part{
			{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "think", Signature: "sig", SignatureFormat: "messages"}},
			{Kind: ir.PartText, Text: "hello"},
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "f", Arguments: `{"a":1}`, Signature: "AAEC", SignatureFormat: "gemini"}},
		},
		Usage: codec.Usage{Input: 5, CacheRead: 3, Output: 7, Reasoning: 2}}
	body := EncodeAnswer(resp, "client")
	want := `{"choices":[{"finish_reason":"tool_calls","index":0,"logprobs":null,"message":{"content":"hello","reasoning_content":"think","refusal":null,"role":"assistant","thinking_blocks":[{"signature":"sig","thinking":"think","type":"thinking"}],"tool_calls":[{"function":{"arguments":"{\"a\":1}","name":"f"},"id":"c1__thought__AAEC","type":"function"}]}}],"created":1700000000,"id":"chatcmpl-x1","model":"client","object":"chat.completion","usage":{"completion_tokens":9,"completion_tokens_details":{"reasoning_tokens":2},"prompt_tokens":8,"prompt_tokens_details":{"cached_tokens":3},"total_tokens":17}}`
	if canon(t, body) != want {
		t.Fatalf("got  %s\nwant %s", canon(t, body), want)
	}
	back, err := DecodeAnswer(body)
	if err != nil {
		t.Fatal(err)
	}
	if back.Usage != resp.Usage || back.Stop != ir.StopToolUse || len(back.Parts) != 3 ||
		back.Parts[2].ToolCall.ID != "c1" || back.Parts[2].ToolCall.Signature != "AAEC" || back.Parts[0].Reasoning.Signature != "sig" {
		t.Fatalf("round trip: %+v", back)
	}
}

type frames struct{ got []string }

func (f *frames) Write(name string, data []byte) error {
	f.got = append(f.got, name+"|"+string(data))
	return nil
}

func TestStreamRoundTrip(t *testing.T) {
	events := []ir.Event{
		{Kind: ir.EvStart, ID: "s1", Model: "up"},
		{Kind: ir.EvReasoning, Text: "r"},
		{Kind: ir.EvText, Text: "Hel"},
		{Kind: ir.EvText, Text: "lo"},
		{Kind: ir.EvToolStart, Index: 0, ID: "a", Name: "f"},
		{Kind: ir.EvToolStart, Index: 1, ID: "b", Name: "g"},
		{Kind: ir.EvToolArgs, Index: 1, Text: `{"x":`},
		{Kind: ir.EvToolArgs, Index: 0, Text: `{}`},
		{Kind: ir.EvToolArgs, Index: 1, Text: `2}`},
		{Kind: ir.EvUsage, Usage: codec.Usage{Input: 4, Output: 6}},
		{Kind: ir.EvFinish, Stop: ir.StopEnd},
	}
	f := &frames{}
	enc := NewStreamEncoder(f, &ir.Request{IncludeUsage: true}, "client")
	for _, e := range events {
		if err := enc.Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	enc.Close()
	if last := f.got[len(f.got)-1]; last != "|[DONE]" {
		t.Fatalf("last frame %q", last)
	}
	if !strings.Contains(f.got[0], `"delta":{"role":"assistant","content":""}`) {
		t.Fatalf("first chunk lacks the role: %s", f.got[0])
	}
	for _, fr := range f.got {
		if strings.Contains(fr, `"id":null`) || strings.Contains(fr, `"name":null`) {
			t.Fatalf("null on a continuation delta: %s", fr)
		}
	}
	if !strings.Contains(f.got[len(f.got)-3], `"finish_reason":"tool_calls"`) || !strings.Contains(f.got[len(f.got)-2], `"choices":[],"usage":{"completion_tokens":6`) {
		t.Fatalf("finish/usage frames: %v", f.got[len(f.got)-3:])
	}
	dec := NewStreamDecoder()
	var back []ir.Event
	for _, fr := range f.got {
		evs, _, err := dec.Decode(nil, []byte(strings.TrimPrefix(fr, "|")))
		if err != nil {
			t.Fatal(err)
		}
		back = append(back, evs...)
	}
	var args [2]string
	var text, reason string
	var fin ir.Event
	for _, e := range back {
		switch e.Kind {
		case ir.EvToolArgs:
			args[e.Index] += e.Text
		case ir.EvText:
			text += e.Text
		case ir.EvReasoning:
			reason += e.Text
		case ir.EvFinish:
			fin = e
		}
	}
	if args[0] != "{}" || args[1] != `{"x":2}` || text != "Hello" || reason != "r" || fin.Stop != ir.StopToolUse || fin.Usage != (codec.Usage{Input: 4, Output: 6}) {
		t.Fatalf("round trip: args %q text %q reason %q finish %+v", args, text, reason, fin)
	}
}

func TestStreamEncoderErrors(t *testing.T) {
	f := &frames{}
	enc := NewStreamEncoder(f, nil, "m")
	enc.Encode(ir.Event{Kind: ir.EvStart})
	enc.Encode(ir.Event{Kind: ir.EvError, Err: &ir.Error{Kind: ir.ErrOverloaded, Message: "Overloaded"}})
	enc.Close()
	if len(f.got) != 2 || f.got[1] != `|{"error":{"message":"Overloaded","type":"overloaded_error","param":null,"code":null}}` {
		t.Fatalf("%q", f.got)
	}
	f = &frames{}
	enc = NewStreamEncoder(f, nil, "m")
	enc.Encode(ir.Event{Kind: ir.EvStart})
	enc.Close()
	if len(f.got) != 2 || !strings.Contains(f.got[1], `"code":"stream_interrupted"`) {
		t.Fatalf("close without finish: %q", f.got)
	}
}

func FuzzStreamDecode(f *testing.F) {
	f.Add([]byte(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":3,"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`))
	f.Add([]byte(`[DONE]`))
	f.Add([]byte(`{"error":{"message":"m","type":"t","code":5}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d := NewStreamDecoder()
		d.Decode(nil, data)
		d.Decode(nil, data)
	})
}

func FuzzDecodeIR(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:x"}}]}]}`))
	f.Add([]byte(`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"a__thought__!!","function":{"name":"f"}}]}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeIR(body)
		if err != nil {
			return
		}
		var loss ir.Loss
		if _, err := EncodeIR(r, "up", &loss); err != nil {
			t.Fatalf("decoded request does not encode: %v", err)
		}
	})
}
