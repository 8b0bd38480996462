package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// chatResp is the subset of a chat.completion the tests assert on.
type chatResp struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []chatToolCall  `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage chatUsage `json:"usage"`
}

func chat(t *testing.T, base, body string) chatResp {
	t.Helper()
	resp, data := post(t, base+"/v1/chat/completions", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var r chatResp
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestChatTextAnswerExactBody(t *testing.T) {
	_, base := startSim(t)
	resp, data := post(t, base+"/v1/chat/completions", `{"model":"gpt-test","messages":[
		{"role":"system","content":"You are terse."},
		{"role":"user","content":"Hello there friend"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var head struct {
		ID      string `json:"id"`
		Created int64  `json:"created"`
	}
	_ = json.Unmarshal(data, &head)
	if !regexp.MustCompile(`^chatcmpl-[0-9a-f]{24}$`).MatchString(head.ID) || head.Created == 0 {
		t.Errorf("id %q created %d", head.ID, head.Created)
	}
	assertJSON(t, without(t, data, "id", "created"), `{
		"object":"chat.completion","model":"gpt-test","system_fingerprint":"fp_simulator",
		"choices":[{"index":0,"logprobs":null,"finish_reason":"stop","message":{
			"role":"assistant","refusal":null,
			"content":"Simulated reply from gpt-test. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"}}],
		"usage":{"prompt_tokens":6,"completion_tokens":16,"total_tokens":22,
			"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`)
}

func TestChatTextAnswers(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name                       string
		extra                      string // extra request fields, with a leading comma
		messages                   string
		content, finish            string
		prompt, completion, cached int
	}{
		{name: "words directive", messages: `[{"role":"user","content":"please reply with 3 words"}]`,
			content: "Simulated reply from", finish: "stop", prompt: 5, completion: 3},
		{name: "directive is case-insensitive", messages: `[{"role":"user","content":"Reply With 6 Words"}]`,
			content: "Simulated reply from m1. alpha bravo", finish: "stop", prompt: 4, completion: 6},
		{name: "filler wraps around", messages: `[{"role":"user","content":"reply with 32 words"}]`,
			content: "Simulated reply from m1. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu alpha bravo",
			finish:  "stop", prompt: 4, completion: 32},
		{name: "max_tokens cuts", extra: `,"max_tokens":5`, messages: `[{"role":"user","content":"hi"}]`,
			content: "Simulated reply from m1. alpha", finish: "length", prompt: 1, completion: 5},
		{name: "max_completion_tokens above length", extra: `,"max_completion_tokens":20`,
			messages: `[{"role":"user","content":"reply with 18 words"}]`,
			content:  "Simulated reply from m1. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november",
			finish:   "stop", prompt: 4, completion: 18},
		{name: "smaller of both caps wins", extra: `,"max_tokens":10,"max_completion_tokens":2`,
			messages: `[{"role":"user","content":"reply with 30 words"}]`,
			content:  "Simulated reply", finish: "length", prompt: 4, completion: 2},
		{name: "cap equal to length is stop", extra: `,"max_tokens":3`,
			messages: `[{"role":"user","content":"reply with 3 words"}]`,
			content:  "Simulated reply from", finish: "stop", prompt: 4, completion: 3},
		{name: "cached tokens", messages: `[{"role":"user","content":"one two cached 2 three"}]`,
			content: "Simulated reply from m1. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima",
			finish:  "stop", prompt: 5, completion: 16, cached: 2},
		{name: "cached capped at prompt", messages: `[{"role":"user","content":"cached 99 reply with 1 word"}]`,
			content: "Simulated", finish: "stop", prompt: 6, completion: 1, cached: 6},
		{name: "directives read the last user message only",
			messages: `[{"role":"user","content":"reply with 2 words"},{"role":"assistant","content":"ok"},{"role":"user","content":"reply with 1 word"}]`,
			content:  "Simulated", finish: "stop", prompt: 9, completion: 1},
		{name: "text parts count, other parts do not", messages: `[{"role":"user","content":[
				{"type":"text","text":"look at"},
				{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},
				{"type":"text","text":"this reply with 2 words"}]}]`,
			content: "Simulated reply", finish: "stop", prompt: 7, completion: 2},
		{name: "tool-call arguments count as prompt", messages: `[
				{"role":"user","content":"weather please"},
				{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"w","arguments":"{\"city\": \"Paris\"}"}}]},
				{"role":"tool","tool_call_id":"call_1","content":"sunny and warm"}]`,
			content: "Simulated reply from m1. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima",
			finish:  "stop", prompt: 7, completion: 16},
		{name: "empty prompt counts one token", messages: `[{"role":"user","content":""}]`,
			content: "Simulated reply from m1. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima",
			finish:  "stop", prompt: 1, completion: 16},
		{name: "zero words", messages: `[{"role":"user","content":"reply with 0 words"}]`,
			content: "", finish: "stop", prompt: 4, completion: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := chat(t, base, `{"model":"m1","messages":`+tc.messages+tc.extra+`}`)
			if len(r.Choices) != 1 {
				t.Fatalf("choices = %d", len(r.Choices))
			}
			var content string
			if err := json.Unmarshal(r.Choices[0].Message.Content, &content); err != nil {
				t.Fatalf("content %s: %v", r.Choices[0].Message.Content, err)
			}
			if content != tc.content {
				t.Errorf("content = %q, want %q", content, tc.content)
			}
			if r.Choices[0].FinishReason != tc.finish {
				t.Errorf("finish_reason = %q, want %q", r.Choices[0].FinishReason, tc.finish)
			}
			u := r.Usage
			if u.PromptTokens != tc.prompt || u.CompletionTokens != tc.completion ||
				u.TotalTokens != tc.prompt+tc.completion || u.PromptTokensDetails.CachedTokens != tc.cached {
				t.Errorf("usage = %+v, want prompt %d completion %d cached %d", u, tc.prompt, tc.completion, tc.cached)
			}
			if got := len(strings.Fields(content)); got != tc.completion {
				t.Errorf("content has %d words, completion_tokens %d", got, tc.completion)
			}
		})
	}
}

