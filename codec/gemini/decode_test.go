package gemini

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

func namedResult(callID, name string, isError bool, content ...ir.Part) ir.Part {
	return ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: callID, Name: name, IsError: isError, Content: content}}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// canonRequest re-encodes the raw JSON members of r with sorted keys, so requests compare by
// content.
func canonRequest(t *testing.T, r *ir.Request) *ir.Request {
	t.Helper()
	c := *r
	re := func(m json.RawMessage) json.RawMessage {
		if m == nil {
			return nil
		}
		return json.RawMessage(canon(t, m))
	}
	c.Tools = append([]ir.Tool(nil), r.Tools...)
	for i := range c.Tools {
		c.Tools[i].Parameters = re(c.Tools[i].Parameters)
	}
	c.ResponseFormat = re(r.ResponseFormat)
	if r.Extra != nil {
		c.Extra = map[string]json.RawMessage{}
		for k, v := range r.Extra {
			c.Extra[k] = re(v)
		}
	}
	return &c
}

func TestDecodeRequestConversation(t *testing.T) {
	got, err := Format.DecodeRequest(readFixture(t, filepath.Join("decode", "conversation.json")))
	if err != nil {
		t.Fatal(err)
	}
	temp, topP, topK, on := 0.2, 0.95, 40, true
	want := &ir.Request{
		Messages: []ir.Message{
			msg(ir.RoleSystem, text("You are a coding agent.")),
			msg(ir.RoleSystem, text("Be brief.")),
			msg(ir.RoleUser, text("What is in these files?"),
				image(ir.Image{MediaType: "image/png", Data: "iVBORw0KGgo="}),
				file(ir.File{MediaType: "application/pdf", URL: "https://generativelanguage.googleapis.com/v1beta/files/abc"})),
			msg(ir.RoleAssistant,
				reasoning("Reading them.", "CiQBdGhvdWdodA==", "gemini"),
				signedText("Let me look.", "CiQBdGV4dA=="),
				signedCall("call_gemini_1", "read_file", `{"path":"a.txt"}`, "CiQBY2FsbA==", "gemini"),
				call("call_gemini_2", "read_file", `{"path":"b.txt"}`),
				call("list-7", "list_dir", `{}`)),
			msg(ir.RoleTool,
				namedResult("call_gemini_1", "read_file", false, text("alpha")),
				namedResult("list-7", "list_dir", false, text(`{"files":["a.txt","b.txt"]}`)),
				namedResult("call_gemini_2", "read_file", true, text("permission denied"))),
			msg(ir.RoleUser, text("Go on.")),
		},
		Tools: []ir.Tool{
			{Name: "read_file", Description: "Read a file", Parameters: raw(`{"type":"object","properties":{
				"path":{"type":"string","description":"the path"},
				"limit":{"type":["integer","null"],"minimum":1,"maxLength":10}},"required":["path"]}`)},
			{Name: "list_dir", Parameters: raw(`{"type":"object","properties":{"dir":{"type":"string","default":"."}},"additionalProperties":false}`)},
		},
		ToolChoice:  ir.ToolChoice{Mode: ir.ToolNamed, Name: "read_file"},
		MaxTokens:   2048,
		Choices:     1,
		Temperature: &temp, TopP: &topP, TopK: &topK,
		Stop:           []string{"END"},
		Thinking:       ir.Thinking{Enabled: &on, BudgetTokens: 1024, IncludeText: true},
		ResponseFormat: raw(`{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object","properties":{"answer":{"type":"string"}}}}}`),
		Extra: map[string]json.RawMessage{
			"contents[].parts[].executableCode": raw(`true`),
			"tools[].googleSearch":              raw(`[{"googleSearch":{}}]`),
			"tools[].behavior":                  raw(`{"list_dir":"NON_BLOCKING"}`),
			"safetySettings":                    raw(`[{"category":"HARM_CATEGORY_HARASSMENT","threshold":"BLOCK_NONE"}]`),
			"generationConfig.seed":             raw(`7`),
		},
	}
	if g, w := canonRequest(t, got), canonRequest(t, want); !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", dump(g), dump(w))
	}
}

