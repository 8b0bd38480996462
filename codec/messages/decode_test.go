package messages

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

func text(s string) ir.Part { return ir.Part{Kind: ir.PartText, Text: s} }

func TestDecodeRequest(t *testing.T) {
	on, off := true, false
	cc := json.RawMessage(`{"type":"ephemeral"}`)
	cases := []struct {
		name string
		body string
		want ir.Request
	}{
		{"minimal", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`,
			ir.Request{Model: "m", MaxTokens: 10, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}}}}},
		{"system string, sampling, metadata, unknown fields to Extra",
			`{"model":"m","max_tokens":5,"system":"Be brief.","messages":[{"role":"user","content":"hi"}],
			  "temperature":0.5,"top_p":0.9,"top_k":40,"stop_sequences":["END"],"stream":true,
			  "metadata":{"user_id":"u1"},"service_tier":"auto","context_management":{"edits":[]}}`,
			ir.Request{Model: "m", MaxTokens: 5, Temperature: ptr(0.5), TopP: ptr(0.9), TopK: ptr(40),
				Stop: []string{"END"}, Stream: true,
				Messages: []ir.Message{
					{Role: ir.RoleSystem, Parts: []ir.Part{text("Be brief.")}},
					{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}},
				},
				Extra: map[string]json.RawMessage{"service_tier": json.RawMessage(`"auto"`), "context_management": json.RawMessage(`{"edits":[]}`),
					"metadata": json.RawMessage(`{"user_id":"u1"}`)}}},
		{"system turns in messages stay in place, string or text blocks with cache_control; empty ones vanish",
			`{"model":"m","max_tokens":5,"system":"S","messages":[
			  {"role":"user","content":"hi"},
			  {"role":"system","content":[{"type":"text","text":"env","cache_control":{"type":"ephemeral","ttl":"1h"}},{"type":"text","text":"more"}]},
			  {"role":"assistant","content":"hello"},
			  {"role":"system","content":"late"},
			  {"role":"system","content":""},
			  {"role":"user","content":"go"}]}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{
				{Role: ir.RoleSystem, Parts: []ir.Part{text("S")}},
				{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}},
				{Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "env", CacheControl: json.RawMessage(`{"type":"ephemeral","ttl":"1h"}`)}, text("more")}},
				{Role: ir.RoleAssistant, Parts: []ir.Part{text("hello")}},
				{Role: ir.RoleSystem, Parts: []ir.Part{text("late")}},
				{Role: ir.RoleUser, Parts: []ir.Part{text("go")}},
			}}},
		{"output_config: effort and json_schema format into IR, other members to Extra",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"thinking":{"type":"adaptive","display":"omitted"},
			  "output_config":{"effort":"xhigh","format":{"type":"json_schema","schema":{ "type" : "object" }},"task_budget":{"total":5}}}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}}},
				Thinking:       ir.Thinking{Enabled: &on, Effort: "xhigh"},
				ResponseFormat: json.RawMessage(`{"json_schema":{"name":"output","schema":{"type":"object"}},"type":"json_schema"}`),
				Extra:          map[string]json.RawMessage{"output_config": json.RawMessage(`{"task_budget":{"total":5}}`)}}},
		{"system blocks keep cache_control, one message each; metadata kept whole",
			`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"A"},{"type":"text","text":"B","cache_control":{"type":"ephemeral"}}],
			  "metadata":{"user_id":"u","tier":"x"},"messages":[{"role":"user","content":[{"type":"text","text":"hi","cache_control":{"type":"ephemeral"}}]}]}`,
			ir.Request{Model: "m", MaxTokens: 5,
				Messages: []ir.Message{
					{Role: ir.RoleSystem, Parts: []ir.Part{text("A")}},
					{Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "B", CacheControl: cc}}},
					{Role: ir.RoleUser, Parts: []ir.Part{{Kind: ir.PartText, Text: "hi", CacheControl: cc}}},
				},
				Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{"tier":"x","user_id":"u"}`)}}},
		{"tool_result blocks split off into a tool message, before the rest of the user turn",
			`{"model":"m","max_tokens":5,"messages":[
			  {"role":"user","content":"weather and time?"},
			  {"role":"assistant","content":[
			    {"type":"thinking","thinking":"Two tools.","signature":"sig1"},
			    {"type":"redacted_thinking","data":"opaque"},
			    {"type":"text","text":"Checking."},
			    {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{ "city" : "Paris" }},
			    {"type":"tool_use","id":"toolu_2","name":"get_time","input":{}}]},
			  {"role":"user","content":[
			    {"type":"tool_result","tool_use_id":"toolu_1","content":"18C"},
			    {"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[
			      {"type":"text","text":"timeout"},
			      {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},
			    {"type":"text","text":"Thanks."}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3"}]}]}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{
				{Role: ir.RoleUser, Parts: []ir.Part{text("weather and time?")}},
				{Role: ir.RoleAssistant, Parts: []ir.Part{
					{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "Two tools.", Signature: "sig1", SignatureFormat: "messages"}},
					{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Redacted: "opaque", SignatureFormat: "messages"}},
					text("Checking."),
					{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}},
					{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: "toolu_2", Name: "get_time", Arguments: `{}`}},
				}},
				{Role: ir.RoleTool, Parts: []ir.Part{
					{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "toolu_1", Name: "get_weather", Content: []ir.Part{text("18C")}}},
					{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "toolu_2", Name: "get_time", IsError: true, Content: []ir.Part{
						text("timeout"), {Kind: ir.PartImage, Image: &ir.Image{MediaType: "image/png", Data: "iVBO"}}}}},
				}},
				{Role: ir.RoleUser, Parts: []ir.Part{text("Thanks.")}},
				{Role: ir.RoleTool, Parts: []ir.Part{
					{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: "toolu_3"}}}},
			}}},
		{"gemini signatures in tool ids are split off",
			`{"model":"m","max_tokens":5,"messages":[
			  {"role":"assistant","content":[{"type":"tool_use","id":"call_a__thought__AAECAw","name":"f","input":{}}]},
			  {"role":"user","content":[{"type":"tool_result","tool_use_id":"call_a__thought__AAECAw","content":"ok"}]}]}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{
				{Role: ir.RoleAssistant, Parts: []ir.Part{{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{
					ID: "call_a", Name: "f", Arguments: "{}", Signature: "AAECAw==", SignatureFormat: "gemini"}}}},
				{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{
					CallID: "call_a", Name: "f", Content: []ir.Part{text("ok")}}}}},
			}}},
		{"thinking without a signature (display-only, from another format) belongs to no format",
			`{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":""},{"type":"text","text":"a"}]}]}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleAssistant, Parts: []ir.Part{
				{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "t"}}, text("a")}}}}},
		{"images and documents",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[
			  {"type":"image","source":{"type":"url","url":"https://x/cat.jpg"}},
			  {"type":"document","title":"spec","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}},
			  {"type":"document","source":{"type":"text","media_type":"text/plain","data":"hello"}},
			  {"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}]}]}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{
				{Kind: ir.PartImage, Image: &ir.Image{URL: "https://x/cat.jpg"}},
				{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", Data: "JVBE", Name: "spec"}},
				{Kind: ir.PartFile, File: &ir.File{MediaType: "text/plain", Data: "aGVsbG8="}},
				{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", URL: "https://x/a.pdf"}},
			}}}}},
		{"tools: function tools in IR, server tools and per-tool members in Extra; tool_choice any without parallel",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],
			  "tools":[{"name":"get_weather","description":"Weather.","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral"},"strict":true},
			           {"type":"custom","name":"noargs"},
			           {"type":"web_search_20250305","name":"web_search","max_uses":5}],
			  "tool_choice":{"type":"any","disable_parallel_tool_use":true}}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}}},
				Tools: []ir.Tool{
					{Name: "get_weather", Description: "Weather.", Parameters: json.RawMessage(`{"type":"object"}`), Strict: &on},
					{Name: "noargs"},
				},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired}, Parallel: &off,
				Extra: map[string]json.RawMessage{
					"tools[].cache_control":       json.RawMessage(`{"get_weather":{"type":"ephemeral"}}`),
					"tools[].web_search_20250305": json.RawMessage(`[{"max_uses":5,"name":"web_search","type":"web_search_20250305"}]`),
				}}},
		{"tool_choice tool, parallel allowed explicitly",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f"}],"tool_choice":{"type":"tool","name":"f","disable_parallel_tool_use":false}}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}}},
				Tools: []ir.Tool{{Name: "f"}}, ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "f"}, Parallel: &on}},
		{"tool_choice none",
			`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"tool_choice":{"type":"none"}}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleUser, Parts: []ir.Part{text("hi")}}},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolNone}}},
		{"server-tool blocks in history are dropped and marked",
			`{"model":"m","max_tokens":5,"messages":[{"role":"assistant","content":[
			  {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}},
			  {"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},
			  {"type":"text","text":"Found it."}]}]}`,
			ir.Request{Model: "m", MaxTokens: 5, Messages: []ir.Message{{Role: ir.RoleAssistant, Parts: []ir.Part{text("Found it.")}}},
				Extra: map[string]json.RawMessage{
					"messages[].content[].server_tool_use":        json.RawMessage(`true`),
					"messages[].content[].web_search_tool_result": json.RawMessage(`true`),
				}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format.DecodeRequest([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, c.want) {
				t.Errorf("got  %s\nwant %s", dump(got), dump(c.want))
			}
		})
	}
}

func TestDecodeThinking(t *testing.T) {
	on, off := true, false
	cases := []struct {
		thinking string
		want     ir.Thinking
	}{
		{`{"type":"enabled","budget_tokens":2048}`, ir.Thinking{Enabled: &on, BudgetTokens: 2048, IncludeText: true}},
		{`{"type":"enabled","budget_tokens":2048,"display":"omitted"}`, ir.Thinking{Enabled: &on, BudgetTokens: 2048}},
		{`{"type":"disabled"}`, ir.Thinking{Enabled: &off}},
		{`{"type":"adaptive"}`, ir.Thinking{Enabled: &on, IncludeText: true}},
		{`{"type":"adaptive","display":"omitted"}`, ir.Thinking{Enabled: &on}},
		{`{"type":"adaptive","display":"summarized"}`, ir.Thinking{Enabled: &on, IncludeText: true}},
		{`null`, ir.Thinking{}},
	}
	for _, c := range cases {
		t.Run(c.thinking, func(t *testing.T) {
			body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"thinking":` + c.thinking + `}`
			got, err := Format.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Thinking, c.want) {
				t.Errorf("got %s, want %s", dump(got.Thinking), dump(c.want))
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	const user = `{"role":"user","content":"hi"}`
	msgs := func(m string) string { return `{"model":"m","max_tokens":5,"messages":[` + m + `]}` }
	with := func(field string) string {
		return `{"model":"m","max_tokens":5,"messages":[` + user + `],` + field + `}`
	}
	block := func(role, b string) string { return msgs(`{"role":"` + role + `","content":[` + b + `]}`) }
	cases := []struct{ name, body, param string }{
		{"not an object", `[1]`, ""},
		{"not JSON", `{`, ""},
		{"model missing", `{"max_tokens":5,"messages":[` + user + `]}`, "model"},
		{"model not a string", `{"model":5,"max_tokens":5,"messages":[` + user + `]}`, "model"},
		{"max_tokens missing", `{"model":"m","messages":[` + user + `]}`, "max_tokens"},
		{"max_tokens zero", `{"model":"m","max_tokens":0,"messages":[` + user + `]}`, "max_tokens"},
		{"max_tokens fractional", `{"model":"m","max_tokens":1.5,"messages":[` + user + `]}`, "max_tokens"},
		{"max_tokens a string", `{"model":"m","max_tokens":"9","messages":[` + user + `]}`, "max_tokens"},
		{"messages missing", `{"model":"m","max_tokens":5}`, "messages"},
		{"messages empty", msgs(``), "messages"},
		{"messages an object", `{"model":"m","max_tokens":5,"messages":{}}`, "messages"},
		{"message not an object", msgs(`5`), "messages[0]"},
		{"role developer", msgs(`{"role":"developer","content":"x"}`), "messages[0].role"},
		{"system turn with an image", msgs(user + `,{"role":"system","content":[{"type":"image"}]}`), "messages[1].content[0].type"},
		{"system turn block without text", msgs(user + `,{"role":"system","content":[{"type":"text"}]}`), "messages[1].content[0].text"},
		{"system turn content a number", msgs(user + `,{"role":"system","content":5}`), "messages[1].content"},
		{"system turn without content", msgs(user + `,{"role":"system"}`), "messages[1].content"},
		{"content missing", msgs(user + `,{"role":"assistant"}`), "messages[1].content"},
		{"content a number", msgs(`{"role":"user","content":5}`), "messages[0].content"},
		{"block type missing", block("user", `{"text":"x"}`), "messages[0].content[0].type"},
		{"block type unknown", msgs(user + `,{"role":"assistant","content":"a"},{"role":"user","content":[{"type":"txet","text":"x"}]}`), "messages[2].content[0].type"},
		{"text missing", block("user", `{"type":"text"}`), "messages[0].content[0].text"},
		{"text a number", block("user", `{"type":"text","text":5}`), "messages[0].content[0].text"},
		{"image without source", block("user", `{"type":"image"}`), "messages[0].content[0].source"},
		{"image file source", block("user", `{"type":"image","source":{"type":"file","file_id":"f"}}`), "messages[0].content[0].source.type"},
		{"image without data", block("user", `{"type":"image","source":{"type":"base64","media_type":"image/png"}}`), "messages[0].content[0].source.data"},
		{"image without media_type", block("user", `{"type":"image","source":{"type":"base64","data":"x"}}`), "messages[0].content[0].source.media_type"},
		{"image without url", block("user", `{"type":"image","source":{"type":"url"}}`), "messages[0].content[0].source.url"},
		{"document content source", block("user", `{"type":"document","source":{"type":"content","content":[]}}`), "messages[0].content[0].source.type"},
		{"tool_use in a user turn", block("user", `{"type":"tool_use","id":"t","name":"f","input":{}}`), "messages[0].content[0].type"},
		{"tool_use without id", block("assistant", `{"type":"tool_use","name":"f","input":{}}`), "messages[0].content[0].id"},
		{"tool_use without name", block("assistant", `{"type":"tool_use","id":"t","input":{}}`), "messages[0].content[0].name"},
		{"tool_use input a string", block("assistant", `{"type":"tool_use","id":"t","name":"f","input":"{}"}`), "messages[0].content[0].input"},
		{"tool_result in an assistant turn", block("assistant", `{"type":"tool_result","tool_use_id":"t"}`), "messages[0].content[0].type"},
		{"tool_result without tool_use_id", block("user", `{"type":"tool_result","content":"x"}`), "messages[0].content[0].tool_use_id"},
		{"tool_result content a number", block("user", `{"type":"tool_result","tool_use_id":"t","content":5}`), "messages[0].content[0].content"},
		{"tool_result content block type", block("user", `{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"tool_use"}]}`), "messages[0].content[0].content[1].type"},
		{"tool_result content image without source", block("user", `{"type":"tool_result","tool_use_id":"t","content":[{"type":"image"}]}`), "messages[0].content[0].content[0].source"},
		{"tool_result is_error a string", block("user", `{"type":"tool_result","tool_use_id":"t","is_error":"yes"}`), "messages[0].content[0].is_error"},
		{"thinking in a user turn", block("user", `{"type":"thinking","thinking":"x","signature":"s"}`), "messages[0].content[0].type"},
		{"redacted_thinking without data", block("assistant", `{"type":"redacted_thinking"}`), "messages[0].content[0].data"},
		{"system a number", with(`"system":5`), "system"},
		{"system block not text", with(`"system":[{"type":"image"}]`), "system[0].type"},
		{"system block without text", with(`"system":[{"type":"text"}]`), "system[0].text"},
		{"tools an object", with(`"tools":{}`), "tools"},
		{"tool without name", with(`"tools":[{"input_schema":{}}]`), "tools[0].name"},
		{"tool input_schema a string", with(`"tools":[{"name":"f"},{"name":"g","input_schema":"x"}]`), "tools[1].input_schema"},
		{"tool description a number", with(`"tools":[{"name":"f","description":5}]`), "tools[0].description"},
		{"tool_choice a string", with(`"tool_choice":"auto"`), "tool_choice"},
		{"tool_choice type unknown", with(`"tool_choice":{"type":"required"}`), "tool_choice.type"},
		{"tool_choice tool without name", with(`"tool_choice":{"type":"tool"}`), "tool_choice.name"},
		{"thinking type unknown", with(`"thinking":{"type":"on"}`), "thinking.type"},
		{"thinking enabled without budget", with(`"thinking":{"type":"enabled"}`), "thinking.budget_tokens"},
		{"thinking budget a string", with(`"thinking":{"type":"enabled","budget_tokens":"x"}`), "thinking.budget_tokens"},
		{"output_config a string", with(`"output_config":"high"`), "output_config"},
		{"effort unknown", with(`"output_config":{"effort":"extreme"}`), "output_config.effort"},
		{"effort a number", with(`"output_config":{"effort":3}`), "output_config.effort"},
		{"format not json_schema", with(`"output_config":{"format":{"type":"json_object"}}`), "output_config.format.type"},
		{"format without schema", with(`"output_config":{"format":{"type":"json_schema"}}`), "output_config.format.schema"},
		{"temperature a string", with(`"temperature":"hot"`), "temperature"},
		{"top_k fractional", with(`"top_k":1.5`), "top_k"},
		{"stop_sequences a string", with(`"stop_sequences":"x"`), "stop_sequences"},
		{"stream a string", with(`"stream":"yes"`), "stream"},
		{"metadata a string", with(`"metadata":"x"`), "metadata"},
		{"metadata.user_id a number", with(`"metadata":{"user_id":5}`), "metadata.user_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format.DecodeRequest([]byte(c.body))
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *ir.Error", err)
			}
			if e.Param != c.param || e.Kind != ir.ErrInvalidRequest || e.Status != 400 {
				t.Errorf("got param %q kind %q status %d (%s), want param %q", e.Param, e.Kind, e.Status, e.Message, c.param)
			}
		})
	}
}