// toolsJSON offers three tools: one with simple parameters, one with every JSON-schema type
// (in non-alphabetical order, to prove schema order is kept) and one without parameters.
const toolsJSON = `[
	{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
		"properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}},
	{"type":"function","function":{"name":"clock","parameters":{"type":"object","properties":{
		"tz":{"type":"string"},"utc":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
		"opts":{"type":"object"},"score":{"type":"number"},"note":{"type":["null","string"]}},"required":["tz","utc","tags","score","note"]}}},
	{"type":"function","function":{"name":"ping"}}]`

func TestChatToolCalls(t *testing.T) {
	_, base := startSim(t)
	type call struct{ name, args string }
	weather := call{"get_weather", weatherArgs}
	clock := call{"clock", clockArgs}
	ping := call{"ping", `{}`}
	tests := []struct {
		name       string
		extra      string
		user       string
		want       []call
		completion int
	}{
		{name: "auto calls the first tool", user: "what is the weather", want: []call{weather}, completion: 2},
		{name: "required calls the first tool", extra: `,"tool_choice":"required"`, user: "go",
			want: []call{weather}, completion: 2},
		{name: "forced tool", extra: `,"tool_choice":{"type":"function","function":{"name":"clock"}}`,
			user: "time?", want: []call{clock}, completion: 6},
		{name: "forced tool wins over parallel", extra: `,"tool_choice":{"type":"function","function":{"name":"ping"}}`,
			user: "in parallel", want: []call{ping}, completion: 1},
		{name: "parallel calls all tools in order", user: "do all of it in Parallel please",
			want: []call{weather, clock, ping}, completion: 2 + 6 + 1},
		{name: "parallel_tool_calls false calls one", extra: `,"parallel_tool_calls":false`,
			user: "in parallel", want: []call{weather}, completion: 2},
		{name: "allowed_tools behaves like auto",
			extra: `,"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[]}}`,
			user:  "x", want: []call{weather}, completion: 2},
	}
	idRe := regexp.MustCompile(`^call_[0-9a-f]{24}$`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := chat(t, base, `{"model":"m1","tools":`+toolsJSON+tc.extra+
				`,"messages":[{"role":"user","content":"`+tc.user+`"}]}`)
			ch := r.Choices[0]
			if ch.FinishReason != "tool_calls" || string(ch.Message.Content) != "null" {
				t.Errorf("finish_reason %q content %s", ch.FinishReason, ch.Message.Content)
			}
			if len(ch.Message.ToolCalls) != len(tc.want) {
				t.Fatalf("got %d tool calls, want %d", len(ch.Message.ToolCalls), len(tc.want))
			}
			seen := map[string]bool{}
			for i, got := range ch.Message.ToolCalls {
				if got.Type != "function" || got.Function.Name != tc.want[i].name || got.Function.Arguments != tc.want[i].args {
					t.Errorf("call %d = %s %s(%s), want %s(%s)", i, got.Type, got.Function.Name,
						got.Function.Arguments, tc.want[i].name, tc.want[i].args)
				}
				if !idRe.MatchString(got.ID) || seen[got.ID] {
					t.Errorf("call %d id %q is malformed or repeated", i, got.ID)
				}
				seen[got.ID] = true
			}
			if r.Usage.CompletionTokens != tc.completion || r.Usage.PromptTokens != len(strings.Fields(tc.user)) {
				t.Errorf("usage %+v, want completion %d", r.Usage, tc.completion)
			}
		})
	}
}