// decodeOne decodes a body of one user turn plus the given top-level members.
func decodeOne(t *testing.T, members string) *ir.Request {
	t.Helper()
	r, err := Format.DecodeRequest([]byte(`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]` + members + `}`))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDecodeRequestThinking(t *testing.T) {
	on, off := true, false
	cases := []struct {
		config string
		want   ir.Thinking
	}{
		{`{"thinkingBudget":0}`, ir.Thinking{Enabled: &off}},
		{`{"thinkingBudget":-1,"includeThoughts":true}`, ir.Thinking{Enabled: &on, IncludeText: true}},
		{`{"thinkingBudget":24576}`, ir.Thinking{Enabled: &on, BudgetTokens: 24576}},
		{`{"thinkingLevel":"LOW"}`, ir.Thinking{Effort: "low"}},
		{`{"thinkingLevel":"high","includeThoughts":true}`, ir.Thinking{Effort: "high", IncludeText: true}},
		{`{"thinkingLevel":"THINKING_LEVEL_UNSPECIFIED"}`, ir.Thinking{}},
		{`{"includeThoughts":false}`, ir.Thinking{}},
	}
	for _, c := range cases {
		r := decodeOne(t, `,"generationConfig":{"thinkingConfig":`+c.config+`}`)
		if !reflect.DeepEqual(r.Thinking, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.config, r.Thinking, c.want)
		}
	}
}

func TestDecodeRequestToolConfig(t *testing.T) {
	cases := []struct {
		config string
		want   ir.ToolChoice
	}{
		{`{"mode":"AUTO"}`, ir.ToolChoice{Mode: ir.ToolAuto}},
		{`{"mode":"VALIDATED"}`, ir.ToolChoice{Mode: ir.ToolAuto}},
		{`{"mode":"NONE","allowedFunctionNames":["a"]}`, ir.ToolChoice{Mode: ir.ToolNone}},
		{`{"mode":"ANY"}`, ir.ToolChoice{Mode: ir.ToolRequired}},
		{`{"mode":"ANY","allowedFunctionNames":["a"]}`, ir.ToolChoice{Mode: ir.ToolNamed, Name: "a"}},
		{`{"mode":"ANY","allowedFunctionNames":["a","b"]}`, ir.ToolChoice{Mode: ir.ToolRequired, Allowed: []string{"a", "b"}}},
		{`{}`, ir.ToolChoice{}},
	}
	for _, c := range cases {
		r := decodeOne(t, `,"tools":[{"functionDeclarations":[{"name":"a"},{"name":"b"}]}],"toolConfig":{"functionCallingConfig":`+c.config+`}`)
		if !reflect.DeepEqual(r.ToolChoice, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.config, r.ToolChoice, c.want)
		}
	}
}

func TestDecodeRequestStructuredOutput(t *testing.T) {
	cases := []struct {
		config     string
		wantFormat string
		wantExtra  []string
	}{
		{`{"responseMimeType":"application/json"}`, `{"type":"json_object"}`, nil},
		{`{"responseMimeType":"application/json","responseJsonSchema":{"type":"object","required":["a"]}}`,
			`{"type":"json_schema","json_schema":{"name":"response","schema":{"type":"object","required":["a"]}}}`, nil},
		{`{"responseMimeType":"text/plain"}`, ``, nil},
		{`{"responseMimeType":"text/x.enum","responseSchema":{"type":"STRING","enum":["a","b"]}}`, ``,
			[]string{"generationConfig.responseMimeType", "generationConfig.responseSchema"}},
	}
	for _, c := range cases {
		r := decodeOne(t, `,"generationConfig":`+c.config)
		if got := string(r.ResponseFormat); c.wantFormat == "" && got != "" || c.wantFormat != "" && canon(t, []byte(got)) != canon(t, []byte(c.wantFormat)) {
			t.Errorf("%s: format %s, want %s", c.config, got, c.wantFormat)
		}
		var extra []string
		for k := range r.Extra {
			extra = append(extra, k)
		}
		if len(extra) != len(c.wantExtra) {
			t.Errorf("%s: extra %q, want %q", c.config, extra, c.wantExtra)
		}
		for _, k := range c.wantExtra {
			if r.Extra[k] == nil {
				t.Errorf("%s: extra %q lacks %s", c.config, extra, k)
			}
		}
	}
}

