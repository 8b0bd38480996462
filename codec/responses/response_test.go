package responses

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func TestDecodeResponseFixture(t *testing.T) {
	got, err := Format.DecodeResponse(fixture(t, "response_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := &ir.Response{
		ID:      "resp_68af4030592c81938ec0a5fbab4a3e9f05438e46b5f69a3b",
		Model:   "gpt-5-2025-08-07",
		Created: 1756315696,
		Parts: []ir.Part{
			reasoningPart(ir.Reasoning{Text: "**Checking the weather**\n\nI need both cities.\n\nCalling the tool twice.",
				Encrypted: "gAAAAABor0A0Q2nBuQW1Bv9w9Dk9oQ==", ID: "rs_68af4030baa48193b0b43b4c2a176a1a05438e46b5f69a3b",
				SignatureFormat: "responses"}),
			text("Let me check both."),
			call("call_6bYQ3cC9yVn4a2yEnpQqGv8C", "get_weather", `{"city":"Paris"}`),
			call("call_kP9f0S1xw2Ke3aX7Qm5tZbRc", "get_time", `{}`),
		},
		Stop: ir.StopToolUse,
		// 328 input of which 128 cached; 152 output of which 64 reasoning.
		Usage: codec.Usage{Input: 200, CacheRead: 128, Output: 88, Reasoning: 64},
	}
	sameJSON(t, "response", got, want)
}

func TestDecodeResponseStatus(t *testing.T) {
	cases := []struct {
		name, body string
		want       ir.Response
	}{{
		name: "max_output_tokens",
		body: `{"id":"resp_1","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},
			"output":[{"type":"message","id":"msg_1","role":"assistant","status":"incomplete","content":[{"type":"output_text","text":"Once upon"}]}],
			"usage":{"input_tokens":10,"input_tokens_details":{"cached_tokens":0,"cache_write_tokens":4},"output_tokens":16,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":26}}`,
		want: ir.Response{ID: "resp_1", Parts: []ir.Part{text("Once upon")}, Stop: ir.StopLength,
			Usage: codec.Usage{Input: 6, CacheWrite: 4, Output: 16}},
	}, {
		name: "content filter, refusal as text",
		body: `{"id":"resp_2","status":"incomplete","incomplete_details":{"reason":"content_filter"},
			"output":[{"type":"message","id":"msg_2","role":"assistant","content":[{"type":"refusal","refusal":"I can't help with that."}]}]}`,
		want: ir.Response{ID: "resp_2", Parts: []ir.Part{text("I can't help with that.")}, Stop: ir.StopContentFilter},
	}, {
		name: "custom tool call",
		body: `{"id":"resp_3","status":"completed","output":[{"type":"custom_tool_call","id":"ctc_1","call_id":"call_P","name":"apply_patch","input":"*** Begin Patch\n"}]}`,
		want: ir.Response{ID: "resp_3", Parts: []ir.Part{call("call_P", "apply_patch", `{"input":"*** Begin Patch\n"}`)},
			Stop: ir.StopToolUse},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format.DecodeResponse([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "response", got, c.want)
		})
	}
}

func TestDecodeResponseFailed(t *testing.T) {
	_, err := Format.DecodeResponse([]byte(`{"id":"resp_4","status":"failed","error":{"code":"rate_limit_exceeded","message":"Slow down."},"output":[]}`))
	var e *ir.Error
	if !errors.As(err, &e) || *e != (ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "rate_limit_exceeded", Message: "Slow down."}) {
		t.Errorf("error = %#v", err)
	}
	_, err = Format.DecodeResponse([]byte(`<html>`))
	if !errors.As(err, &e) || e.Kind != ir.ErrServer || e.Status != 502 {
		t.Errorf("error = %#v", err)
	}
}

