package gemini

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func text(s string) ir.Part { return ir.Part{Kind: ir.PartText, Text: s} }

func call(id, name, args string) ir.Part {
	return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}}
}

func signedCall(id, name, args, sig, format string) ir.Part {
	p := call(id, name, args)
	p.ToolCall.Signature, p.ToolCall.SignatureFormat = sig, format
	return p
}

func result(callID string, isError bool, content ...ir.Part) ir.Part {
	return ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: callID, IsError: isError, Content: content}}
}

func reasoning(textValue, sig, format string) ir.Part {
	return ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: textValue, Signature: sig, SignatureFormat: format}}
}

func image(img ir.Image) ir.Part { return ir.Part{Kind: ir.PartImage, Image: &img} }

func file(f ir.File) ir.Part { return ir.Part{Kind: ir.PartFile, File: &f} }

func msg(role ir.Role, parts ...ir.Part) ir.Message { return ir.Message{Role: role, Parts: parts} }

var weatherTool = ir.Tool{Name: "get_weather", Description: "Current weather",
	Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}

const schemaParams = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "additionalProperties": false,
  "propertyNames": {"pattern": "^[a-z]+$"},
  "properties": {
    "query": {"type": "string", "description": "terms", "minLength": 1, "format": "uri"},
    "mode": {"const": "fast"},
    "limit": {"type": ["integer", "null"], "minimum": 1, "exclusiveMaximum": 100, "format": "int32"},
    "when": {"type": "string", "format": "date-time"},
    "filter": {"$ref": "#/$defs/Filter", "description": "narrow down"},
    "sort": {"enum": ["asc", "desc", null]},
    "level": {"type": "integer", "enum": [1, 2, 3]},
    "target": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
    "maybe": {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]},
    "both": {"allOf": [
      {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
      {"properties": {"b": {"type": "boolean"}}, "required": ["b"]}]},
    "pair": {"type": "array", "items": [{"type": "string"}, {"type": "number"}]},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "examples": [["x"]]},
    "multi": {"type": ["string", "number"]},
    "tree": {"$ref": "#/definitions/Node"},
    "remote": {"$ref": "https://example.com/schema.json"},
    "self": {"$ref": "#"}
  },
  "required": ["query", "ghost"],
  "$defs": {
    "Filter": {"type": "object", "title": "Filter",
      "properties": {"field": {"type": "string"}, "value": {"type": "string", "default": ""}}}
  },
  "definitions": {
    "Node": {"type": "object", "properties": {"child": {"$ref": "#/definitions/Node"}}}
  }
}`

func TestEncodeRequestGolden(t *testing.T) {
	cases := []struct {
		name string
		req  ir.Request
		loss []string
	}{
		{name: "system_in_middle", req: ir.Request{Messages: []ir.Message{
			msg(ir.RoleSystem, text("You are terse.")),
			msg(ir.RoleUser, text("Hi")),
			msg(ir.RoleAssistant, text("Hello."), text("")),
			msg(ir.RoleSystem, text("From now on answer in French."), text(" Be polite.")),
			msg(ir.RoleUser, text("How are you?")),
			msg(ir.RoleUser, text("And the weather?")),
		}}, loss: []string{ir.LossSystemPosition}},
		{name: "parallel_tool_calls", req: ir.Request{
			Tools: []ir.Tool{weatherTool},
			Messages: []ir.Message{
				msg(ir.RoleUser, text("Weather in Paris and Rome?")),
				msg(ir.RoleAssistant,
					reasoning("Two cities, two calls.", "c2lnMQ==", "gemini"),
					reasoning("An unsigned summary.", "", "gemini"),
					text("Checking."),
					signedCall("call_a", "get_weather", `{ "city": "Paris" }`, "CiQBsig==", "gemini"),
					call("call_b", "get_weather", `{"city":"Rome"}`),
					call(ir.JoinCallID("call_c", "ZmFsbGJhY2s="), "get_weather", `{"city":"Oslo"}`)),
				msg(ir.RoleTool, result(ir.JoinCallID("call_a", "CiQBsig=="), false, text(`{"temp_c": 18, "sky": "clear"}`))),
				msg(ir.RoleTool, result("call_b", false, text("22 degrees, sunny"))),
				msg(ir.RoleTool, result("call_c", false, text("cold"))),
				msg(ir.RoleUser, text("Thanks! Which is warmer?")),
			}}},
		{name: "tool_results", req: ir.Request{Messages: []ir.Message{
			msg(ir.RoleUser, text("Run them")),
			msg(ir.RoleAssistant,
				call("c1", "lookup", ""),
				call("c2", "fail", `{"x":1}`),
				call("c3", "fail_obj", "not json"),
				signedCall("c4", "screenshot", "{}", "RXJyb3JTaWc=", "messages")),
			msg(ir.RoleTool,
				result("c1", false, text("line one"), text("line two")),
				result("c2", true, text("boom")),
				result("c3", true, text(`{"code": 7}`))),
			{Role: ir.RoleTool, Parts: []ir.Part{{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{
				CallID: "unknown-id", Name: "screenshot", Content: []ir.Part{
					text("captured"),
					image(ir.Image{MediaType: "image/png", Data: "iVBORw0KGgoAAAANSUhEUg=="}),
					image(ir.Image{URL: "https://example.com/shots/2.png"}),
				}}}}},
			msg(ir.RoleUser, text("Explain")),
		}}, loss: []string{"messages[].tool_calls[].arguments", "messages[].tool_calls[].signature"}},
		{name: "media", req: ir.Request{Messages: []ir.Message{
			msg(ir.RoleUser,
				text("Compare these"),
				image(ir.Image{MediaType: "image/png", Data: "iVBORw0KGgoAAAANSUhEUg=="}),
				image(ir.Image{URL: "https://example.com/cat.webp?size=large"}),
				image(ir.Image{URL: "https://example.com/photo", Detail: "high"}),
				image(ir.Image{URL: "data:image/gif;base64,R0lGODlhAQABAAAAACw="}),
				image(ir.Image{Data: "/9j/4AAQSkZJRg=="}),
				file(ir.File{MediaType: "application/pdf", Data: "JVBERi0xLjQK", Name: "report.pdf"}),
				file(ir.File{URL: "https://example.com/talk.MP3"}),
				file(ir.File{URL: "https://generativelanguage.googleapis.com/v1beta/files/abc123"})),
		}}, loss: []string{"messages[].file.filename", "messages[].image.detail"}},
		{name: "schema", req: ir.Request{
			Messages: []ir.Message{msg(ir.RoleUser, text("Find it"))},
			Tools: []ir.Tool{
				{Name: "search", Description: "Search the index", Parameters: json.RawMessage(schemaParams)},
				{Name: "noargs", Description: "No arguments", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
				{Name: "nil_params", Parameters: json.RawMessage(`null`)},
			}}, loss: []string{
			"tools[].parameters.$ref",
			"tools[].parameters.$schema",
			"tools[].parameters.additionalProperties",
			"tools[].parameters.examples",
			"tools[].parameters.exclusiveMaximum",
			"tools[].parameters.format",
			"tools[].parameters.items",
			"tools[].parameters.propertyNames",
			"tools[].parameters.required",
			"tools[].parameters.type",
			"tools[].parameters.uniqueItems",
		}},
		{name: "extra_kept", req: ir.Request{
			Messages: []ir.Message{msg(ir.RoleUser, text("Look it up")),
				msg(ir.RoleAssistant, signedText("Searching.", "c2lnMQ=="), signedText("", "c2lnMg=="))},
			Tools:     []ir.Tool{{Name: "lookup", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
			MaxTokens: 100,
			Extra: map[string]json.RawMessage{
				"safetySettings":                   json.RawMessage(`[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`),
				"generationConfig.seed":            json.RawMessage(`7`),
				"generationConfig.maxOutputTokens": json.RawMessage(`5`), // IR's own value wins
				"toolConfig.retrievalConfig":       json.RawMessage(`{"languageCode":"en"}`),
				"tools[].googleSearch":             json.RawMessage(`[{"googleSearch":{}}]`),
				"tools[].behavior":                 json.RawMessage(`{"lookup":"NON_BLOCKING"}`),
			}}},
		{name: "everything_lost", req: ir.Request{
			Model:              "client-alias",
			Stream:             true,
			IncludeUsage:       true,
			Parallel:           ptr(false),
			User:               "user-42",
			PreviousResponseID: "resp_1",
			Extra:              map[string]json.RawMessage{"contents[].parts[].executableCode": json.RawMessage(`true`)},
			Tools: []ir.Tool{
				{Name: "strict_fn", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}}}`), Strict: ptr(true)},
				{Name: "apply_patch", Description: "Apply a patch", Custom: true},
			},
			Messages: []ir.Message{
				{Role: ir.RoleSystem, Parts: []ir.Part{text("sys"), image(ir.Image{URL: "https://example.com/x.png"})}},
				{Role: ir.RoleUser, Name: "alice", Parts: []ir.Part{{Kind: ir.PartText, Text: "cached", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}},
				msg(ir.RoleAssistant,
					ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Text: "claude thinking", Signature: "EqQB", SignatureFormat: "messages"}},
					ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{Encrypted: "gAAAA", SignatureFormat: "responses"}},
					text("ok")),
			}}, loss: []string{
			"contents[].parts[].executableCode",
			"messages[].cache_control",
			"messages[].name",
			"messages[].reasoning",
			"parallel_tool_calls",
			"previous_response_id",
			"system.content",
			"tools[].custom",
			"tools[].strict",
			"user",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var loss ir.Loss
			body, err := Format.EncodeRequest(&c.req, "gemini-2.5-flash", &loss)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join(testdata, "encode", c.name+".json")
			if *update {
				if err := os.WriteFile(golden, []byte(canon(t, body)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := readFixture(t, filepath.Join("encode", c.name+".json"))
			if got, w := canon(t, body), canon(t, want); got != w {
				t.Errorf("body:\n%s\nwant:\n%s", got, w)
			}
			if got := loss.Fields(); !equalStrings(got, c.loss) {
				t.Errorf("loss = %q, want %q", got, c.loss)
			}
		})
	}
}