func TestDecodeRequestResults(t *testing.T) {
	cases := []struct {
		name     string
		response string
		text     string
		isError  bool
	}{
		{"output wrapper", `{"output":"done"}`, "done", false},
		{"content wrapper", `{"content":"done"}`, "done", false},
		{"error string", `{"error":"boom"}`, "boom", true},
		{"error object", `{"error":{"code":3}}`, `{"code":3}`, true},
		{"other object", `{"result":{"x":1},"ok":true}`, `{"result":{"x":1},"ok":true}`, false},
		{"wrapper of an object", `{"result":{"x":1}}`, `{"result":{"x":1}}`, false},
		{"no response", `null`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f"}}]},
				{"role":"user","parts":[{"functionResponse":{"name":"f","response":` + c.response + `}}]}]}`
			r, err := Format.DecodeRequest([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			want := namedResult("call_gemini_1", "f", c.isError, text(c.text))
			if got := r.Messages[1].Parts[0]; !reflect.DeepEqual(got, want) {
				t.Errorf("got %s, want %s", dump(got), dump(want))
			}
		})
	}
}

// Results without ids answer the latest model turn's calls of their name, in order; one
// answering no call gets an id of its own.
func TestDecodeRequestPairsResultsByName(t *testing.T) {
	body := `{"contents":[
		{"role":"model","parts":[{"functionCall":{"name":"f"}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"f","response":{}}}]},
		{"role":"model","parts":[{"functionCall":{"name":"g"}},{"functionCall":{"name":"f"}},{"functionCall":{"name":"g"}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"g","response":{}}},{"functionResponse":{"name":"g","response":{}}},
			{"functionResponse":{"name":"f","response":{}}},{"functionResponse":{"name":"h","response":{}}}]}]}`
	r, err := Format.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	var calls, results []string
	for _, m := range r.Messages {
		for _, p := range m.Parts {
			switch p.Kind {
			case ir.PartToolCall:
				calls = append(calls, p.ToolCall.Name+"="+p.ToolCall.ID)
			case ir.PartToolResult:
				results = append(results, p.ToolResult.Name+"="+p.ToolResult.CallID)
			}
		}
	}
	wantCalls := []string{"f=call_gemini_1", "g=call_gemini_2", "f=call_gemini_3", "g=call_gemini_4"}
	wantResults := []string{"f=call_gemini_1", "g=call_gemini_2", "g=call_gemini_4", "f=call_gemini_3", "h=call_gemini_5"}
	if !reflect.DeepEqual(calls, wantCalls) || !reflect.DeepEqual(results, wantResults) {
		t.Errorf("calls %q results %q\nwant %q %q", calls, results, wantCalls, wantResults)
	}
}

// A client that keeps a streamed answer's parts as they came (as chat helpers do) sends a
// call streamed in pieces back in pieces: it is one call, and its results pair with it.
func TestDecodeRequestJoinsStreamedCalls(t *testing.T) {
	body := `{"contents":[
		{"role":"user","parts":[{"text":"Read the theme and screen A."}]},
		{"role":"model","parts":[
			{"functionCall":{"name":"read_theme"},"thoughtSignature":"c2ln"},
			{"functionCall":{"name":"read_screen","willContinue":true}},
			{"functionCall":{"partialArgs":[{"jsonPath":"$.id","stringValue":"A","willContinue":true}],"willContinue":true}},
			{"functionCall":{"partialArgs":[{"jsonPath":"$.id","stringValue":"1"}],"willContinue":true}},
			{"functionCall":{}},
			{"functionCall":{"name":"open","willContinue":true}},
			{"functionCall":{"partialArgs":[{"jsonPath":"$.tab","numberValue":2}],"willContinue":true}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"read_theme","response":{"output":"dark"}}},
			{"functionResponse":{"name":"read_screen","response":{"output":"A1"}}},
			{"functionResponse":{"name":"open","response":{"output":"ok"}}}]}]}`
	r, err := Format.DecodeRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Message{
		msg(ir.RoleUser, text("Read the theme and screen A.")),
		msg(ir.RoleAssistant, signedCall("call_gemini_1", "read_theme", `{}`, "c2ln", "gemini"),
			call("call_gemini_2", "read_screen", `{"id":"A1"}`), call("call_gemini_3", "open", `{"tab":2}`)),
		msg(ir.RoleTool, namedResult("call_gemini_1", "read_theme", false, text("dark")),
			namedResult("call_gemini_2", "read_screen", false, text("A1")),
			namedResult("call_gemini_3", "open", false, text("ok"))),
	}
	if !reflect.DeepEqual(r.Messages, want) {
		t.Errorf("got  %s\nwant %s", dump(r.Messages), dump(want))
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	cases := []struct {
		name, body, param string
	}{
		{"not JSON", `{"contents":`, ""},
		{"not an object", `[1]`, ""},
		{"no contents", `{"generationConfig":{}}`, "contents"},
		{"contents not a list", `{"contents":{"role":"user"}}`, "contents"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`, "contents[0].role"},
		{"empty parts", `{"contents":[{"role":"user","parts":[]}]}`, "contents[0].parts"},
		{"call in a user turn", `{"contents":[{"role":"user","parts":[{"functionCall":{"name":"f"}}]}]}`, "contents[0].parts[0].functionCall"},
		{"call without name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "contents[0].parts[0].functionCall.name"},
		{"a piece without a call", `{"contents":[{"role":"model","parts":[{"functionCall":{"partialArgs":[{"jsonPath":"$.a","stringValue":"x"}]}}]}]}`, "contents[0].parts[0].functionCall.name"},
		{"a piece at no single place", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","willContinue":true}},{"functionCall":{"partialArgs":[{"jsonPath":"$.*","stringValue":"x"}]}}]}]}`, "contents[0].parts[1].functionCall.partialArgs"},
		{"args not an object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "contents[0].parts[0].functionCall.args"},
		{"response not an object", `{"contents":[{"role":"user","parts":[{"functionResponse":{"name":"f","response":"x"}}]}]}`, "contents[0].parts[0].functionResponse.response"},
		{"inline data without data", `{"contents":[{"role":"user","parts":[{"inlineData":{"mimeType":"image/png"}}]}]}`, "contents[0].parts[0].inlineData.data"},
		{"both schemas", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":{},"parametersJsonSchema":{}}]}]}`, "tools[0].functionDeclarations[0]"},
		{"declaration without name", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"description":"d"}]}]}`, "tools[0].functionDeclarations[0].name"},
		{"bad mode", `{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode"},
		{"bad level", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingLevel":"EXTREME"}}}`, "generationConfig.thinkingConfig.thinkingLevel"},
		{"bad budget", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"thinkingConfig":{"thinkingBudget":-5}}}`, "generationConfig.thinkingConfig.thinkingBudget"},
		{"negative max", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":-1}}`, "generationConfig.maxOutputTokens"},
		{"wrong type", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"temperature":"hot"}}`, "generationConfig.temperature"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format.DecodeRequest([]byte(c.body))
			var e *ir.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *ir.Error", err)
			}
			if e.Status != 400 || e.Kind != ir.ErrInvalidRequest || e.Code != "INVALID_ARGUMENT" || e.Param != c.param || e.Message == "" {
				t.Errorf("got %+v, want a 400 INVALID_ARGUMENT naming %q", *e, c.param)
			}
		})
	}
}

// The API also takes the proto field names; role "function" is a user turn (old docs).
func TestDecodeRequestAliases(t *testing.T) {
	r, err := Format.DecodeRequest([]byte(`{"contents":[{"role":"function","parts":[{"text":"x"}]}],
		"system_instruction":{"parts":[{"text":"sys"}]},"generation_config":{"maxOutputTokens":9},"model":"models/ignored"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []ir.Message{msg(ir.RoleSystem, text("sys")), msg(ir.RoleUser, text("x"))}
	if !reflect.DeepEqual(r.Messages, want) || r.MaxTokens != 9 || r.Extra != nil {
		t.Errorf("got %s max %d extra %v", dump(r.Messages), r.MaxTokens, r.Extra)
	}
}
