package converse

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

const (
	sonnet = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	llama  = "meta.llama3-3-70b-instruct-v1:0"
	nova   = "us.amazon.nova-pro-v1:0"
)

func user(parts ...ir.Part) ir.Message      { return ir.Message{Role: ir.RoleUser, Parts: parts} }
func assistant(parts ...ir.Part) ir.Message { return ir.Message{Role: ir.RoleAssistant, Parts: parts} }
func system(text string) ir.Message {
	return ir.Message{Role: ir.RoleSystem, Parts: []ir.Part{text_(text)}}
}
func text_(s string) ir.Part { return ir.Part{Kind: ir.PartText, Text: s} }
func call(id, name, args string) ir.Part {
	return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}}
}
func result(id string, isErr bool, content ...ir.Part) ir.Message {
	return ir.Message{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult,
		ToolResult: &ir.ToolResult{CallID: id, Content: content, IsError: isErr}}}}
}
func reasoning(r ir.Reasoning) ir.Part { return ir.Part{Kind: ir.PartReasoning, Reasoning: &r} }

var weather = ir.Tool{Name: "get_weather", Description: "Weather of a city",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

const weatherSpec = `{"toolSpec":{"name":"get_weather","description":"Weather of a city","inputSchema":{"json":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}}`

func TestEncodeRequest(t *testing.T) {
	yes, no := true, false
	toolLoop := []ir.Message{
		user(text_("Weather in Paris?")),
		assistant(call("tooluse_1", "get_weather", `{"city":"Paris"}`)),
		result("tooluse_1", false, text_("18C")),
	}
	cases := []struct {
		name  string
		model string
		req   ir.Request
		want  string
		loss  []string
	}{
		{"system, text and the inference config", llama,
			ir.Request{Messages: []ir.Message{system("Be brief."), system("Answer in French."), user(text_("Hi <there> & you"))},
				MaxTokens: 256, Temperature: ptr(0.7), TopP: ptr(0.9), Stop: []string{"END"}},
			`{"system":[{"text":"Be brief."},{"text":"Answer in French."}],
			  "messages":[{"role":"user","content":[{"text":"Hi <there> & you"}]}],
			  "inferenceConfig":{"maxTokens":256,"temperature":0.7,"topP":0.9,"stopSequences":["END"]}}`, nil},
		{"claude: top_k in the additional fields, the matched stop sequence asked for", sonnet,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, TopK: ptr(40), Stop: []string{"END", "##"}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "inferenceConfig":{"stopSequences":["END","##"]},
			  "additionalModelRequestFields":{"top_k":40},
			  "additionalModelResponseFieldPaths":["/stop_sequence"]}`, nil},
		{"another family: top_k and thinking have no spelling", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, TopK: ptr(40),
				Thinking: ir.Thinking{Enabled: &yes, Effort: "high"}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`, []string{"thinking", "top_k"}},
		{"out-of-range temperature and top_p are clamped and reported", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Temperature: ptr(1.5), TopP: ptr(-0.1)},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],"inferenceConfig":{"temperature":1,"topP":0}}`,
			[]string{"temperature", "top_p"}},
		{"a system message after the start, blank text and the name", llama,
			ir.Request{Messages: []ir.Message{
				{Role: ir.RoleUser, Name: "ann", Parts: []ir.Part{text_("Hi"), text_("  ")}},
				system("Late."), {Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartImage, Image: &ir.Image{Data: "iVBORw0KGgo", MediaType: "image/png"}}}},
			}},
			`{"system":[{"text":"Late."}],"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`,
			[]string{"messages[].name", ir.LossSystemPosition, "system.content"}},
		{"tools, tool calls and results: consecutive turns merge, results first", sonnet,
			ir.Request{Messages: []ir.Message{
				user(text_("Weather in Paris and Tokyo?")),
				assistant(text_("Checking."), call("tooluse_1", "get_weather", ` {"city": "Paris"} `), call("tooluse_2", "get_weather", `[1]`)),
				result("tooluse_1", false, text_("18C")),
				result("tooluse_2", true, text_("no such city"), ir.Part{Kind: ir.PartImage, Image: &ir.Image{Data: "/9j/4AAQ"}}),
				user(text_("And?")),
			}, Tools: []ir.Tool{weather, {Name: "noop"}}, ToolChoice: ir.ToolChoice{Mode: ir.ToolAuto}},
			`{"messages":[
			   {"role":"user","content":[{"text":"Weather in Paris and Tokyo?"}]},
			   {"role":"assistant","content":[{"text":"Checking."},
			     {"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{"city":"Paris"}}},
			     {"toolUse":{"toolUseId":"tooluse_2","name":"get_weather","input":{}}}]},
			   {"role":"user","content":[
			     {"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"18C"}]}},
			     {"toolResult":{"toolUseId":"tooluse_2","status":"error","content":[{"text":"no such city"},{"image":{"format":"jpeg","source":{"bytes":"/9j/4AAQ"}}}]}},
			     {"text":"And?"}]}],
			  "toolConfig":{"tools":[` + weatherSpec + `,{"toolSpec":{"name":"noop","inputSchema":{"json":{"type":"object","properties":{}}}}}],
			    "toolChoice":{"auto":{}}}}`,
			[]string{"messages[].tool_calls[].arguments"}},
		{"a result's error flag has no place but on Claude and Nova; an empty result", llama,
			ir.Request{Messages: []ir.Message{user(text_("Go")), assistant(call("c1", "f", "")), result("c1", true)}},
			`{"messages":[{"role":"user","content":[{"text":"Go"}]},
			   {"role":"assistant","content":[{"toolUse":{"toolUseId":"c1","name":"f","input":{}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"c1","content":[]}}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","properties":{}}}}}]}}`,
			[]string{"messages[].tool_result.is_error", "tool_choice"}},
		{"tool choice: required, allowed names filter the tools, parallel off", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Tools: []ir.Tool{weather, {Name: "noop", Strict: &yes}},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired, Allowed: []string{"noop"}}, Parallel: &no},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"noop","inputSchema":{"json":{"type":"object","properties":{}}},"strict":true}}],"toolChoice":{"any":{}}}}`,
			[]string{"parallel_tool_calls"}},
		{"tool choice: named; custom and deferred tools", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Tools: []ir.Tool{weather, {Name: "patch", Custom: true}, {Name: "later", Deferred: true}},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Name: "get_weather"}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "toolConfig":{"tools":[` + weatherSpec + `,{"toolSpec":{"name":"patch","inputSchema":{"json":{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}}}}],
			    "toolChoice":{"tool":{"name":"get_weather"}}}}`,
			[]string{"tools[].defer_loading"}},
		{"tool choice: a named choice among allowed tools", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Tools: []ir.Tool{weather, {Name: "noop"}, {Name: "other"}},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Allowed: []string{"noop", "other"}}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"noop","inputSchema":{"json":{"type":"object","properties":{}}}}},
			    {"toolSpec":{"name":"other","inputSchema":{"json":{"type":"object","properties":{}}}}}],"toolChoice":{"any":{}}}}`, nil},
		{"tool choice: a named choice among allowed tools that leaves one", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Tools: []ir.Tool{weather, {Name: "noop"}},
				ToolChoice: ir.ToolChoice{Mode: ir.ToolNamed, Allowed: []string{"noop"}}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"noop","inputSchema":{"json":{"type":"object","properties":{}}}}}],"toolChoice":{"tool":{"name":"noop"}}}}`, nil},
		{"tool choice none, no tool history: no tools at all", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Tools: []ir.Tool{weather}, ToolChoice: ir.ToolChoice{Mode: ir.ToolNone}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`, nil},
		{"tool choice none with tool history: the tools go, the choice is lost", llama,
			ir.Request{Messages: toolLoop, Tools: []ir.Tool{weather}, ToolChoice: ir.ToolChoice{Mode: ir.ToolNone}},
			`{"messages":[{"role":"user","content":[{"text":"Weather in Paris?"}]},
			   {"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{"city":"Paris"}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"18C"}]}}]}],
			  "toolConfig":{"tools":[` + weatherSpec + `]}}`, []string{"tool_choice"}},
		{"tool history and no tool: the called tools are declared", llama,
			ir.Request{Messages: toolLoop},
			`{"messages":[{"role":"user","content":[{"text":"Weather in Paris?"}]},
			   {"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{"city":"Paris"}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"18C"}]}}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"get_weather","inputSchema":{"json":{"type":"object","properties":{}}}}}]}}`,
			[]string{"tool_choice"}},
		{"reasoning history: Claude's signed reasoning goes back to Claude, others' are reported", sonnet,
			ir.Request{Messages: []ir.Message{
				user(text_("Hi")),
				assistant(
					reasoning(ir.Reasoning{Text: "Let me think.", Signature: "sig-1", SignatureFormat: SignatureFormat}),
					reasoning(ir.Reasoning{Redacted: "redacted", SignatureFormat: SignatureFormat}),
					reasoning(ir.Reasoning{Text: "unsigned, as DeepSeek-R1 writes it", SignatureFormat: SignatureFormat}),
					reasoning(ir.Reasoning{Text: "Gemini's", Signature: "sig-g", SignatureFormat: "gemini"}),
					text_("Hello.")),
				user(text_("Again")),
			}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]},
			   {"role":"assistant","content":[
			     {"reasoningContent":{"reasoningText":{"text":"Let me think.","signature":"sig-1"}}},
			     {"reasoningContent":{"redactedContent":"cmVkYWN0ZWQ="}},
			     {"text":"Hello."}]},
			   {"role":"user","content":[{"text":"Again"}]}]}`,
			[]string{"messages[].reasoning"}},
		{"reasoning history: Claude's signatures mean nothing to another model", llama,
			ir.Request{Messages: []ir.Message{
				user(text_("Hi")),
				assistant(reasoning(ir.Reasoning{Text: "Let me think.", Signature: "sig-1", SignatureFormat: SignatureFormat}), text_("Hello.")),
				user(text_("Again")),
			}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]},{"role":"assistant","content":[{"text":"Hello."}]},{"role":"user","content":[{"text":"Again"}]}]}`,
			[]string{"messages[].reasoning"}},
		{"thinking with a budget: maxTokens above it, temperature, top_p and top_k dropped, a forced choice degraded", sonnet,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, MaxTokens: 1000, Temperature: ptr(0.5), TopP: ptr(0.5), TopK: ptr(5),
				Thinking: ir.Thinking{Enabled: &yes, BudgetTokens: 2048}, Tools: []ir.Tool{weather}, ToolChoice: ir.ToolChoice{Mode: ir.ToolRequired}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "inferenceConfig":{"maxTokens":3048},
			  "toolConfig":{"tools":[` + weatherSpec + `],"toolChoice":{"auto":{}}},
			  "additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":2048}}}`,
			[]string{"temperature", "tool_choice", "top_k", "top_p"}},
		{"thinking from an effort, no cap given: the default cap above the budget, temperature 1 kept", sonnet,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Temperature: ptr(1.0), Thinking: ir.Thinking{Enabled: &yes, Effort: "max"}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "inferenceConfig":{"maxTokens":20480,"temperature":1},
			  "additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":16384}}}`, nil},
		{"adaptive thinking with its effort", sonnet,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, MaxTokens: 500, Thinking: ir.Thinking{Enabled: &yes, Effort: "minimal", Adaptive: true}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "inferenceConfig":{"maxTokens":500},
			  "additionalModelRequestFields":{"thinking":{"type":"adaptive"},"output_config":{"effort":"low"}}}`, nil},
		{"thinking off sends nothing", sonnet,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, Thinking: ir.Thinking{Enabled: &no, Effort: "none"}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`, nil},
		{"thinking in a tool loop whose call came without reasoning is dropped", sonnet,
			ir.Request{Messages: toolLoop, Tools: []ir.Tool{weather}, Thinking: ir.Thinking{Enabled: &yes, BudgetTokens: 1024}},
			`{"messages":[{"role":"user","content":[{"text":"Weather in Paris?"}]},
			   {"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{"city":"Paris"}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"18C"}]}}]}],
			  "toolConfig":{"tools":[` + weatherSpec + `]}}`, []string{"thinking"}},
		{"thinking stays on in a tool loop that began with reasoning", sonnet,
			ir.Request{Messages: []ir.Message{user(text_("Weather?")),
				assistant(reasoning(ir.Reasoning{Text: "t", Signature: "s", SignatureFormat: SignatureFormat}), call("c1", "get_weather", `{}`)),
				result("c1", false, text_("18C"))}, Tools: []ir.Tool{weather}, Thinking: ir.Thinking{Enabled: &yes, BudgetTokens: 1024}, MaxTokens: 8000},
			`{"messages":[{"role":"user","content":[{"text":"Weather?"}]},
			   {"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"t","signature":"s"}}},{"toolUse":{"toolUseId":"c1","name":"get_weather","input":{}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"c1","content":[{"text":"18C"}]}}]}],
			  "inferenceConfig":{"maxTokens":8000},
			  "toolConfig":{"tools":[` + weatherSpec + `]},
			  "additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}}`, nil},
		{"cache markers become cache points after their block", sonnet,
			ir.Request{Messages: []ir.Message{
				{Role: ir.RoleSystem, Parts: []ir.Part{{Kind: ir.PartText, Text: "Long rules.", CacheControl: json.RawMessage(`{"type":"ephemeral","ttl":"1h"}`)}}},
				user(ir.Part{Kind: ir.PartText, Text: "Doc", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}, text_("Question")),
				assistant(call("c1", "f", "{}")),
				{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, CacheControl: json.RawMessage(`{"type":"ephemeral","ttl":"2h"}`),
					ToolResult: &ir.ToolResult{CallID: "c1", Content: []ir.Part{text_("ok")}}}}},
			}, Tools: []ir.Tool{{Name: "f"}}},
			`{"system":[{"text":"Long rules."},{"cachePoint":{"type":"default","ttl":"1h"}}],
			  "messages":[{"role":"user","content":[{"text":"Doc"},{"cachePoint":{"type":"default"}},{"text":"Question"}]},
			   {"role":"assistant","content":[{"toolUse":{"toolUseId":"c1","name":"f","input":{}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"c1","content":[{"text":"ok"}]}},{"cachePoint":{"type":"default"}}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","properties":{}}}}}]}}`,
			[]string{"messages[].cache_control.ttl"}},
		{"a model without prompt caching gets no cache point", llama,
			ir.Request{Messages: []ir.Message{user(ir.Part{Kind: ir.PartText, Text: "Doc", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)})}},
			`{"messages":[{"role":"user","content":[{"text":"Doc"}]}]}`, []string{"messages[].cache_control"}},
		{"media: bytes and S3 go, URLs and audio are reported, document names made valid and unique", nova,
			ir.Request{Messages: []ir.Message{user(
				ir.Part{Kind: ir.PartImage, Image: &ir.Image{Data: "iVBORw0KGgo", Detail: "high"}},
				ir.Part{Kind: ir.PartImage, Image: &ir.Image{URL: "https://example.com/cat.png"}},
				ir.Part{Kind: ir.PartImage, Image: &ir.Image{URL: "s3://bucket/dog.webp"}},
				ir.Part{Kind: ir.PartImage, Image: &ir.Image{URL: "data:image/gif;base64,R0lGODlh"}},
				ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: "application/pdf", Data: "JVBERi0x", Name: "Q3 report (final).v2.pdf"}},
				ir.Part{Kind: ir.PartFile, File: &ir.File{Data: "JVBERi0y", Name: "Q3 report (final)!v2.pdf"}},
				ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: "text/plain", Data: "aGk="}},
				ir.Part{Kind: ir.PartFile, File: &ir.File{URL: "s3://bucket/clip.mp4"}},
				ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: "audio/wav", Data: "UklGR"}},
				ir.Part{Kind: ir.PartFile, File: &ir.File{URL: "https://example.com/a.pdf"}},
			)}},
			`{"messages":[{"role":"user","content":[
			   {"image":{"format":"png","source":{"bytes":"iVBORw0KGgo"}}},
			   {"image":{"format":"webp","source":{"s3Location":{"uri":"s3://bucket/dog.webp"}}}},
			   {"image":{"format":"gif","source":{"bytes":"R0lGODlh"}}},
			   {"document":{"format":"pdf","name":"Q3 report (final) v2","source":{"bytes":"JVBERi0x"}}},
			   {"document":{"format":"pdf","name":"Q3 report (final) v2 2","source":{"bytes":"JVBERi0y"}}},
			   {"document":{"format":"txt","name":"document","source":{"bytes":"aGk="}}},
			   {"video":{"format":"mp4","source":{"s3Location":{"uri":"s3://bucket/clip.mp4"}}}}]}]}`,
			[]string{"messages[].file", "messages[].file.url", "messages[].image.detail", "messages[].image.url"}},
		{"structured output", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))},
				ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"person","description":"A person","strict":true,"schema":{"type":"object", "properties":{"name":{"type":"string"}}}}}`)},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}],
			  "outputConfig":{"textFormat":{"type":"json_schema","structure":{"jsonSchema":{"schema":"{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}","name":"person","description":"A person"}}}}}`, nil},
		{"json_object, the user, a previous response and Extra have no place", llama,
			ir.Request{Messages: []ir.Message{user(text_("Hi"))}, ResponseFormat: json.RawMessage(`{"type":"json_object"}`),
				User: "u-1", PreviousResponseID: "resp_1", Extra: map[string]json.RawMessage{"metadata": json.RawMessage(`{}`)}},
			`{"messages":[{"role":"user","content":[{"text":"Hi"}]}]}`,
			[]string{"metadata", "previous_response_id", "response_format", "user"}},
		{"tool-call ids made valid, long ones shortened alike in the call and its result", llama,
			ir.Request{Messages: []ir.Message{user(text_("Go")),
				assistant(call("call.1/x", "f", "{}"), call(strings.Repeat("a", 70), "f", "{}")),
				result("call.1/x", false, text_("1")), result(strings.Repeat("a", 70), false, text_("2"))},
				Tools: []ir.Tool{{Name: "f"}}},
			`{"messages":[{"role":"user","content":[{"text":"Go"}]},
			   {"role":"assistant","content":[{"toolUse":{"toolUseId":"call_1_x","name":"f","input":{}}},
			     {"toolUse":{"toolUseId":"` + strings.Repeat("a", 47) + `_6bd5e5034855a112","name":"f","input":{}}}]},
			   {"role":"user","content":[{"toolResult":{"toolUseId":"call_1_x","content":[{"text":"1"}]}},
			     {"toolResult":{"toolUseId":"` + strings.Repeat("a", 47) + `_6bd5e5034855a112","content":[{"text":"2"}]}}]}],
			  "toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object","properties":{}}}}}]}}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var loss ir.Loss
			got, err := Format.EncodeRequest(&c.req, c.model, &loss)
			if err != nil {
				t.Fatal(err)
			}
			sameJSON(t, got, c.want)
			if f := loss.Fields(); !slices.Equal(f, c.loss) {
				t.Errorf("loss %q, want %q", f, c.loss)
			}
		})
	}
}

func TestEncodeRequestNothingToSend(t *testing.T) {
	var loss ir.Loss
	_, err := Format.EncodeRequest(&ir.Request{Messages: []ir.Message{system("only a system prompt"), user(text_(" "))}}, llama, &loss)
	var e *ir.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Kind != ir.ErrInvalidRequest || e.Param != "messages" ||
		e.Message != "nothing to send: every message was empty after conversion" {
		t.Fatalf("error %#v", err)
	}
}

func TestPath(t *testing.T) {
	cases := []struct{ model, plain, stream string }{
		{"anthropic.claude-3-5-sonnet-20240620-v1:0",
			"/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse", "/model/anthropic.claude-3-5-sonnet-20240620-v1:0/converse-stream"},
		{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0",
			"/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile%2Fus.anthropic.claude-sonnet-4-5-20250929-v1:0/converse",
			"/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile%2Fus.anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream"},
	}
	for _, c := range cases {
		if got := Format.Path(c.model, false); got != c.plain {
			t.Errorf("Path(%q, false) = %q, want %q", c.model, got, c.plain)
		}
		if got := Format.Path(c.model, true); got != c.stream {
			t.Errorf("Path(%q, true) = %q, want %q", c.model, got, c.stream)
		}
	}
}