func equalStrings(a, b []string) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(a, b)
}

// encodeInline encodes one user turn plus what the case sets, and returns the body.
func encodeInline(t *testing.T, r ir.Request) (string, []string) {
	t.Helper()
	if r.Messages == nil {
		r.Messages = []ir.Message{msg(ir.RoleUser, text("hi"))}
	}
	var loss ir.Loss
	body, err := Format.EncodeRequest(&r, "m", &loss)
	if err != nil {
		t.Fatal(err)
	}
	return canon(t, body), loss.Fields()
}

func TestEncodeToolChoice(t *testing.T) {
	tools := []ir.Tool{{Name: "a"}, {Name: "b"}}
	decls := func(names ...string) string {
		var s []string
		for _, n := range names {
			s = append(s, `{"name":"`+n+`"}`)
		}
		return `"tools":[{"functionDeclarations":[` + strings.Join(s, ",") + `]}]`
	}
	cases := []struct {
		name   string
		tools  []ir.Tool
		choice ir.ToolChoice
		want   string // the body without contents
	}{
		{"default", tools, ir.ToolChoice{}, `{` + decls("a", "b") + `}`},
		{"auto", tools, ir.ToolChoice{Mode: ir.ToolAuto},
			`{` + decls("a", "b") + `,"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`},
		{"none", tools, ir.ToolChoice{Mode: ir.ToolNone},
			`{` + decls("a", "b") + `,"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`},
		{"required", tools, ir.ToolChoice{Mode: ir.ToolRequired},
			`{` + decls("a", "b") + `,"toolConfig":{"functionCallingConfig":{"mode":"ANY"}}}`},
		{"named", tools, ir.ToolChoice{Mode: ir.ToolNamed, Name: "b"},
			`{` + decls("a", "b") + `,"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["b"]}}}`},
		{"allowed, mode default", tools, ir.ToolChoice{Allowed: []string{"a"}},
			`{` + decls("a") + `,"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`},
		{"allowed auto", tools, ir.ToolChoice{Mode: ir.ToolAuto, Allowed: []string{"b"}},
			`{` + decls("b") + `,"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`},
		{"allowed required", tools, ir.ToolChoice{Mode: ir.ToolRequired, Allowed: []string{"a", "b"}},
			`{` + decls("a", "b") + `,"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["a","b"]}}}`},
		{"allowed none", tools, ir.ToolChoice{Mode: ir.ToolNone, Allowed: []string{"a"}},
			`{` + decls("a", "b") + `,"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`},
		{"no tools", nil, ir.ToolChoice{Mode: ir.ToolRequired}, `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, loss := encodeInline(t, ir.Request{Tools: c.tools, ToolChoice: c.choice})
			want := canon(t, []byte(withContents(c.want)))
			if got != want {
				t.Errorf("body:\n%s\nwant:\n%s", got, want)
			}
			if len(loss) != 0 {
				t.Errorf("loss = %q", loss)
			}
		})
	}
}

// withContents adds the one user turn encodeInline sends to an expected body.
func withContents(body string) string {
	const contents = `"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	if body == "{}" {
		return "{" + contents + "}"
	}
	return "{" + contents + "," + body[1:]
}

func TestEncodeThinking(t *testing.T) {
	cases := []struct {
		name     string
		thinking ir.Thinking
		want     string // generationConfig, "" when absent
		loss     []string
	}{
		{"not asked", ir.Thinking{}, "", nil},
		{"off", ir.Thinking{Enabled: ptr(false), Effort: "high", BudgetTokens: 2000}, `{"thinkingConfig":{"thinkingBudget":0}}`, nil},
		{"effort none", ir.Thinking{Effort: "none"}, `{"thinkingConfig":{"thinkingBudget":0}}`, nil},
		{"on, no amount", ir.Thinking{Enabled: ptr(true)}, `{"thinkingConfig":{"includeThoughts":true}}`, nil},
		{"minimal", ir.Thinking{Effort: "minimal"}, `{"thinkingConfig":{"thinkingBudget":512,"includeThoughts":true}}`, nil},
		{"low", ir.Thinking{Effort: "low"}, `{"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}}`, nil},
		{"medium", ir.Thinking{Effort: "medium", Enabled: ptr(true)}, `{"thinkingConfig":{"thinkingBudget":2048,"includeThoughts":true}}`, nil},
		{"high", ir.Thinking{Effort: "high"}, `{"thinkingConfig":{"thinkingBudget":4096,"includeThoughts":true}}`, nil},
		{"xhigh", ir.Thinking{Effort: "xhigh"}, `{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}`, nil},
		{"max", ir.Thinking{Effort: "max"}, `{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}`, nil},
		{"budget", ir.Thinking{BudgetTokens: 3000}, `{"thinkingConfig":{"thinkingBudget":3000,"includeThoughts":true}}`, nil},
		{"budget beats effort", ir.Thinking{BudgetTokens: 3000, Effort: "low"}, `{"thinkingConfig":{"thinkingBudget":3000,"includeThoughts":true}}`, nil},
		{"summary only", ir.Thinking{Summary: "auto"}, "", nil},
		{"unknown effort", ir.Thinking{Effort: "extreme"}, "", []string{"thinking"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, loss := encodeInline(t, ir.Request{Thinking: c.thinking})
			want := `{}`
			if c.want != "" {
				want = `{"generationConfig":` + c.want + `}`
			}
			if w := canon(t, []byte(withContents(want))); got != w {
				t.Errorf("body:\n%s\nwant:\n%s", got, w)
			}
			if !equalStrings(loss, c.loss) {
				t.Errorf("loss = %q, want %q", loss, c.loss)
			}
		})
	}
}

func TestEncodeGenerationConfig(t *testing.T) {
	cases := []struct {
		name string
		req  ir.Request
		want string // generationConfig
		loss []string
	}{
		{"sampling", ir.Request{MaxTokens: 1024, Temperature: ptr(0.7), TopP: ptr(0.95), TopK: ptr(40), Stop: []string{"END"}},
			`{"maxOutputTokens":1024,"temperature":0.7,"topP":0.95,"topK":40,"stopSequences":["END"]}`, nil},
		{"zero temperature kept", ir.Request{Temperature: ptr(0.0)}, `{"temperature":0}`, nil},
		{"six stop sequences", ir.Request{Stop: []string{"1", "2", "3", "4", "5", "6"}},
			`{"stopSequences":["1","2","3","4","5"]}`, []string{"stop"}},
		{"json_schema", ir.Request{ResponseFormat: json.RawMessage(`{"type":"json_schema","json_schema":{"name":"answer","strict":true,"schema":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}}}`)},
			`{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}}`, nil},
		{"json_object", ir.Request{ResponseFormat: json.RawMessage(`{"type":"json_object"}`)},
			`{"responseMimeType":"application/json"}`, nil},
		{"text format", ir.Request{ResponseFormat: json.RawMessage(`{"type":"text"}`)}, ``, nil},
		{"unknown format", ir.Request{ResponseFormat: json.RawMessage(`{"type":"grammar"}`)}, ``, []string{"response_format"}},
		{"with thinking", ir.Request{MaxTokens: 100, Thinking: ir.Thinking{Effort: "low"}},
			`{"maxOutputTokens":100,"thinkingConfig":{"thinkingBudget":1024,"includeThoughts":true}}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, loss := encodeInline(t, c.req)
			want := `{}`
			if c.want != "" {
				want = `{"generationConfig":` + c.want + `}`
			}
			if w := canon(t, []byte(withContents(want))); got != w {
				t.Errorf("body:\n%s\nwant:\n%s", got, w)
			}
			if !equalStrings(loss, c.loss) {
				t.Errorf("loss = %q, want %q", loss, c.loss)
			}
		})
	}
}

func TestEncodeRequestErrors(t *testing.T) {
	cases := []struct {
		name  string
		req   ir.Request
		param string
	}{
		{"result without a call", ir.Request{Messages: []ir.Message{
			msg(ir.RoleUser, text("hi")),
			msg(ir.RoleTool, result("call_missing", false, text("x")))}}, "messages"},
		{"invalid parameters", ir.Request{Messages: []ir.Message{msg(ir.RoleUser, text("hi"))},
			Tools: []ir.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":`)}}}, "tools"},
		{"invalid response_format", ir.Request{Messages: []ir.Message{msg(ir.RoleUser, text("hi"))},
			ResponseFormat: json.RawMessage(`"json"`)}, "response_format"},
		{"unknown role", ir.Request{Messages: []ir.Message{msg("narrator", text("hi"))}}, "messages"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format.EncodeRequest(&c.req, "m", &ir.Loss{})
			var e *ir.Error
			if !errors.As(err, &e) || e.Kind != ir.ErrInvalidRequest || e.Status != 400 || e.Param != c.param {
				t.Fatalf("err = %#v, want invalid_request on %q", err, c.param)
			}
		})
	}
}

