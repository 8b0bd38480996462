package responses

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

const applyPatchSchema = `{"additionalProperties":false,"properties":{"input":{"description":"The input of the tool; it must follow this lark grammar:\nstart: patch","type":"string"}},"required":["input"],"type":"object"}`

func TestDecodeRequest(t *testing.T) {
	cases := []struct {
		name string
		body string
		want ir.Request
	}{{
		name: "string input is one user message",
		body: `{"model":"m","input":"hi"}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{textMsg(ir.RoleUser, "hi")}},
	}, {
		name: "instructions come first; items without type are messages",
		body: `{"model":"m","instructions":"Be kind.","input":[{"role":"user","content":"hi"}]}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{
			textMsg(ir.RoleSystem, "Be kind."), textMsg(ir.RoleUser, "hi")}},
	}, {
		name: "function calls merge with the assistant text before them",
		body: `{"model":"m","input":[
			{"role":"user","content":"weather?"},
			{"role":"assistant","content":"Checking."},
			{"type":"function_call","call_id":"c1","name":"w","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call","call_id":"c2","name":"w","arguments":{"city": "Rome"}},
			{"type":"function_call_output","call_id":"c1","output":"18C"},
			{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"21C"}]},
			{"type":"function_call","call_id":"c3","name":"w","arguments":"  "}]}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{
			textMsg(ir.RoleUser, "weather?"),
			{Role: ir.RoleAssistant, Parts: []ir.Part{text("Checking."),
				call("c1", "w", `{"city":"Paris"}`), call("c2", "w", `{"city":"Rome"}`)}},
			{Role: ir.RoleTool, Parts: []ir.Part{result("c1", "w", text("18C")), result("c2", "w", text("21C"))}},
			{Role: ir.RoleAssistant, Parts: []ir.Part{call("c3", "w", "{}")}},
		}},
	}, {
		name: "arguments that are not a JSON object are wrapped",
		body: `{"model":"m","input":[{"type":"function_call","call_id":"c1","name":"f","arguments":"[1,"}]}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{
			{Role: ir.RoleAssistant, Parts: []ir.Part{call("c1", "f", `{"_raw":"[1,"}`)}}}},
	}, {
		name: "a gemini signature in a call id is split off",
		body: `{"model":"m","input":[
			{"type":"function_call","call_id":"call_1__thought__AAEC","name":"f","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_1__thought__AAEC","output":"ok"}]}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{
			{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{
				ID: "call_1", Name: "f", Arguments: "{}", Signature: "AAEC", SignatureFormat: "gemini"}}}},
			{Role: ir.RoleTool, Parts: []ir.Part{result("call_1", "f", text("ok"))}},
		}},
	}, {
		name: "reasoning without summary keeps its reasoning text; audio becomes a file",
		body: `{"model":"m","input":[
			{"type":"reasoning","id":"rs_9","summary":[],"content":[{"type":"reasoning_text","text":"think"}]},
			{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklG","format":"wav"}},
				{"type":"input_file","file_url":"https://x.test/a.pdf","filename":"a.pdf"}]}]}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{
			{Role: ir.RoleAssistant, Parts: []ir.Part{reasoningPart(ir.Reasoning{Text: "think", ID: "rs_9",
				SignatureFormat: "responses"})}},
			{Role: ir.RoleUser, Parts: []ir.Part{
				{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/wav", Data: "UklG"}},
				{Kind: ir.PartFile, File: &ir.File{URL: "https://x.test/a.pdf", Name: "a.pdf"}}}},
		}},
	}, {
		name: "file_data without a data URL takes its type from the file name",
		body: `{"model":"m","input":[{"role":"user","content":[{"type":"input_file","filename":"r.PDF","file_data":"JVBE"}]}]}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
			{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", Data: "JVBE", Name: "r.PDF"}}}}}},
	}, {
		name: "previous_response_id without input",
		body: `{"model":"m","previous_response_id":"resp_1","store":true}`,
		want: ir.Request{Model: "m", PreviousResponseID: "resp_1",
			Extra: map[string]json.RawMessage{"store": json.RawMessage(`true`)}},
	}, {
		name: "parameters, reasoning, structured output, and the rest to Extra",
		body: `{"model":"m","input":"x","max_output_tokens":100,"temperature":0.2,"top_p":0.9,
			"parallel_tool_calls":false,"user":"u1","safety_identifier":"s1","metadata":{"k":"v"},
			"reasoning":{"effort":"low","summary":"detailed","context":"all_turns"},
			"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true},"verbosity":"high"},
			"top_logprobs":2,"temperature_unused":null}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{textMsg(ir.RoleUser, "x")},
			MaxTokens: 100, Temperature: ptr(0.2), TopP: ptr(0.9), Parallel: ptr(false), User: "u1",
			Thinking:       ir.Thinking{Effort: "low", Summary: "detailed", IncludeText: true},
			ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}}`),
			Extra: map[string]json.RawMessage{
				"safety_identifier": json.RawMessage(`"s1"`), "metadata": json.RawMessage(`{"k":"v"}`),
				"reasoning": json.RawMessage(`{"context":"all_turns"}`), "text": json.RawMessage(`{"verbosity":"high"}`),
				"top_logprobs": json.RawMessage(`2`), "temperature_unused": json.RawMessage(`null`)}},
	}, {
		name: "tools: functions, a custom tool, hosted tools kept raw; named custom tool_choice",
		body: `{"model":"m","input":"x","tools":[
			{"type":"function","name":"f","parameters":{"type":"object"},"strict":true},
			{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: patch"}},
			{"type":"mcp","server_label":"deepwiki","server_url":"https://mcp.deepwiki.com/mcp"}],
			"tool_choice":{"type":"custom","name":"apply_patch"}}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{textMsg(ir.RoleUser, "x")},
			Tools: []ir.Tool{
				{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`), Strict: ptr(true)},
				{Name: "apply_patch", Custom: true, Parameters: json.RawMessage(applyPatchSchema)}},
			ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "apply_patch"},
			Extra: map[string]json.RawMessage{"tools": json.RawMessage(`[` +
				`{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: patch"}},` +
				`{"type":"mcp","server_label":"deepwiki","server_url":"https://mcp.deepwiki.com/mcp"}]`)}},
	}, {
		name: "allowed_tools",
		body: `{"model":"m","input":"x","tools":[{"type":"function","name":"a"},{"type":"function","name":"b"}],"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"a"},{"type":"function","name":"b"}]}}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{textMsg(ir.RoleUser, "x")},
			Tools: []ir.Tool{{Name: "a"}, {Name: "b"}}, ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired, Allowed: []string{"a", "b"}}},
	}, {
		name: "a hosted tool_choice stays raw",
		body: `{"model":"m","input":"x","tool_choice":{"type":"web_search_preview"}}`,
		want: ir.Request{Model: "m", Messages: []ir.Message{textMsg(ir.RoleUser, "x")},
			Extra: map[string]json.RawMessage{"tool_choice": json.RawMessage(`{"type":"web_search_preview"}`)}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format.DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "request", got, c.want)
		})
	}
}

func TestDecodeRequestItemsFixture(t *testing.T) {
	got, err := Format.DecodeRequest(fixture(t, "request_items.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := ir.Request{
		Model: "gpt-5.4-codex",
		Messages: []ir.Message{
			textMsg(ir.RoleSystem, "You are a coding agent."),
			textMsg(ir.RoleSystem, "Sandbox: workspace-write."),
			textMsg(ir.RoleUser, "Fix the failing test."),
			{Role: ir.RoleUser, Parts: []ir.Part{
				text("Here is a screenshot and the log."),
				image(ir.Image{MediaType: "image/png", Data: "iVBORw0KGgo=", Detail: "high"}),
				image(ir.Image{URL: "https://example.com/diagram.png"}),
				{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", Data: "JVBERi0x", Name: "log.pdf"}},
			}},
			{Role: ir.RoleAssistant, Parts: []ir.Part{
				reasoningPart(ir.Reasoning{Text: "**Reading the test**\n\nIt expects 3.", Encrypted: "gAAAAenc1",
					ID: "rs_01", SignatureFormat: "responses"}),
				text("Let me look."),
				call("call_A", "shell", `{"cmd":["go","test"]}`),
				call("call_B", "read_file", "{}"),
			}},
			{Role: ir.RoleTool, Parts: []ir.Part{
				result("call_A", "shell", text("FAIL: want 3, got 2")),
				result("call_B", "read_file", text("chart:"),
					image(ir.Image{MediaType: "image/jpeg", Data: "/9j/4AAQ", Detail: "low"})),
			}},
			{Role: ir.RoleAssistant, Parts: []ir.Part{
				call("call_P", "apply_patch", `{"input":"*** Begin Patch\n*** End Patch"}`)}},
			{Role: ir.RoleTool, Parts: []ir.Part{result("call_P", "apply_patch", text("Done!"))}},
			textMsg(ir.RoleAssistant, "I can't run that."),
			textMsg(ir.RoleSystem, "Be brief."),
			textMsg(ir.RoleUser, "Thanks"),
		},
		Tools: []ir.Tool{
			{Name: "shell", Description: "Runs a command.", Strict: ptr(false), Parameters: json.RawMessage(
				`{"type":"object","properties":{"cmd":{"type":"array","items":{"type":"string"}}},"required":["cmd"],"additionalProperties":false}`)},
			{Name: "read_file"},
			{Name: "apply_patch", Description: "Applies a patch.", Custom: true, Parameters: json.RawMessage(applyPatchSchema)},
		},
		ToolChoice: ir.ToolChoice{Mode: ir.ToolAuto},
		Parallel:   ptr(true),
		Stream:     true,
		Thinking:   ir.Thinking{Effort: "high", Summary: "auto", IncludeText: true},
		Extra: map[string]json.RawMessage{
			"store":            json.RawMessage(`false`),
			"include":          json.RawMessage(`["reasoning.encrypted_content"]`),
			"prompt_cache_key": json.RawMessage(`"session-42"`),
			"text":             json.RawMessage(`{"verbosity":"low"}`),
			"tools": json.RawMessage(`[{"type":"custom","name":"apply_patch","description":"Applies a patch.",` +
				`"format":{"type":"grammar","syntax":"lark","definition":"start: patch"}},` +
				`{"type":"web_search","search_context_size":"low"}]`),
		},
	}
	sameJSON(t, "request", got, want)
	if got.Tools[1].Parameters != nil || got.Tools[1].Strict != nil {
		t.Errorf("null parameters/strict = %s/%v, want nil/nil", got.Tools[1].Parameters, got.Tools[1].Strict)
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	cases := []struct{ body, param, message string }{
		{`[]`, "", "the request body must be a JSON object"},
		{`{"input":"x"}`, "model", "model is required and must be a string"},
		{`{"model":"m"}`, "input", "input is required"},
		{`{"model":"m","input":5}`, "input", "input must be a string or an array of input items"},
		{`{"model":"m","input":[{"content":"x"}]}`, "input[0].type", "input[0].type is required"},
		{`{"model":"m","input":["x"]}`, "input[0]", "input[0] must be an input item object"},
		{`{"model":"m","input":[{"type":"message","role":"robot","content":"x"}]}`, "input[0].role",
			`input[0].role must be one of user, assistant, system, developer; got "robot"`},
		{`{"model":"m","input":[{"role":"user"}]}`, "input[0].content", "input[0].content is required"},
		{`{"model":"m","input":["x"]}`, "input[0]", "input[0] must be an input item object"},
		{`{"model":"m","input":[{"role":"user","content":"a"},{"type":"function_call","name":"f","arguments":"{}"}]}`,
			"input[1].call_id", "input[1].call_id is required"},
		{`{"model":"m","input":[{"type":"function_call","call_id":5,"name":"f"}]}`, "input[0].call_id",
			"input[0].call_id must be a string"},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c"}]}`, "input[0].name", "input[0].name is required"},
		{`{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":5}]}`,
			"input[0].arguments", "input[0].arguments must be a string of JSON"},
		{`{"model":"m","input":[{"type":"custom_tool_call","call_id":"c","name":"f"}]}`, "input[0].input",
			"input[0].input is required"},
		{`{"model":"m","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id",
			"input[0].call_id is required"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output",
			"input[0].output is required"},
		{`{"model":"m","input":[{"type":"web_search_call","id":"ws_1"}]}`, "input[0].type",
			`input[0].type "web_search_call" is not supported by this gateway`},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"video"}]}]}`,
			"input[0].content[1].type", `input[0].content[1].type "video" is not supported`},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]}`,
			"input[0].content[0].text", "input[0].content[0].text is required"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","file_id":"file_1"}]}]}`,
			"input[0].content[0].file_id",
			"input[0].content[0].file_id: uploaded files are not supported by this gateway; send image_url"},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_image","image_url":"ftp://x/y.png"}]}]}`,
			"input[0].content[0].image_url",
			"input[0].content[0].image_url must be an https:, http: or data: URL of an image; got \"ftp://x/y.png\""},
		{`{"model":"m","input":[{"role":"user","content":[{"type":"input_file","filename":"a.pdf"}]}]}`,
			"input[0].content[0].file_data", "input[0].content[0] needs file_data or file_url"},
		{`{"model":"m","input":[{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":7}]}]}`,
			"input[0].output[0].text", "input[0].output[0].text must be a string"},
		{`{"model":"m","input":"x","tools":{}}`, "tools", "tools must be an array of tool objects"},
		{`{"model":"m","input":"x","tools":[{"name":"f"}]}`, "tools[0].type", "tools[0].type is required"},
		{`{"model":"m","input":"x","tools":[{"type":"function","name":"f"},{"type":"function"}]}`,
			"tools[1].name", "tools[1].name is required"},
		{`{"model":"m","input":"x","tools":[{"type":"function","name":"f","parameters":[]}]}`,
			"tools[0].parameters", "tools[0].parameters must be a JSON schema object"},
		{`{"model":"m","input":"x","tool_choice":"sometimes"}`, "tool_choice",
			`tool_choice must be "auto", "none", "required" or an object; got "sometimes"`},
		{`{"model":"m","input":"x","tool_choice":{"type":"function"}}`, "tool_choice.name", "tool_choice.name is required"},
		{`{"model":"m","input":"x","tool_choice":{"type":"allowed_tools","mode":"any","tools":[]}}`,
			"tool_choice.mode", `tool_choice.mode must be "auto" or "required"`},
		{`{"model":"m","input":"x","reasoning":{"effort":5}}`, "reasoning.effort", "reasoning.effort must be a string"},
		{`{"model":"m","input":"x","reasoning":{"effort":"extreme"}}`, "reasoning.effort",
			`reasoning.effort "extreme" is not one of none, minimal, low, medium, high, xhigh, max`},
		{`{"model":"m","input":"x","reasoning":"high"}`, "reasoning", "reasoning must be an object"},
		{`{"model":"m","input":"x","text":{"format":{"type":"json_schema","schema":{}}}}`, "text.format.name",
			"text.format.name is required"},
		{`{"model":"m","input":"x","text":{"format":{"type":"xml"}}}`, "text.format.type",
			`text.format.type must be "text", "json_object" or "json_schema"`},
		{`{"model":"m","input":"x","temperature":"hot"}`, "temperature", `temperature must be a number from 0 to 2; got "hot"`},
		{`{"model":"m","input":"x","max_output_tokens":-1}`, "max_output_tokens", "max_output_tokens must be an integer of at least 16; got -1"},
		{`{"model":"m","input":"x","max_output_tokens":1.5}`, "max_output_tokens", "max_output_tokens must be an integer of at least 16; got 1.5"},
		{`{"model":"m","input":"x","stream":"yes"}`, "stream", "stream must be a boolean"},
		{`{"model":"m","input":"x","parallel_tool_calls":1}`, "parallel_tool_calls", "parallel_tool_calls must be a boolean"},
	}
	for _, c := range cases {
		_, err := Format.DecodeRequest([]byte(c.body))
		var e *ir.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: error %v, want *ir.Error", c.body, err)
			continue
		}
		if e.Kind != ir.ErrInvalidRequest || e.Status != 400 || e.Param != c.param || e.Message != c.message {
			t.Errorf("%s:\n got %s %d param %q: %q\nwant invalid_request 400 param %q: %q",
				c.body, e.Kind, e.Status, e.Param, e.Message, c.param, c.message)
		}
	}
}