func TestEncodeResponse(t *testing.T) {
	fixedIDs(t)
	r := &ir.Response{
		ID: "chatcmpl-9", Created: 1741476000,
		Parts: []ir.Part{
			reasoningPart(ir.Reasoning{Text: "Thinking.", Encrypted: "gAAA", ID: "rs_up", SignatureFormat: "responses"}),
			reasoningPart(ir.Reasoning{Text: "Claude thought.", Signature: "sig", SignatureFormat: "messages"}),
			reasoningPart(ir.Reasoning{Redacted: "xx", SignatureFormat: "messages"}),
			text("Let me "), text("check."),
			{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`,
				Signature: "AAEC", SignatureFormat: "gemini"}},
			call("call_2", "apply_patch", `{"input":"*** Begin Patch"}`),
		},
		Stop:  ir.StopEnd,
		Usage: codec.Usage{Input: 200, CacheRead: 128, CacheWrite: 10, Output: 32, Reasoning: 20},
	}
	got := Format.EncodeResponse(r, "my-model")
	want := `{"id":"resp_chatcmpl-9","object":"response","created_at":1741476000,"status":"completed",
		"completed_at":1741476777,"error":null,"incomplete_details":null,"instructions":null,"max_output_tokens":null,
		"model":"my-model","output":[
		{"id":"rs_up","type":"reasoning","summary":[{"type":"summary_text","text":"Thinking."}],"encrypted_content":"gAAA"},
		{"id":"rs_001","type":"reasoning","summary":[{"type":"summary_text","text":"Claude thought."}]},
		{"id":"msg_002","type":"message","status":"completed","role":"assistant",
			"content":[{"type":"output_text","text":"Let me check.","annotations":[],"logprobs":[]}]},
		{"id":"fc_003","type":"function_call","status":"completed","call_id":"call_1__thought__AAEC","name":"get_weather","arguments":"{\"city\":\"Paris\"}"},
		{"id":"fc_004","type":"function_call","status":"completed","call_id":"call_2","name":"apply_patch","arguments":"{\"input\":\"*** Begin Patch\"}"}],
		"parallel_tool_calls":true,"previous_response_id":null,"reasoning":{"effort":null,"summary":null},"store":false,
		"temperature":1,"text":{"format":{"type":"text"}},"tool_choice":"auto","tools":[],"top_p":1,"truncation":"disabled",
		"usage":{"input_tokens":338,"input_tokens_details":{"cached_tokens":128,"cache_write_tokens":10},
			"output_tokens":52,"output_tokens_details":{"reasoning_tokens":20},"total_tokens":390},
		"metadata":{}}`
	sameJSON(t, "response", got, want)
	assertSchema(t, "Response", got)

	// Knowing the request, the custom tool's call is a custom_tool_call and parameters are echoed.
	req := &ir.Request{Tools: []ir.Tool{{Name: "get_weather"}, {Name: "apply_patch", Custom: true}},
		Temperature: ptr(0.3), MaxTokens: 500, Thinking: ir.Thinking{Effort: "high"},
		Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{"k":"v"}`)}}
	fixedIDs(t)
	got = Format.EncodeResponseFor(&ir.Response{ID: "resp_x", Parts: r.Parts[5:], Stop: ir.StopToolUse}, req, "m")
	var w struct {
		Output          []json.RawMessage
		Temperature     float64
		MaxOutputTokens int `json:"max_output_tokens"`
		Reasoning       reasoningConfig
		Tools           []json.RawMessage
		Metadata        json.RawMessage
	}
	if err := json.Unmarshal(got, &w); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "custom call", w.Output[1], `{"id":"ctc_002","type":"custom_tool_call","call_id":"call_2","name":"apply_patch","input":"*** Begin Patch"}`)
	if w.Temperature != 0.3 || w.MaxOutputTokens != 500 || *w.Reasoning.Effort != "high" || len(w.Tools) != 2 || string(w.Metadata) != `{"k":"v"}` {
		t.Errorf("echoed parameters wrong: %s", got)
	}
	assertSchema(t, "Response", got)
}

