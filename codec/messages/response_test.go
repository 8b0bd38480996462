package messages

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

func TestDecodeResponse(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(testdata, "response_thinking_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Format.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	want := &ir.Response{
		ID: "msg_01XFDUDYJgAACzvnptvVoYEL", Model: "claude-sonnet-4-5-20250929", Stop: ir.StopToolUse,
		Parts: []ir.Part{
			reasoning(ir.Reasoning{Text: "The user wants the weather.", Signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds", SignatureFormat: "messages"}),
			reasoning(ir.Reasoning{Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP", SignatureFormat: "messages"}),
			text("I'll look that up."),
			call("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"city":"Paris","days":[1,2]}`),
			call("toolu_02", "get_time", `{}`),
		},
		Usage: codec.Usage{Input: 412, CacheWrite: 40, CacheRead: 1800, Output: 96},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", dump(got), dump(want))
	}
}

func TestDecodeResponseStops(t *testing.T) {
	cases := []struct {
		body string
		stop ir.StopReason
		seq  string
	}{
		{`{"type":"message","content":[{"type":"text","text":"a"}],"stop_reason":"end_turn"}`, ir.StopEnd, ""},
		{`{"type":"message","content":[],"stop_reason":"stop_sequence","stop_sequence":"END"}`, ir.StopSequence, "END"},
		{`{"type":"message","content":[],"stop_reason":"max_tokens"}`, ir.StopLength, ""},
		{`{"type":"message","content":[],"stop_reason":"model_context_window_exceeded"}`, ir.StopLength, ""},
		{`{"type":"message","content":[],"stop_reason":"refusal"}`, ir.StopContentFilter, ""},
		{`{"type":"message","content":[],"stop_reason":"pause_turn"}`, ir.StopPause, ""},
		{`{"type":"message","content":[{"type":"tool_use","id":"t","name":"f","input":{}}],"stop_reason":"end_turn"}`, ir.StopToolUse, ""},
		{`{"type":"message","content":[{"type":"tool_use","id":"t","name":"f","input":{}}],"stop_reason":"max_tokens"}`, ir.StopLength, ""},
	}
	for _, c := range cases {
		r, err := Format.DecodeResponse([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		if r.Stop != c.stop || r.StopSequence != c.seq {
			t.Errorf("%s: stop %q %q, want %q %q", c.body, r.Stop, r.StopSequence, c.stop, c.seq)
		}
	}
}

func TestDecodeResponseErrors(t *testing.T) {
	if _, err := Format.DecodeResponse([]byte(`{"type":"message"`)); err == nil {
		t.Error("truncated body decoded")
	}
	_, err := Format.DecodeResponse([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	var e *ir.Error
	if !errors.As(err, &e) || e.Kind != ir.ErrOverloaded || e.Status != 529 || e.Message != "Overloaded" {
		t.Errorf("got %#v", err)
	}
}

// input_tokens excludes the cache; output_tokens includes thinking, split out only when the
// answer says how much.
func TestUsageNormalization(t *testing.T) {
	cases := []struct {
		usage string
		want  codec.Usage
	}{
		{`{"input_tokens":10,"output_tokens":5}`, codec.Usage{Input: 10, Output: 5}},
		{`{"input_tokens":412,"cache_creation_input_tokens":40,"cache_read_input_tokens":1800,"output_tokens":96}`,
			codec.Usage{Input: 412, CacheWrite: 40, CacheRead: 1800, Output: 96}},
		{`{"input_tokens":3,"output_tokens":96,"output_tokens_details":{"thinking_tokens":60}}`,
			codec.Usage{Input: 3, Output: 36, Reasoning: 60}},
		{`{"input_tokens":3,"output_tokens":10,"output_tokens_details":{"thinking_tokens":60}}`,
			codec.Usage{Input: 3, Output: 0, Reasoning: 10}},
	}
	for _, c := range cases {
		body := []byte(`{"type":"message","content":[],"stop_reason":"end_turn","usage":` + c.usage + `}`)
		r, err := Format.DecodeResponse(body)
		if err != nil {
			t.Fatal(err)
		}
		if r.Usage != c.want {
			t.Errorf("%s: got %+v, want %+v", c.usage, r.Usage, c.want)
		}
		if u, ok := ResponseUsage(body); !ok || u != c.want {
			t.Errorf("ResponseUsage(%s) = %+v, %v", c.usage, u, ok)
		}
	}
	if _, ok := ResponseUsage([]byte(`{"type":"message"}`)); ok {
		t.Error("usage found in an answer without one")
	}
}

func TestEncodeResponse(t *testing.T) {
	cases := []struct {
		name string
		resp ir.Response
		want string
	}{
		{"foreign reasoning is display-only, gemini ids carry the signature, tools make tool_use",
			ir.Response{ID: "resp-1", Model: "gemini-x", Stop: ir.StopEnd,
				Usage: codec.Usage{Input: 100, CacheRead: 20, CacheWrite: 5, Output: 30, Reasoning: 12},
				Parts: []ir.Part{
					reasoning(ir.Reasoning{Text: "thought", Signature: "Z2Vt", SignatureFormat: "gemini"}),
					reasoning(ir.Reasoning{Encrypted: "enc", SignatureFormat: "responses"}),
					text("Hi <b>."), text(""),
					{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "call_1", Name: "f", Arguments: `{"a": 1}`, Signature: "AAEC", SignatureFormat: "gemini"}},
					call("call_2", "g", `not json`),
					call("call_3", "h", ``),
				}},
			`{"id":"msg_resp-1","type":"message","role":"assistant","model":"client-model",
			  "content":[
			    {"type":"thinking","thinking":"thought","signature":""},
			    {"type":"text","text":"Hi <b>."},
			    {"type":"tool_use","id":"call_1__thought__AAEC","name":"f","input":{"a":1}},
			    {"type":"tool_use","id":"call_2","name":"g","input":{}},
			    {"type":"tool_use","id":"call_3","name":"h","input":{}}],
			  "stop_reason":"tool_use","stop_sequence":null,
			  "usage":{"input_tokens":100,"cache_creation_input_tokens":5,"cache_read_input_tokens":20,"output_tokens":42}}`},
		{"stop sequence",
			ir.Response{ID: "msg_x", Stop: ir.StopSequence, StopSequence: "END", Parts: []ir.Part{text("a")}},
			`{"id":"msg_x","type":"message","role":"assistant","model":"client-model","content":[{"type":"text","text":"a"}],
			  "stop_reason":"stop_sequence","stop_sequence":"END",
			  "usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`},
		{"length with a cut tool call stays max_tokens; content filter is refusal",
			ir.Response{ID: "msg_y", Stop: ir.StopLength, Parts: []ir.Part{call("c", "f", `{"a":`)}},
			`{"id":"msg_y","type":"message","role":"assistant","model":"client-model","content":[{"type":"tool_use","id":"c","name":"f","input":{}}],
			  "stop_reason":"max_tokens","stop_sequence":null,
			  "usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`},
		{"refusal",
			ir.Response{ID: "msg_z", Stop: ir.StopContentFilter},
			`{"id":"msg_z","type":"message","role":"assistant","model":"client-model","content":[],
			  "stop_reason":"refusal","stop_sequence":null,
			  "usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sameJSON(t, Format.EncodeResponse(&c.resp, "client-model"), c.want)
		})
	}
}

func TestEncodeResponseMintsID(t *testing.T) {
	r, err := Format.DecodeResponse(Format.EncodeResponse(&ir.Response{}, "m"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ID) != len("msg_")+24 || r.ID[:4] != "msg_" {
		t.Errorf("id %q", r.ID)
	}
}

// A messages answer decoded and encoded again is the same answer (cache_creation details
// and service_tier aside, which IR does not carry); decoded again, the same IR.
func TestResponseRoundTrip(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(testdata, "response_thinking_tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Format.DecodeResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	out := Format.EncodeResponse(r, "claude-sonnet-4-5-20250929")
	sameJSON(t, out, `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929",
	  "content":[
	    {"type":"thinking","thinking":"The user wants the weather.","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
	    {"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
	    {"type":"text","text":"I'll look that up."},
	    {"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{"city":"Paris","days":[1,2]}},
	    {"type":"tool_use","id":"toolu_02","name":"get_time","input":{}}],
	  "stop_reason":"tool_use","stop_sequence":null,
	  "usage":{"input_tokens":412,"cache_creation_input_tokens":40,"cache_read_input_tokens":1800,"output_tokens":96}}`)
	again, err := Format.DecodeResponse(out)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, r) {
		t.Errorf("got  %s\nwant %s", dump(again), dump(r))
	}
}

func TestEncodeError(t *testing.T) {
	cases := []struct {
		kind ir.ErrorKind
		typ  string
	}{
		{ir.ErrInvalidRequest, "invalid_request_error"}, {ir.ErrAuthentication, "authentication_error"},
		{ir.ErrPermission, "permission_error"}, {ir.ErrNotFound, "not_found_error"},
		{ir.ErrTooLarge, "request_too_large"}, {ir.ErrRateLimit, "rate_limit_error"},
		{ir.ErrBilling, "billing_error"}, {ir.ErrServer, "api_error"},
		{ir.ErrOverloaded, "overloaded_error"}, {ir.ErrTimeout, "timeout_error"}, {"", "api_error"},
	}
	for _, c := range cases {
		got := Format.EncodeError(&ir.Error{Kind: c.kind, Message: "m <x>"})
		sameJSON(t, got, `{"type":"error","error":{"type":"`+c.typ+`","message":"m <x>"}}`)
	}
	got := Format.EncodeError(&ir.Error{Kind: ir.ErrRateLimit, Code: "window_exhausted", Message: "slow down", Param: "x"})
	sameJSON(t, got, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down","code":"window_exhausted"}}`)
}

func TestDecodeError(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   ir.Error
	}{
		{"envelope", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}`,
			ir.Error{Status: 529, Kind: ir.ErrOverloaded, Message: "Overloaded"}},
		{"spend limit code", 429, `{"type":"error","error":{"type":"rate_limit_error","message":"limit","details":{"error_code":"spend_limit"}}}`,
			ir.Error{Status: 429, Kind: ir.ErrRateLimit, Code: "spend_limit", Message: "limit"}},
		{"our own envelope with a code", 402, `{"type":"error","error":{"type":"billing_error","message":"pay","code":"no_credit"}}`,
			ir.Error{Status: 402, Kind: ir.ErrBilling, Code: "no_credit", Message: "pay"}},
		{"unknown type: the status decides", 404, `{"type":"error","error":{"type":"new_error","message":"model: x"}}`,
			ir.Error{Status: 404, Kind: ir.ErrNotFound, Message: "model: x"}},
		{"not JSON", 502, `<html>bad gateway</html>`,
			ir.Error{Status: 502, Kind: ir.ErrServer, Message: "upstream answered 502 Bad Gateway: <html>bad gateway</html>"}},
		{"empty body", 413, ``,
			ir.Error{Status: 413, Kind: ir.ErrTooLarge, Message: "upstream answered 413 Request Entity Too Large"}},
		{"other 4xx is invalid request", 422, `{}`,
			ir.Error{Status: 422, Kind: ir.ErrInvalidRequest, Message: "upstream answered 422 Unprocessable Entity: {}"}},
		{"504", 504, `{"type":"error","error":{"type":"timeout_error","message":"t"}}`,
			ir.Error{Status: 504, Kind: ir.ErrTimeout, Message: "t"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Format.DecodeError(c.status, []byte(c.body))
			if *got != c.want {
				t.Errorf("got %+v, want %+v", *got, c.want)
			}
		})
	}
}