func TestEncodeRequest(t *testing.T) {
	cases := []struct {
		name string
		req  ir.Request
		want string
		loss []string
	}{{
		name: "leading system messages become instructions",
		req: ir.Request{Messages: []ir.Message{textMsg(ir.RoleSystem, "a"), textMsg(ir.RoleSystem, "b"),
			textMsg(ir.RoleUser, "hi")}},
		want: `{"model":"up","store":false,"instructions":"a\n\nb",
			"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`,
	}, {
		name: "a later system message keeps every system message in place",
		req: ir.Request{Messages: []ir.Message{textMsg(ir.RoleSystem, "a"), textMsg(ir.RoleUser, "x"),
			textMsg(ir.RoleSystem, "b"), textMsg(ir.RoleUser, "y")}},
		want: `{"model":"up","store":false,"input":[
			{"type":"message","role":"system","content":[{"type":"input_text","text":"a"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]},
			{"type":"message","role":"system","content":[{"type":"input_text","text":"b"}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"y"}]}]}`,
	}, {
		name: "tool calls and results, a foreign signature dropped",
		req: ir.Request{
			Tools: []ir.Tool{{Name: "w", Parameters: json.RawMessage(`{"type":"object"}`)}, {Name: "shot"}},
			Messages: []ir.Message{
				textMsg(ir.RoleUser, "weather?"),
				{Role: ir.RoleAssistant, Parts: []ir.Part{text("Checking "), text("both."),
					{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "c1", Name: "w", Arguments: `{"city":"Paris"}`,
						Signature: "AAEC", SignatureFormat: "gemini"}},
					call("c2", "shot", "")}},
				{Role: ir.RoleTool, Parts: []ir.Part{result("c1", "w", text("18"), text("C")),
					result("c2", "shot", text("here:"), image(ir.Image{MediaType: "image/png", Data: "iVBO"}))}},
			}},
		want: `{"model":"up","store":false,
			"tools":[{"type":"function","name":"w","parameters":{"type":"object"},"strict":false},
				{"type":"function","name":"shot","parameters":{"type":"object","properties":{}},"strict":false}],
			"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"weather?"}]},
			{"type":"message","role":"assistant","content":"Checking both."},
			{"type":"function_call","call_id":"c1","name":"w","arguments":"{\"city\":\"Paris\"}"},
			{"type":"function_call","call_id":"c2","name":"shot","arguments":"{}"},
			{"type":"function_call_output","call_id":"c1","output":"18C"},
			{"type":"function_call_output","call_id":"c2","output":[{"type":"input_text","text":"here:"},
				{"type":"input_image","image_url":"data:image/png;base64,iVBO","detail":"auto"}]}]}`,
	}, {
		name: "images, files; audio and assistant images are lost",
		req: ir.Request{Messages: []ir.Message{
			{Role: ir.RoleUser, Parts: []ir.Part{
				image(ir.Image{URL: "https://x.test/a.png", Detail: "high"}),
				{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", Data: "JVBE"}},
				{Kind: ir.PartFile, File: &ir.File{URL: "https://x.test/b.pdf", Name: "b.pdf"}},
				{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/wav", Data: "UklG"}},
			}},
			{Role: ir.RoleAssistant, Parts: []ir.Part{image(ir.Image{URL: "https://x.test/c.png"}), text("ok")}},
		}},
		want: `{"model":"up","store":false,"input":[
			{"type":"message","role":"user","content":[
				{"type":"input_image","image_url":"https://x.test/a.png","detail":"high"},
				{"type":"input_file","file_data":"data:application/pdf;base64,JVBE","filename":"file.pdf"},
				{"type":"input_file","file_url":"https://x.test/b.pdf","filename":"b.pdf"}]},
			{"type":"message","role":"assistant","content":"ok"}]}`,
		loss: []string{"messages[].content", "messages[].content.audio"},
	}, {
		name: "reasoning: own items replayed with include, foreign and unresolvable ones dropped",
		req: ir.Request{Thinking: ir.Thinking{Effort: "medium"}, Messages: []ir.Message{
			textMsg(ir.RoleUser, "q"),
			{Role: ir.RoleAssistant, Parts: []ir.Part{
				reasoningPart(ir.Reasoning{Text: "sum", Encrypted: "gAAA", ID: "rs_1", SignatureFormat: "responses"}),
				reasoningPart(ir.Reasoning{Encrypted: "gBBB", ID: "rs_2", SignatureFormat: "responses"}),
				reasoningPart(ir.Reasoning{Text: "stored only", ID: "rs_3", SignatureFormat: "responses"}),
				reasoningPart(ir.Reasoning{Text: "claude thought", Signature: "sig", SignatureFormat: "messages"}),
				text("answer")}},
		}},
		want: `{"model":"up","store":false,"reasoning":{"effort":"medium"},"include":["reasoning.encrypted_content"],
			"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"q"}]},
			{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"sum"}],"encrypted_content":"gAAA"},
			{"type":"reasoning","id":"rs_2","summary":[],"encrypted_content":"gBBB"},
			{"type":"message","role":"assistant","content":"answer"}]}`,
		loss: []string{"messages[].reasoning"},
	}, {
		name: "max_output_tokens is raised to 16; stop, top_k, names, cache_control and is_error are lost",
		req: ir.Request{MaxTokens: 5, Stop: []string{"END"}, TopK: ptr(40), Temperature: ptr(0.5), TopP: ptr(1.0),
			Messages: []ir.Message{
				{Role: ir.RoleUser, Name: "bob", Parts: []ir.Part{{Kind: ir.PartText, Text: "x",
					CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}},
				{Role: ir.RoleAssistant, Parts: []ir.Part{call("c", "f", "{}")}},
				{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{
					CallID: "c", Content: []ir.Part{text("boom")}, IsError: true}}}},
			}},
		want: `{"model":"up","store":false,"max_output_tokens":16,"temperature":0.5,"top_p":1,"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]},
			{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},
			{"type":"function_call_output","call_id":"c","output":"boom"}]}`,
		loss: []string{"max_tokens", "messages[].cache_control", "messages[].name",
			"messages[].tool_result.is_error", "stop", "top_k"},
	}, {
		name: "custom tools: raw definition when the client sent one, calls and outputs as custom items",
		req: ir.Request{
			Tools: []ir.Tool{
				{Name: "apply_patch", Custom: true, Parameters: json.RawMessage(applyPatchSchema)},
				{Name: "notes", Description: "Free text.", Custom: true},
			},
			ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "apply_patch"},
			Extra: map[string]json.RawMessage{"tools": json.RawMessage(
				`[{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: patch"}},{"type":"web_search"}]`)},
			Messages: []ir.Message{
				textMsg(ir.RoleUser, "patch it"),
				{Role: ir.RoleAssistant, Parts: []ir.Part{call("p1", "apply_patch", `{"input":"*** Begin Patch"}`)}},
				{Role: ir.RoleTool, Parts: []ir.Part{result("p1", "", text("Done"))}},
			}},
		want: `{"model":"up","store":false,
			"tools":[{"type":"custom","name":"apply_patch","format":{"type":"grammar","syntax":"lark","definition":"start: patch"}},
				{"type":"custom","name":"notes","description":"Free text."},{"type":"web_search"}],
			"tool_choice":{"type":"custom","name":"apply_patch"},
			"input":[
			{"type":"message","role":"user","content":[{"type":"input_text","text":"patch it"}]},
			{"type":"custom_tool_call","call_id":"p1","name":"apply_patch","input":"*** Begin Patch"},
			{"type":"custom_tool_call_output","call_id":"p1","output":"Done"}]}`,
	}, {
		name: "tool_choice naming a missing tool is dropped; allowed tools keep known names",
		req: ir.Request{Tools: []ir.Tool{{Name: "a", Strict: ptr(true)}},
			ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "gone"},
			Messages:   []ir.Message{textMsg(ir.RoleUser, "x")}},
		want: `{"model":"up","store":false,
			"tools":[{"type":"function","name":"a","parameters":{"type":"object","properties":{}},"strict":true}],
			"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}`,
		loss: []string{"tool_choice"},
	}, {
		name: "allowed tools",
		req: ir.Request{Tools: []ir.Tool{{Name: "a"}, {Name: "b"}},
			ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired, Allowed: []string{"b", "zz"}},
			Messages:   []ir.Message{textMsg(ir.RoleUser, "x")}},
		want: `{"model":"up","store":false,
			"tools":[{"type":"function","name":"a","parameters":{"type":"object","properties":{}},"strict":false},
				{"type":"function","name":"b","parameters":{"type":"object","properties":{}},"strict":false}],
			"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"b"}]},
			"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}`,
		loss: []string{"tool_choice.allowed_tools"},
	}, {
		name: "thinking: budget to effort, summary when reasoning text is wanted; response format; Extra",
		req: ir.Request{Thinking: ir.Thinking{BudgetTokens: 3000, Enabled: ptr(true), IncludeText: true},
			ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"o","schema":{"type":"object"},"strict":true}}`),
			Parallel:       ptr(false), User: "u", PreviousResponseID: "resp_0", Stream: true,
			Extra: map[string]json.RawMessage{"text": json.RawMessage(`{"verbosity":"low"}`),
				"include": json.RawMessage(`["message.output_text.logprobs"]`), "store": json.RawMessage(`true`),
				"reasoning": json.RawMessage(`{"context":"all_turns"}`), "metadata": json.RawMessage(`{"k":"v"}`)},
			Messages: []ir.Message{textMsg(ir.RoleUser, "x")}},
		want: `{"model":"up","store":false,"stream":true,"parallel_tool_calls":false,"user":"u",
			"previous_response_id":"resp_0","metadata":{"k":"v"},
			"reasoning":{"effort":"medium","summary":"auto","context":"all_turns"},
			"include":["message.output_text.logprobs","reasoning.encrypted_content"],
			"text":{"verbosity":"low","format":{"type":"json_schema","name":"o","schema":{"type":"object"},"strict":true}},
			"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}`,
	}, {
		name: "thinking off is effort none, without encrypted content",
		req: ir.Request{Thinking: ir.Thinking{Enabled: ptr(false)},
			ResponseFormat: json.RawMessage(`{"type":"json_object"}`),
			Messages:       []ir.Message{textMsg(ir.RoleUser, "x")}},
		want: `{"model":"up","store":false,"reasoning":{"effort":"none"},"text":{"format":{"type":"json_object"}},
			"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"x"}]}]}`,
	}, {
		name: "a continuation without new input",
		req:  ir.Request{PreviousResponseID: "resp_9", Messages: []ir.Message{textMsg(ir.RoleSystem, "sys")}},
		want: `{"model":"up","store":false,"previous_response_id":"resp_9","instructions":"sys"}`,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var loss ir.Loss
			got, err := Format.EncodeRequest(&c.req, "up", &loss)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, "body", got, c.want)
			if f := loss.Fields(); !reflect.DeepEqual(f, c.loss) && len(f)+len(c.loss) > 0 {
				t.Errorf("loss = %q, want %q", f, c.loss)
			}
			assertSchema(t, "CreateResponse", got)
		})
	}
}

// A responses client's request reaches a responses route with everything it said.
func TestRequestRoundTrip(t *testing.T) {
	r, err := Format.DecodeRequest(fixture(t, "request_items.json"))
	if err != nil {
		t.Fatal(err)
	}
	var loss ir.Loss
	got, err := Format.EncodeRequest(r, "gpt-5.4-codex-2026", &loss)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "request_items.upstream.json", append([]byte(canonical(t, got)), '\n'))
	if f := loss.Fields(); len(f) > 0 {
		t.Errorf("loss = %q, want none", f)
	}
	assertSchema(t, "CreateResponse", got)
	again, err := Format.DecodeRequest(got)
	if err != nil {
		t.Fatal(err)
	}
	r.Model = again.Model
	// What the route was told for a function without parameters or strictness.
	r.Tools[1].Parameters, r.Tools[1].Strict = json.RawMessage(`{"type":"object","properties":{}}`), ptr(false)
	r.Messages[3].Parts[2].Image.Detail = "auto" // input_image needs a detail
	sameJSON(t, "decoded again", again, r)
}