// System and developer turns after the user's (Claude Code's environment block, converted)
// do not answer it: the user turn still gets its tool call.
func TestChatSystemTurnsAfterTheUserStillGetTheCall(t *testing.T) {
	_, base := startSim(t)
	r := chat(t, base, `{"model":"m1","tools":`+toolsJSON+`,"messages":[{"role":"user","content":"hi"},
		{"role":"system","content":"env"},{"role":"developer","content":"be brief"}]}`)
	ch := r.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "get_weather" {
		t.Errorf("finish %q calls %+v, want one get_weather call", ch.FinishReason, ch.Message.ToolCalls)
	}
}

func TestChatToolsAnsweredWithText(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, extra, messages string }{
		{"tool_choice none", `,"tool_choice":"none"`, `[{"role":"user","content":"hi"}]`},
		{"last message is a tool result", ``, `[{"role":"user","content":"hi"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ping","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"pong"}]`},
		{"forced tool after a tool result", `,"tool_choice":{"type":"function","function":{"name":"ping"}}`,
			`[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c","content":"pong"}]`},
		{"a system turn after a tool result", ``, `[{"role":"user","content":"hi"},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ping","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_1","content":"pong"},{"role":"system","content":"env"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := chat(t, base, `{"model":"m1","tools":`+toolsJSON+tc.extra+`,"messages":`+tc.messages+`}`)
			ch := r.Choices[0]
			if ch.FinishReason != "stop" || len(ch.Message.ToolCalls) != 0 || !strings.HasPrefix(string(ch.Message.Content), `"Simulated reply`) {
				t.Errorf("want a text answer, got finish %q content %s calls %v", ch.FinishReason, ch.Message.Content, ch.Message.ToolCalls)
			}
		})
	}
}

