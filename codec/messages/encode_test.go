package messages

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func user(parts ...ir.Part) ir.Message      { return ir.Message{Role: ir.RoleUser, Parts: parts} }
func assistant(parts ...ir.Part) ir.Message { return ir.Message{Role: ir.RoleAssistant, Parts: parts} }
func system(s string) ir.Message            { return ir.Message{Role: ir.RoleSystem, Parts: []ir.Part{text(s)}} }
func call(id, name, args string) ir.Part {
	return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}}
}
func result(id string, content ...ir.Part) ir.Part {
	return ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: id, Content: content}}
}
func tool(parts ...ir.Part) ir.Message { return ir.Message{Role: ir.RoleTool, Parts: parts} }
func reasoning(r ir.Reasoning) ir.Part { return ir.Part{Kind: ir.PartReasoning, Reasoning: &r} }

var weather = ir.Tool{Name: "get_weather", Description: "Weather.", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}
var clock = ir.Tool{Name: "get_time"}

const hi = `[{"role":"user","content":[{"type":"text","text":"hi"}]}]`
const tools2 = `[{"name":"get_weather","description":"Weather.","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
	{"name":"get_time","input_schema":{"type":"object","properties":{}}}]`

func TestEncodeRequest(t *testing.T) {
	on, off := true, false
	cc := json.RawMessage(`{"type":"ephemeral"}`)
	cases := []struct {
		name string
		req  ir.Request
		want string
		loss []string
	}{
		{"system messages anywhere are hoisted in order, one block each",
			ir.Request{Messages: []ir.Message{
				{Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "A", CacheControl: cc}}},
				user(text("hi")), system("B"), assistant(text("hello")), user(text("again")), system(" "),
			}},
			`{"model":"up","max_tokens":4096,
			  "system":[{"type":"text","text":"A","cache_control":{"type":"ephemeral"}},{"type":"text","text":"B"}],
			  "messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},
			              {"role":"assistant","content":[{"type":"text","text":"hello"}]},
			              {"role":"user","content":[{"type":"text","text":"again"}]}]}`,
			[]string{ir.LossSystemPosition}},
		{"system messages that lead are not a loss",
			ir.Request{Messages: []ir.Message{system("A"), system("B"), user(text("hi"))}},
			`{"model":"up","max_tokens":4096,"system":[{"type":"text","text":"A"},{"type":"text","text":"B"}],"messages":` + hi + `}`, nil},
		{"tool results in a row and the user text after them make one user turn, results first",
			ir.Request{MaxTokens: 100, Messages: []ir.Message{
				user(text("weather and time?")),
				assistant(text(""), call("call_1", "get_weather", ` { "city": "Paris" } `), call("call_2", "get_time", "")),
				tool(result("call_1", text("18C"))),
				tool(ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "call_2", IsError: true, Content: []ir.Part{
					text("see"), {Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/png", Data: "iVBO"}}}}}),
				user(text("Thanks."), result("call_3", text(""))),
			}},
			`{"model":"up","max_tokens":100,"messages":[
			  {"role":"user","content":[{"type":"text","text":"weather and time?"}]},
			  {"role":"assistant","content":[
			    {"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}},
			    {"type":"tool_use","id":"call_2","name":"get_time","input":{}}]},
			  {"role":"user","content":[
			    {"type":"tool_result","tool_use_id":"call_1","content":"18C"},
			    {"type":"tool_result","tool_use_id":"call_2","is_error":true,"content":[
			      {"type":"text","text":"see"},
			      {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},
			    {"type":"tool_result","tool_use_id":"call_3"},
			    {"type":"text","text":"Thanks."}]}]}`, nil},
		{"consecutive same-role turns merge; empty turns vanish",
			ir.Request{Messages: []ir.Message{user(text("a")), user(text("")), user(text("b")), assistant(text("c")), assistant(text("d"))}},
			`{"model":"up","max_tokens":4096,"messages":[
			  {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},
			  {"role":"assistant","content":[{"type":"text","text":"c"},{"type":"text","text":"d"}]}]}`, nil},
		{"tools, auto, parallel false",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolAuto}, Parallel: &off},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":` + tools2 + `,
			  "tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`, nil},
		{"no mode but parallel false",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock}, Parallel: &off},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":` + tools2 + `,
			  "tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`, nil},
		{"no mode, parallel true: no tool_choice",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock}, Parallel: &on},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":` + tools2 + `}`, nil},
		{"required is any",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock}, ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":` + tools2 + `,"tool_choice":{"type":"any"}}`, nil},
		{"named is tool",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "get_time"}, Parallel: &off},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":` + tools2 + `,
			  "tool_choice":{"type":"tool","name":"get_time","disable_parallel_tool_use":true}}`, nil},
		{"none",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock}, ToolChoice: ir.ToolChoice{Mode: ir.ToolNone}, Parallel: &off},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":` + tools2 + `,"tool_choice":{"type":"none"}}`, nil},
		{"allowed tools filter the list",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{weather, clock},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired, Allowed: []string{"get_time"}}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":[{"name":"get_time","input_schema":{"type":"object","properties":{}}}],
			  "tool_choice":{"type":"any"}}`, nil},
		{"tool_choice without tools is left out",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `}`, nil},
		{"custom tools take one string; strict kept",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Tools: []ir.Tool{{Name: "apply_patch", Custom: true, Strict: &on}}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"tools":[{"name":"apply_patch","strict":true,
			  "input_schema":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}]}`, nil},
		{"thinking budget raises max_tokens; temperature, top_k and a forced choice go",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 1000, Temperature: ptr(0.7), TopK: ptr(5), TopP: ptr(0.97),
				Tools: []ir.Tool{clock}, ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "get_time"},
				Thinking: ir.Thinking{Enabled: &on, BudgetTokens: 2000}},
			`{"model":"up","max_tokens":3000,"messages":` + hi + `,"thinking":{"type":"enabled","budget_tokens":2000},"top_p":0.97,
			  "tools":[{"name":"get_time","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"auto"}}`,
			[]string{"temperature", "tool_choice", "top_k"}},
		{"effort maps to a budget; max_tokens above it stays; temperature 1 and a high top_p are fine",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 8000, Temperature: ptr(1.0), TopP: ptr(0.5),
				Thinking: ir.Thinking{Enabled: &on, Effort: "high"}},
			`{"model":"up","max_tokens":8000,"messages":` + hi + `,"thinking":{"type":"enabled","budget_tokens":4096},"temperature":1}`,
			[]string{"top_p"}},
		{"xhigh effort, default max_tokens",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Thinking: ir.Thinking{Effort: "xhigh"}},
			`{"model":"up","max_tokens":12288,"messages":` + hi + `,"thinking":{"type":"enabled","budget_tokens":8192}}`, nil},
		{"minimal effort and small budgets are the API's minimum",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 5000, Thinking: ir.Thinking{BudgetTokens: 500}},
			`{"model":"up","max_tokens":5000,"messages":` + hi + `,"thinking":{"type":"enabled","budget_tokens":1024}}`, nil},
		{"on without a size is adaptive",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 100, Thinking: ir.Thinking{Enabled: &on}},
			`{"model":"up","max_tokens":100,"messages":` + hi + `,"thinking":{"type":"adaptive"}}`, nil},
		{"off, and effort none, omit thinking",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Temperature: ptr(0.2), Thinking: ir.Thinking{Enabled: &off, Effort: "high"}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"temperature":0.2}`, nil},
		{"effort none",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Thinking: ir.Thinking{Effort: "none"}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `}`, nil},
		{"adaptive-only model: adaptive with the effort in output_config, max_tokens as given, forced choice goes",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 1000, Tools: []ir.Tool{clock},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired},
				Thinking:   ir.Thinking{Enabled: &on, Effort: "xhigh", BudgetTokens: 30000, Adaptive: true}},
			`{"model":"up","max_tokens":1000,"messages":` + hi + `,"thinking":{"type":"adaptive"},"output_config":{"effort":"xhigh"},
			  "tools":[{"name":"get_time","input_schema":{"type":"object","properties":{}}}],"tool_choice":{"type":"auto"}}`,
			[]string{"tool_choice"}},
		{"adaptive-only model: minimal is low; on without an effort is the model's default",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 10, Thinking: ir.Thinking{Effort: "minimal", Adaptive: true}},
			`{"model":"up","max_tokens":10,"messages":` + hi + `,"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}}`, nil},
		{"adaptive-only model, on without an effort",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 10, Thinking: ir.Thinking{Enabled: &on, Adaptive: true}},
			`{"model":"up","max_tokens":10,"messages":` + hi + `,"thinking":{"type":"adaptive"}}`, nil},
		{"adaptive-only model, off or not asked: no thinking",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 10, Thinking: ir.Thinking{Enabled: &off, Effort: "none", Adaptive: true}},
			`{"model":"up","max_tokens":10,"messages":` + hi + `}`, nil},
		{"structured output: json_schema is output_config.format, merged with the client's other members",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 10,
				ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"out","strict":true,"schema":{"type":"object"}}}`),
				Extra:          map[string]json.RawMessage{"output_config": json.RawMessage(`{"task_budget":{"type":"tokens","total":5}}`)}},
			`{"model":"up","max_tokens":10,"messages":` + hi + `,
			  "output_config":{"task_budget":{"type":"tokens","total":5},"format":{"type":"json_schema","schema":{"type":"object"}}}}`, nil},
		{"structured output: plain text is no request",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, MaxTokens: 10, ResponseFormat: json.RawMessage(`{"type":"text"}`)},
			`{"model":"up","max_tokens":10,"messages":` + hi + `}`, nil},
		{"temperature is clamped to 1",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Temperature: ptr(1.5), TopP: ptr(0.5), TopK: ptr(3)},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"temperature":1,"top_p":0.5,"top_k":3}`, []string{"temperature"}},
		{"only messages-issued reasoning goes back, as it was",
			ir.Request{MaxTokens: 10, Messages: []ir.Message{
				user(text("hi")),
				assistant(
					reasoning(ir.Reasoning{Text: "gemini thought", Signature: "Z2Vt", SignatureFormat: "gemini"}),
					reasoning(ir.Reasoning{Text: "chat thought"}),
					reasoning(ir.Reasoning{Text: "a <b> & \"c\"", Signature: "EqQBsig", SignatureFormat: "messages"}),
					reasoning(ir.Reasoning{Redacted: "opaque", SignatureFormat: "messages"}),
					reasoning(ir.Reasoning{Text: "unsigned", SignatureFormat: "messages"}),
					text("answer")),
			}},
			`{"model":"up","max_tokens":10,"messages":[
			  {"role":"user","content":[{"type":"text","text":"hi"}]},
			  {"role":"assistant","content":[
			    {"type":"thinking","thinking":"a <b> & \"c\"","signature":"EqQBsig"},
			    {"type":"redacted_thinking","data":"opaque"},
			    {"type":"text","text":"answer"}]}]}`, []string{"messages[].reasoning"}},
		{"a tool loop whose assistant turn has no thinking cannot turn thinking on",
			ir.Request{MaxTokens: 10, Temperature: ptr(0.3), Thinking: ir.Thinking{Enabled: &on, Effort: "low"}, Messages: []ir.Message{
				user(text("hi")),
				assistant(reasoning(ir.Reasoning{Text: "foreign"}), call("c1", "get_time", "{}")),
				tool(result("c1", text("noon"))),
			}},
			`{"model":"up","max_tokens":10,"temperature":0.3,"messages":[
			  {"role":"user","content":[{"type":"text","text":"hi"}]},
			  {"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"get_time","input":{}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"noon"}]}]}`,
			[]string{"messages[].reasoning", "thinking"}},
		{"a tool loop that starts with its thinking keeps thinking on",
			ir.Request{MaxTokens: 10, Thinking: ir.Thinking{Enabled: &on, BudgetTokens: 1024}, Messages: []ir.Message{
				user(text("hi")),
				assistant(reasoning(ir.Reasoning{Text: "t", Signature: "s", SignatureFormat: "messages"}), call("c1", "get_time", "{}")),
				tool(result("c1", text("noon"))),
			}},
			`{"model":"up","max_tokens":1034,"thinking":{"type":"enabled","budget_tokens":1024},"messages":[
			  {"role":"user","content":[{"type":"text","text":"hi"}]},
			  {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"c1","name":"get_time","input":{}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"noon"}]}]}`, nil},
		{"ids: gemini signatures stay behind, other characters become _; bad arguments become {}",
			ir.Request{MaxTokens: 10, Messages: []ir.Message{
				assistant(
					ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "call_a", Name: "f", Arguments: "{}", Signature: "AAEC", SignatureFormat: "gemini"}},
					call("functions.f:1", "f", `{"a":`),
					call("c3", "f", `[1]`)),
				tool(result("call_a", text("x")), result("functions.f:1", text("y")), result("c3", text("z"))),
			}},
			`{"model":"up","max_tokens":10,"messages":[
			  {"role":"assistant","content":[
			    {"type":"tool_use","id":"call_a","name":"f","input":{}},
			    {"type":"tool_use","id":"functions_f_1","name":"f","input":{}},
			    {"type":"tool_use","id":"c3","name":"f","input":{}}]},
			  {"role":"user","content":[
			    {"type":"tool_result","tool_use_id":"call_a","content":"x"},
			    {"type":"tool_result","tool_use_id":"functions_f_1","content":"y"},
			    {"type":"tool_result","tool_use_id":"c3","content":"z"}]}]}`,
			[]string{"messages[].tool_calls[].arguments"}},
		{"images, documents and what cannot go",
			ir.Request{MaxTokens: 10, ResponseFormat: json.RawMessage(`{"type":"json_object"}`), PreviousResponseID: "resp_1",
				Messages: []ir.Message{{Role: ir.RoleUser, Name: "bob", Parts: []ir.Part{
					{Kind: ir.PartImage, Image: &ir.Image{URL: "https://x/cat.jpg", Detail: "high"}},
					{Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/jpeg", Data: "/9j/"}, CacheControl: cc},
					{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", Data: "JVBE", Name: "spec.pdf"}},
					{Kind: ir.PartFile, File: &ir.File{MediaType: "text/plain", Data: "aGVsbG8="}},
					{Kind: ir.PartFile, File: &ir.File{URL: "https://x/a.pdf"}},
					{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/wav", Data: "UklG"}},
				}}}},
			`{"model":"up","max_tokens":10,"messages":[{"role":"user","content":[
			  {"type":"image","source":{"type":"url","url":"https://x/cat.jpg"}},
			  {"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"},"cache_control":{"type":"ephemeral"}},
			  {"type":"document","title":"spec.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}},
			  {"type":"document","source":{"type":"text","media_type":"text/plain","data":"hello"}},
			  {"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}]}]}`,
			[]string{"messages[].file", "messages[].image.detail", "messages[].name", "previous_response_id", "response_format"}},
		{"a messages client's Extra comes back: fields, server tools, per-tool members, metadata; dropped blocks are reported",
			ir.Request{Messages: []ir.Message{user(text("hi"))}, Stream: true, Stop: []string{"END"}, User: "u1",
				Tools: []ir.Tool{weather},
				Extra: map[string]json.RawMessage{
					"service_tier":                         json.RawMessage(`"auto"`),
					"metadata":                             json.RawMessage(`{"tier":"x"}`),
					"tools[].cache_control":                json.RawMessage(`{"get_weather":{"type":"ephemeral"},"gone":{}}`),
					"tools[].web_search_20250305":          json.RawMessage(`[{"type":"web_search_20250305","name":"web_search"}]`),
					"messages[].content[].server_tool_use": json.RawMessage(`true`),
				}},
			`{"model":"up","max_tokens":4096,"messages":` + hi + `,"stream":true,"stop_sequences":["END"],
			  "service_tier":"auto","metadata":{"tier":"x","user_id":"u1"},
			  "tools":[{"name":"get_weather","description":"Weather.","cache_control":{"type":"ephemeral"},
			            "input_schema":{"type":"object","properties":{"city":{"type":"string"}}}},
			           {"type":"web_search_20250305","name":"web_search"}]}`,
			[]string{"messages[].content[].server_tool_use"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var loss ir.Loss
			got, err := Format.EncodeRequest(&c.req, "up", &loss)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, got, c.want)
			if f := loss.Fields(); !reflect.DeepEqual(f, c.loss) && !(len(f) == 0 && len(c.loss) == 0) {
				t.Errorf("loss %q, want %q", f, c.loss)
			}
		})
	}
}