func TestEncodeResponseIncomplete(t *testing.T) {
	fixedIDs(t)
	for _, c := range []struct {
		stop   ir.StopReason
		reason string
	}{{ir.StopLength, "max_output_tokens"}, {ir.StopContentFilter, "content_filter"}} {
		got := Format.EncodeResponse(&ir.Response{ID: "resp_1", Created: 1, Parts: []ir.Part{text("Once")}, Stop: c.stop}, "m")
		var w struct {
			Status            string
			CompletedAt       *int64                  `json:"completed_at"`
			IncompleteDetails struct{ Reason string } `json:"incomplete_details"`
			Output            []struct{ Status string }
		}
		if err := json.Unmarshal(got, &w); err != nil {
			t.Fatal(err)
		}
		if w.Status != "incomplete" || w.IncompleteDetails.Reason != c.reason || w.CompletedAt != nil || w.Output[0].Status != "incomplete" {
			t.Errorf("%s: %s", c.stop, got)
		}
		assertSchema(t, "Response", got)
	}
}

// What a route answers is what a responses client gets back (ids and parameters aside).
func TestResponseRoundTrip(t *testing.T) {
	fixedIDs(t)
	r, err := Format.DecodeResponse(fixture(t, "response_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := Format.DecodeResponse(Format.EncodeResponse(r, r.Model))
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "response", again, r)
}

func TestPath(t *testing.T) {
	if p := Format.Path("gpt-5", true); p != "/responses" {
		t.Errorf("Path = %q", p)
	}
}

func TestEncodeError(t *testing.T) {
	cases := []struct {
		e    ir.Error
		want string
	}{
		{ir.Error{Kind: ir.ErrInvalidRequest, Param: "input[3].call_id", Message: "input[3].call_id is required"},
			`{"error":{"message":"input[3].call_id is required","type":"invalid_request_error","param":"input[3].call_id","code":null}}`},
		{ir.Error{Kind: ir.ErrRateLimit, Message: "slow"},
			`{"error":{"message":"slow","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`},
		{ir.Error{Kind: ir.ErrAuthentication, Code: "invalid_api_key", Message: "bad key"},
			`{"error":{"message":"bad key","type":"authentication_error","param":null,"code":"invalid_api_key"}}`},
		{ir.Error{Kind: ir.ErrBilling, Message: "no credit"},
			`{"error":{"message":"no credit","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`},
		{ir.Error{Kind: ir.ErrOverloaded, Message: "busy"},
			`{"error":{"message":"busy","type":"service_unavailable_error","param":null,"code":null}}`},
		{ir.Error{Kind: ir.ErrServer, Message: "oops"},
			`{"error":{"message":"oops","type":"server_error","param":null,"code":null}}`},
	}
	for _, c := range cases {
		if got := string(Format.EncodeError(&c.e)); got != c.want {
			t.Errorf("EncodeError(%+v)\n got %s\nwant %s", c.e, got, c.want)
		}
	}
}

func TestDecodeError(t *testing.T) {
	cases := []struct {
		status int
		body   string
		want   ir.Error
	}{
		{400, `{"error":{"message":"Invalid 'input[0].content'","type":"invalid_request_error","param":"input[0].content","code":null}}`,
			ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Param: "input[0].content", Message: "Invalid 'input[0].content'"}},
		{401, `{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			ir.Error{Status: 401, Kind: ir.ErrAuthentication, Code: "invalid_api_key", Message: "Incorrect API key"}},
		{404, `{"error":{"message":"The model does not exist","type":"invalid_request_error","code":"model_not_found"}}`,
			ir.Error{Status: 404, Kind: ir.ErrNotFound, Code: "model_not_found", Message: "The model does not exist"}},
		{429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "rate_limit_exceeded", Message: "Rate limit reached"}},
		{429, `{"error":{"message":"You exceeded your quota","type":"insufficient_quota","code":"insufficient_quota"}}`,
			ir.Error{Status: 429, Kind: ir.ErrBilling, Code: "insufficient_quota", Message: "You exceeded your quota"}},
		{403, `{"error":{"message":"no","type":"permission_error"}}`,
			ir.Error{Status: 403, Kind: ir.ErrPermission, Message: "no"}},
		{500, `{"error":{"message":"The server had an error","type":"server_error","code":null}}`,
			ir.Error{Status: 500, Kind: ir.ErrServer, Message: "The server had an error"}},
		{503, `{"error":{"message":"overloaded","type":"service_unavailable_error","code":"overloaded"}}`,
			ir.Error{Status: 503, Kind: ir.ErrOverloaded, Code: "overloaded", Message: "overloaded"}},
		{400, `{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded","param":"input"}}`,
			ir.Error{Status: 400, Kind: ir.ErrInvalidRequest, Code: "context_length_exceeded", Param: "input", Message: "too long"}},
		{413, `request entity too large`,
			ir.Error{Status: 413, Kind: ir.ErrTooLarge, Message: "request entity too large"}},
		{504, ``, ir.Error{Status: 504, Kind: ir.ErrTimeout, Message: "upstream error 504 Gateway Timeout"}},
		{529, `{"error":{"message":"busy","code":529}}`, ir.Error{Status: 529, Kind: ir.ErrOverloaded, Code: "529", Message: "busy"}},
	}
	for _, c := range cases {
		if got := Format.DecodeError(c.status, []byte(c.body)); *got != c.want {
			t.Errorf("DecodeError(%d, %s)\n got %+v\nwant %+v", c.status, c.body, *got, c.want)
		}
	}
}

func TestResponseErrorCode(t *testing.T) {
	cases := []struct {
		e    ir.Error
		want string
	}{
		{ir.Error{Kind: ir.ErrRateLimit}, "rate_limit_exceeded"},
		{ir.Error{Kind: ir.ErrBilling}, "insufficient_quota"},
		{ir.Error{Kind: ir.ErrInvalidRequest, Code: "context_length_exceeded"}, "context_length_exceeded"},
		{ir.Error{Kind: ir.ErrInvalidRequest}, "invalid_prompt"},
		{ir.Error{Kind: ir.ErrInvalidRequest, Code: "invalid_image_url"}, "invalid_image_url"},
		{ir.Error{Kind: ir.ErrOverloaded, Code: "overloaded_error"}, "server_error"},
		{ir.Error{Kind: ir.ErrTimeout}, "server_error"},
	}
	for _, c := range cases {
		if got := responseErrorCode(&c.e); got != c.want {
			t.Errorf("responseErrorCode(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
	// And back: the code of a failed response decides the kind.
	for code, want := range map[string]ir.ErrorKind{"rate_limit_exceeded": ir.ErrRateLimit,
		"insufficient_quota": ir.ErrBilling, "context_length_exceeded": ir.ErrInvalidRequest,
		"invalid_base64_image": ir.ErrInvalidRequest, "server_error": ir.ErrServer, "vector_store_timeout": ir.ErrServer,
		"server_is_overloaded": ir.ErrOverloaded, "slow_down": ir.ErrOverloaded} {
		if e := responseError("", code, "m", ""); e.Kind != want || e.Status != statusFor(want) {
			t.Errorf("responseError(%q) = %s %d, want %s", code, e.Kind, e.Status, want)
		}
	}
}

// TestAnswerUsageGolden: a provider that counts reasoning beside output_tokens says so in
// total_tokens; either way the visible output and the reasoning come apart
// (testdata/responses/usage).
func TestAnswerUsageGolden(t *testing.T) {
	cases := map[string]codec.Usage{
		"openai_reasoning":        {Input: 26, CacheRead: 6, Output: 9, Reasoning: 94},
		"reasoning_beside_output": {Input: 279, Output: 6, Reasoning: 89},
	}
	for name, want := range cases {
		r, err := Format.DecodeResponse(fixture(t, "usage/"+name+".json"))
		if err != nil || r.Usage != want {
			t.Errorf("%s: usage %+v, %v; want %+v", name, r.Usage, err, want)
		}
	}
}