func TestChatRejectsBadRequests(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, body, param, code string
	}{
		{"not JSON", `{"model":`, "", ""},
		{"missing model", `{"messages":[{"role":"user","content":"hi"}]}`, "model", ""},
		{"model of wrong type", `{"model":5,"messages":[{"role":"user","content":"hi"}]}`, "model", ""},
		{"missing messages", `{"model":"m"}`, "messages", ""},
		{"empty messages", `{"model":"m","messages":[]}`, "messages", ""},
		{"message without role", `{"model":"m","messages":[{"content":"hi"}]}`, "messages[0].role", ""},
		{"content of wrong type", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":5}]}`, "messages[1].content", ""},
		{"max_tokens zero", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", "integer_below_min_value"},
		{"unknown tool_choice", `{"model":"m","tool_choice":"sometimes","messages":[{"role":"user","content":"hi"}]}`, "tool_choice", ""},
		{"forced tool not offered", `{"model":"m","tools":` + toolsJSON + `,"tool_choice":{"type":"function","function":{"name":"nope"}},"messages":[{"role":"user","content":"hi"}]}`, "tool_choice", ""},
		{"tool without name", `{"model":"m","tools":[{"type":"function","function":{}}],"messages":[{"role":"user","content":"hi"}]}`, "tools[0].function.name", ""},
		{"parameters not an object", `{"model":"m","tools":[{"type":"function","function":{"name":"f","parameters":"x"}}],"messages":[{"role":"user","content":"hi"}]}`, "tools[0].function.parameters", ""},
		{"stop of wrong type", `{"model":"m","stop":5,"messages":[{"role":"user","content":"hi"}]}`, "stop", ""},
		{"five stop sequences", `{"model":"m","stop":["a","b","c","d","e"],"messages":[{"role":"user","content":"hi"}]}`, "stop", ""},
		{"unknown reasoning_effort", `{"model":"m","reasoning_effort":"huge","messages":[{"role":"user","content":"hi"}]}`, "reasoning_effort", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := post(t, base+"/v1/chat/completions", tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, data)
			}
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    *string `json:"code"`
				} `json:"error"`
			}
			if err := json.Unmarshal(data, &e); err != nil {
				t.Fatal(err)
			}
			deref := func(p *string) string {
				if p == nil {
					return ""
				}
				return *p
			}
			if e.Error.Type != "invalid_request_error" || e.Error.Message == "" ||
				deref(e.Error.Param) != tc.param || deref(e.Error.Code) != tc.code {
				t.Errorf("error = %s, want param %q code %q", data, tc.param, tc.code)
			}
		})
	}
}

func TestAuthRequired(t *testing.T) {
	s, base := startSim(t)
	want := `{"error":{"message":"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`
	chatBody := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	tests := []struct{ name, method, path, body, auth string }{
		{"chat without header", http.MethodPost, "/v1/chat/completions", chatBody, "-"},
		{"chat with empty bearer", http.MethodPost, "/r/a/v1/chat/completions", chatBody, "Bearer "},
		{"chat with basic auth", http.MethodPost, "/v1/chat/completions", chatBody, "Basic dXNlcjpwYXNz"},
		{"embeddings", http.MethodPost, "/v1/embeddings", `{"model":"e","input":"x"}`, "-"},
		{"models", http.MethodGet, "/r/a/v1/models", "", "-"},
		{"responses", http.MethodPost, "/v1/responses", `{"model":"m","input":"hi"}`, "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := call(t, tc.method, base+tc.path, tc.body, tc.auth)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401", resp.StatusCode)
			}
			assertJSON(t, data, want)
		})
	}
	// Refused calls still reached the route: the gateway did send them.
	if got := s.Calls("a"); got != 2 {
		t.Errorf("Calls(a) = %d, want 2", got)
	}
}

func TestChatReasoningAndStop(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, extra, user, content, finish string
		completion, reasoning              int
	}{
		{"reasoning_effort counts reasoning tokens", `,"reasoning_effort":"high"`, "reply with 2 words",
			"Simulated reply", "stop", 10, 8},
		{"reasoning shares max_completion_tokens", `,"reasoning_effort":"low","max_completion_tokens":9`, "reply with 2 words",
			"Simulated", "length", 9, 8},
		{"reasoning can use up the cap", `,"reasoning_effort":"low","max_completion_tokens":5`, "hi", "", "length", 5, 5},
		{"effort none does not reason", `,"reasoning_effort":"none"`, "reply with 2 words", "Simulated reply", "stop", 2, 0},
		{"stop string", `,"stop":"charlie"`, "hi", "Simulated reply from m1. alpha bravo", "stop", 6, 0},
		{"stop array, first match wins", `,"stop":["zulu","alpha"]`, "hi", "Simulated reply from m1.", "stop", 4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := chat(t, base, `{"model":"m1","messages":[{"role":"user","content":"`+tc.user+`"}]`+tc.extra+`}`)
			var content string
			_ = json.Unmarshal(r.Choices[0].Message.Content, &content)
			u := r.Usage
			if content != tc.content || r.Choices[0].FinishReason != tc.finish || u.CompletionTokens != tc.completion ||
				u.CompletionTokensDetails.ReasoningTokens != tc.reasoning || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("content %q finish %q usage %+v, want %q %q completion %d reasoning %d",
					content, r.Choices[0].FinishReason, u, tc.content, tc.finish, tc.completion, tc.reasoning)
			}
		})
	}
}