func TestEncodeRequestNothingToSend(t *testing.T) {
	_, err := Format.EncodeRequest(&ir.Request{Messages: []ir.Message{system("s"), user(text(" "))}}, "up", nil)
	var e *ir.Error
	if !errors.As(err, &e) || e.Param != "messages" {
		t.Fatalf("err = %v", err)
	}
}

// A messages request decoded and encoded again is the same request (model aside).
func TestRequestRoundTrip(t *testing.T) {
	body := `{"model":"client","max_tokens":2000,"stream":true,"temperature":1,
	  "system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],
	  "messages":[
	    {"role":"user","content":[{"type":"text","text":"q"},{"type":"image","source":{"type":"url","url":"https://x/i.png"}}]},
	    {"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"toolu_1","name":"f","input":{"a":[1,{"b":null}]}}]},
	    {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"r"},{"type":"text","text":"go on"}]}],
	  "tools":[{"name":"f","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"}},{"type":"bash_20250124","name":"bash"}],
	  "tool_choice":{"type":"auto","disable_parallel_tool_use":true},
	  "thinking":{"type":"enabled","budget_tokens":1024},
	  "metadata":{"user_id":"u"},"container":"c1"}`
	r, err := Format.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var loss ir.Loss
	got, err := Format.EncodeRequest(r, "client", &loss)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, got, body)
	if f := loss.Fields(); len(f) != 0 {
		t.Errorf("loss %q", f)
	}
}