// Property order steers the order the model writes arguments in: it is kept.
func TestSchemaKeepsPropertyOrder(t *testing.T) {
	r := ir.Request{Tools: []ir.Tool{{Name: "f", Parameters: json.RawMessage(
		`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"},"mid":{"type":"string"}}}`)}}}
	body, err := Format.EncodeRequest(&r, "m", &ir.Loss{})
	if err != nil {
		t.Fatal(err)
	}
	const want = `"parameters":{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"},"mid":{"type":"string"}}}`
	if !strings.Contains(string(body), want) {
		t.Errorf("body %s lacks %s", body, want)
	}
}

func TestPath(t *testing.T) {
	cases := []struct {
		model  string
		stream bool
		want   string
	}{
		{"gemini-2.5-flash", false, "/models/gemini-2.5-flash:generateContent"},
		{"gemini-2.5-flash", true, "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		{"models/gemini-3-pro-preview", false, "/models/gemini-3-pro-preview:generateContent"},
		{"my model/v1?x#y", true, "/models/my%20model%2Fv1%3Fx%23y:streamGenerateContent?alt=sse"},
	}
	for _, c := range cases {
		if got := Format.Path(c.model, c.stream); got != c.want {
			t.Errorf("Path(%q, %v) = %q, want %q", c.model, c.stream, got, c.want)
		}
	}
}

// Refs that each use the next one twice would expand exponentially: the work is bounded.
func TestSchemaRefBlowupIsBounded(t *testing.T) {
	var defs []string
	for i := range 40 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","properties":{"l":{"$ref":"#/$defs/d%d"},"r":{"$ref":"#/$defs/d%d"}}}`, i, i+1, i+1))
	}
	defs = append(defs, `"d40":{"type":"string"}`)
	schema := `{"$defs":{` + strings.Join(defs, ",") + `},"type":"object","properties":{"root":{"$ref":"#/$defs/d0"}}}`
	var loss ir.Loss
	r := ir.Request{Tools: []ir.Tool{{Name: "f", Parameters: json.RawMessage(schema)}}}
	if _, err := Format.EncodeRequest(&r, "m", &loss); err != nil {
		t.Fatal(err)
	}
	if got := loss.Fields(); !equalStrings(got, []string{"tools[].parameters.$ref"}) {
		t.Errorf("loss = %q", got)
	}
}

func TestEncodeKeepsHTMLCharacters(t *testing.T) {
	r := ir.Request{Messages: []ir.Message{msg(ir.RoleUser, text("if a < b && c > d"))},
		Tools: []ir.Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string","description":"<tag> & co"}}}`)}}}
	body, err := Format.EncodeRequest(&r, "m", &ir.Loss{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"if a < b && c > d"`, `"<tag> & co"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
}
