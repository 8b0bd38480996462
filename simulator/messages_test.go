package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

var messagesHeaders = map[string]string{"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01"}

func postMessages(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	return callHeaders(t, http.MethodPost, url, body, messagesHeaders)
}

// messagesOK posts a Messages request that must succeed and returns the decoded body.
func messagesOK(t *testing.T, base, body string) map[string]any {
	t.Helper()
	resp, data := postMessages(t, base+"/v1/messages", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	return object(t, string(data))
}

// messagesToolsJSON offers the chat tests' three tools plus a server tool that is never
// called.
const messagesToolsJSON = `[
	{"name":"get_weather","description":"Weather","input_schema":{"type":"object",
		"properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}},
	{"name":"clock","input_schema":{"type":"object","properties":{
		"tz":{"type":"string"},"utc":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
		"opts":{"type":"object"},"score":{"type":"number"},"note":{"type":["null","string"]}},"required":["tz","utc","tags","score","note"]}},
	{"name":"ping","input_schema":{"type":"object"}},
	{"type":"web_search_20250305","name":"web_search","max_uses":1}]`

const (
	weatherArgs = `{"city":"sample"}`                                               // days is optional
	clockArgs   = `{"tz":"sample","utc":false,"tags":[],"score":1,"note":"sample"}` // opts is optional
	sixteen     = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"
	reasoning8  = "Simulated reasoning. alpha bravo charlie delta echo foxtrot"
)

func TestMessagesTextExactBody(t *testing.T) {
	_, base := startSim(t)
	resp, data := postMessages(t, base+"/r/anth/v1/messages", `{"model":"claude-test","max_tokens":100,
		"system":"You are terse.","messages":[{"role":"user","content":"Hello there friend"}]}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	if id := str(decode(t, data), "id"); !regexp.MustCompile(`^msg_[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("id %q", id)
	}
	if rid := resp.Header.Get("request-id"); !strings.HasPrefix(rid, "req_") || rid != resp.Header.Get("X-Request-Id") {
		t.Errorf("request-id %q, X-Request-Id %q", rid, resp.Header.Get("X-Request-Id"))
	}
	assertJSON(t, without(t, data, "id"), `{"type":"message","role":"assistant","model":"claude-test",
		"content":[{"type":"text","text":"Simulated reply from claude-test. `+sixteen+`"}],
		"stop_reason":"end_turn","stop_sequence":null,
		"usage":{"input_tokens":6,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,
			"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},
			"output_tokens":16,"service_tier":"standard"}}`)
}

func TestMessagesTextAnswers(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, extra, messages string
		text, stop, stopSeq   string
		input, cached, output int
	}{
		{name: "words directive", messages: `[{"role":"user","content":"please reply with 3 words"}]`,
			text: "Simulated reply from", stop: "end_turn", input: 5, output: 3},
		{name: "max_tokens cuts", extra: `,"max_tokens":5`, messages: `[{"role":"user","content":"hi"}]`,
			text: "Simulated reply from m1. alpha", stop: "max_tokens", input: 1, output: 5},
		{name: "max_tokens equal to length ends the turn", extra: `,"max_tokens":3`,
			messages: `[{"role":"user","content":"reply with 3 words"}]`, text: "Simulated reply from", stop: "end_turn", input: 4, output: 3},
		{name: "stop sequence", extra: `,"stop_sequences":["zulu","bravo"]`, messages: `[{"role":"user","content":"hi"}]`,
			text: "Simulated reply from m1. alpha", stop: "stop_sequence", stopSeq: "bravo", input: 1, output: 5},
		{name: "max_tokens before the stop sequence", extra: `,"stop_sequences":["bravo"],"max_tokens":3`,
			messages: `[{"role":"user","content":"hi"}]`, text: "Simulated reply from", stop: "max_tokens", input: 1, output: 3},
		{name: "cached tokens are not input tokens", messages: `[{"role":"user","content":"one two cached 2 three"}]`,
			text: "Simulated reply from m1. " + sixteen, stop: "end_turn", input: 3, cached: 2, output: 16},
		{name: "cached capped at the prompt", messages: `[{"role":"user","content":"cached 99 reply with 1 word"}]`,
			text: "Simulated", stop: "end_turn", input: 0, cached: 6, output: 1},
		{name: "system blocks count", extra: `,"system":[{"type":"text","text":"Be brief"},{"type":"text","text":"and kind","cache_control":{"type":"ephemeral"}}]`,
			messages: `[{"role":"user","content":"reply with 1 word"}]`, text: "Simulated", stop: "end_turn", input: 8, output: 1},
		{name: "directives read the last user text only",
			messages: `[{"role":"user","content":"reply with 2 words"},{"role":"assistant","content":"ok"},{"role":"user","content":"reply with 1 word"}]`,
			text:     "Simulated", stop: "end_turn", input: 9, output: 1},
		{name: "text blocks count, images do not", messages: `[{"role":"user","content":[
				{"type":"text","text":"look at"},
				{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},
				{"type":"text","text":"this reply with 2 words"}]}]`,
			text: "Simulated reply", stop: "end_turn", input: 7, output: 2},
		{name: "tool traffic counts and the answer after results is text", extra: `,"tools":` + messagesToolsJSON,
			messages: `[{"role":"user","content":"weather please reply with 4 words"},
				{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"sunny and warm"}]}]}]`,
			text: "Simulated reply from m1.", stop: "end_turn", input: 10, output: 4},
		{name: "final assistant prefill", messages: `[{"role":"user","content":"hi reply with 2 words"},{"role":"assistant","content":"Sure"}]`,
			text: "Simulated reply", stop: "end_turn", input: 6, output: 2},
		{name: "zero words", messages: `[{"role":"user","content":"reply with 0 words"}]`,
			stop: "end_turn", input: 4, output: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			extra := tc.extra
			if !strings.Contains(extra, "max_tokens") {
				extra += `,"max_tokens":1000`
			}
			m := messagesOK(t, base, `{"model":"m1","messages":`+tc.messages+extra+`}`)
			wantContent := `[]`
			if tc.text != "" {
				wantContent = string(marshal(t, []any{map[string]any{"type": "text", "text": tc.text}}))
			}
			assertJSON(t, marshal(t, m["content"]), wantContent)
			var stopSeq any
			if tc.stopSeq != "" {
				stopSeq = tc.stopSeq
			}
			if m["stop_reason"] != tc.stop || m["stop_sequence"] != stopSeq {
				t.Errorf("stop_reason %v stop_sequence %v, want %q %v", m["stop_reason"], m["stop_sequence"], tc.stop, stopSeq)
			}
			u := m["usage"]
			if num(u, "input_tokens") != tc.input || num(u, "cache_read_input_tokens") != tc.cached ||
				num(u, "cache_creation_input_tokens") != 0 || num(u, "output_tokens") != tc.output {
				t.Errorf("usage %v, want input %d cached %d output %d", u, tc.input, tc.cached, tc.output)
			}
		})
	}
}

func TestMessagesToolCalls(t *testing.T) {
	_, base := startSim(t)
	type call struct{ name, input string }
	weather, clock, ping := call{"get_weather", weatherArgs}, call{"clock", clockArgs}, call{"ping", `{}`}
	toolResult := `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ping","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"pong"}`
	tests := []struct {
		name, extra, messages string
		want                  []call // nil: a text answer
		output                int
	}{
		{name: "auto calls the first tool", messages: `[{"role":"user","content":"what is the weather"}]`, want: []call{weather}, output: 2},
		{name: "any calls the first tool", extra: `,"tool_choice":{"type":"any"}`, messages: `[{"role":"user","content":"go"}]`,
			want: []call{weather}, output: 2},
		{name: "forced tool", extra: `,"tool_choice":{"type":"tool","name":"clock"}`, messages: `[{"role":"user","content":"time?"}]`,
			want: []call{clock}, output: 6},
		{name: "forced tool wins over parallel", extra: `,"tool_choice":{"type":"tool","name":"ping"}`,
			messages: `[{"role":"user","content":"in parallel"}]`, want: []call{ping}, output: 1},
		{name: "parallel calls every custom tool in order", messages: `[{"role":"user","content":"do all of it in Parallel please"}]`,
			want: []call{weather, clock, ping}, output: 9},
		{name: "disable_parallel_tool_use calls one", extra: `,"tool_choice":{"type":"auto","disable_parallel_tool_use":true}`,
			messages: `[{"role":"user","content":"in parallel"}]`, want: []call{weather}, output: 2},
		// Claude Code appends <system-reminder> text to the turn that carries tool results.
		{name: "tool results with appended text answer in text", messages: `[{"role":"user","content":"hi"},` + toolResult + `,
			{"type":"text","text":"<system-reminder>Todo list is empty</system-reminder>"}]}]`, output: 16},
		{name: "tool_choice none answers in text", extra: `,"tool_choice":{"type":"none"}`,
			messages: `[{"role":"user","content":"hi"}]`, output: 16},
		{name: "only tool results answers in text", messages: `[{"role":"user","content":"hi"},` + toolResult + `]}]`, output: 16},
	}
	idRe := regexp.MustCompile(`^toolu_[0-9a-f]{24}$`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postMessages(t, base+"/v1/messages", `{"model":"m1","max_tokens":1000,"tools":`+messagesToolsJSON+tc.extra+`,"messages":`+tc.messages+`}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			m := object(t, string(data))
			content, _ := m["content"].([]any)
			if num(m, "usage", "output_tokens") != tc.output {
				t.Errorf("output_tokens %d, want %d", num(m, "usage", "output_tokens"), tc.output)
			}
			if tc.want == nil {
				if m["stop_reason"] != "end_turn" || len(content) != 1 || str(content, 0, "type") != "text" {
					t.Errorf("want a text answer, got %v %v", m["stop_reason"], content)
				}
				return
			}
			if m["stop_reason"] != "tool_use" || len(content) != len(tc.want) {
				t.Fatalf("stop_reason %v, content %v", m["stop_reason"], content)
			}
			var raw struct { // keeps each input's bytes, to check the schema's key order
				Content []struct {
					Input json.RawMessage `json:"input"`
				} `json:"content"`
			}
			_ = json.Unmarshal(data, &raw)
			seen := map[string]bool{}
			for i, w := range tc.want {
				b := content[i]
				if str(b, "type") != "tool_use" || str(b, "name") != w.name || string(raw.Content[i].Input) != w.input {
					t.Errorf("block %d = %v %s, want %s(%s)", i, b, raw.Content[i].Input, w.name, w.input)
				}
				if id := str(b, "id"); !idRe.MatchString(id) || seen[id] {
					t.Errorf("block %d id %q is malformed or repeated", i, id)
				}
				seen[str(b, "id")] = true
			}
		})
	}
}

func TestMessagesThinking(t *testing.T) {
	_, base := startSim(t)
	sig := signature("thinking", reasoning8)
	thinkingBlock := `{"type":"thinking","thinking":"` + reasoning8 + `","signature":"` + sig + `"}`
	tests := []struct {
		name, request string
		content       string
		output        int
	}{
		{"enabled thinks first", `"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"reply with 2 words"}]`,
			`[` + thinkingBlock + `,{"type":"text","text":"Simulated reply"}]`, 10},
		{"adaptive thinks too", `"thinking":{"type":"adaptive"},"messages":[{"role":"user","content":"reply with 1 word"}]`,
			`[` + thinkingBlock + `,{"type":"text","text":"Simulated"}]`, 9},
		{"disabled does not", `"thinking":{"type":"disabled"},"messages":[{"role":"user","content":"reply with 1 word"}]`,
			`[{"type":"text","text":"Simulated"}]`, 1},
		{"thinking before a tool call", `"thinking":{"type":"enabled","budget_tokens":1024},"tools":` + messagesToolsJSON +
			`,"messages":[{"role":"user","content":"weather"}]`,
			`[` + thinkingBlock + `,{"type":"tool_use","name":"get_weather","input":` + weatherArgs + `}]`, 10},
		{"signed thinking sent back is accepted", `"thinking":{"type":"enabled","budget_tokens":1024},"tools":` + messagesToolsJSON +
			`,"messages":[{"role":"user","content":"weather"},
				{"role":"assistant","content":[` + thinkingBlock + `,{"type":"tool_use","id":"toolu_a","name":"get_weather","input":{"city":"x"}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"rain"}]}]`,
			`[` + thinkingBlock + `,{"type":"text","text":"Simulated reply from m1. ` + sixteen + `"}]`, 24},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := messagesOK(t, base, `{"model":"m1","max_tokens":2048,`+tc.request+`}`)
			content, _ := m["content"].([]any)
			for _, b := range content {
				delete(b.(map[string]any), "id") // tool ids vary
			}
			assertJSON(t, marshal(t, content), tc.content)
			if got := num(m, "usage", "output_tokens"); got != tc.output {
				t.Errorf("output_tokens %d, want %d", got, tc.output)
			}
		})
	}
}

func TestMessagesRejectsBadRequests(t *testing.T) {
	_, base := startSim(t)
	user := `"messages":[{"role":"user","content":"hi"}]`
	tests := []struct{ name, body, message string }{
		{"not JSON", `{"model":`, "There was an error parsing the body of your request: unexpected end of JSON input"},
		{"model of wrong type", `{"model":5,"max_tokens":10,` + user + `}`, "model: Input should be a valid string"},
		{"missing model", `{"max_tokens":10,` + user + `}`, "model: Field required"},
		{"missing max_tokens", `{"model":"m",` + user + `}`, "max_tokens: Field required"},
		{"max_tokens zero", `{"model":"m","max_tokens":0,` + user + `}`, "max_tokens: Input should be greater than or equal to 1"},
		{"no messages", `{"model":"m","max_tokens":10,"messages":[]}`, "messages: at least one message is required"},
		{"system role", `{"model":"m","max_tokens":10,"messages":[{"role":"system","content":"x"}]}`,
			"messages.0.role: Input should be 'user' or 'assistant'"},
		{"empty content", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":""}]}`,
			"messages.0: all messages must have non-empty content except for the optional final assistant message"},
		{"empty text block", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`,
			"messages: text content blocks must be non-empty"},
		{"tool_use without tool_result", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":{}}]},{"role":"user","content":"b"}]}`,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. " +
				"Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"tool_result without tool_use", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},
			{"role":"assistant","content":"b"},{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}]}`,
			"messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. " +
				"Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_use input not an object", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"f","input":"{}"}]}]}`,
			"messages.1.content.0.tool_use.input: Input should be a valid dictionary"},
		{"thinking without signature", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"hmm"}]},{"role":"user","content":"b"}]}`,
			"messages.1.content.0.thinking.signature: Field required"},
		{"thinking with a foreign signature", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"a"},
			{"role":"assistant","content":[{"type":"thinking","thinking":"` + reasoning8 + `!","signature":"` + signature("thinking", reasoning8) + `"}]},
			{"role":"user","content":"b"}]}`,
			"messages.1.content.0: Invalid `signature` in `thinking` block"},
		{"thinking budget below 1024", `{"model":"m","max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":512},` + user + `}`,
			"thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"},
		{"thinking budget not below max_tokens", `{"model":"m","max_tokens":1024,"thinking":{"type":"enabled","budget_tokens":1024},` + user + `}`,
			"`max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking with forced tool use", `{"model":"m","max_tokens":2048,"thinking":{"type":"enabled","budget_tokens":1024},
			"tools":` + messagesToolsJSON + `,"tool_choice":{"type":"any"},` + user + `}`,
			"Thinking may not be enabled when tool_choice forces tool use."},
		{"thinking with temperature", `{"model":"m","max_tokens":2048,"temperature":0.5,"thinking":{"type":"enabled","budget_tokens":1024},` + user + `}`,
			"`temperature` may only be set to 1 when thinking is enabled"},
		{"temperature above 1", `{"model":"m","max_tokens":10,"temperature":1.5,` + user + `}`, "temperature: Input should be between 0 and 1"},
		{"tool without input_schema", `{"model":"m","max_tokens":10,"tools":[{"name":"f"}],` + user + `}`,
			"tools.0.custom.input_schema: Field required"},
		{"unknown tool_choice", `{"model":"m","max_tokens":10,"tools":` + messagesToolsJSON + `,"tool_choice":{"type":"required"},` + user + `}`,
			"tool_choice.type: Input tag 'required' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'"},
		{"forced tool not offered", `{"model":"m","max_tokens":10,"tools":` + messagesToolsJSON + `,"tool_choice":{"type":"tool","name":"nope"},` + user + `}`,
			"tool_choice.name: Tool 'nope' not found in provided tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postMessages(t, base+"/v1/messages", tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, data)
			}
			assertJSON(t, data, string(marshal(t, map[string]any{"type": "error",
				"error":      map[string]any{"type": "invalid_request_error", "message": tc.message},
				"request_id": resp.Header.Get("request-id")})))
		})
	}
}

func TestMessagesAuthAndVersion(t *testing.T) {
	s, base := startSim(t)
	body := `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		errType string
		message string
	}{
		{"no key", map[string]string{"anthropic-version": "2023-06-01"}, 401, "authentication_error", "x-api-key header is required"},
		{"empty key", map[string]string{"x-api-key": " ", "anthropic-version": "2023-06-01"}, 401, "authentication_error", "x-api-key header is required"},
		{"no version", map[string]string{"x-api-key": "k"}, 400, "invalid_request_error", "anthropic-version: header is required"},
		{"x-api-key", messagesHeaders, 200, "", ""},
		{"bearer token", map[string]string{"Authorization": "Bearer oauth-token", "anthropic-version": "2023-06-01"}, 200, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, base+"/r/auth/v1/messages?beta=true", body, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.errType != "" {
				assertJSON(t, data, string(marshal(t, map[string]any{"type": "error",
					"error": map[string]any{"type": tc.errType, "message": tc.message}, "request_id": resp.Header.Get("request-id")})))
			}
		})
	}
	if got := s.Calls("auth"); got != int64(len(tests)) {
		t.Errorf("Calls(auth) = %d, want %d", got, len(tests))
	}
	if got := s.LastHeaders("auth").Get("Authorization"); got != "Bearer oauth-token" {
		t.Errorf("LastHeaders Authorization = %q", got)
	}
}

func TestMessagesCountTokens(t *testing.T) {
	_, base := startSim(t)
	resp, data := postMessages(t, base+"/r/x/v1/messages/count_tokens?beta=true", `{"model":"m","system":"Be brief",
		"messages":[{"role":"user","content":"hello there cached 2"}],"tools":`+messagesToolsJSON+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	assertJSON(t, data, `{"input_tokens":6}`)
	resp, data = postMessages(t, base+"/v1/messages/count_tokens", `{"model":"m","messages":[]}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "at least one message") {
		t.Errorf("status %d: %s", resp.StatusCode, data)
	}
}

// assembleMessages rebuilds the message a Messages stream describes, checking the event
// grammar on the way: event names equal types, message_start first, one ping, blocks
// opened and closed in index order, partial_json fragments of at most 5 bytes, message_delta
// then message_stop last.
func assembleMessages(t *testing.T, events []sseEventT) map[string]any {
	t.Helper()
	var msg map[string]any
	var content []any
	var partial string
	pings := 0
	open := -1
	for i, ev := range events {
		e := object(t, ev.data)
		if e["type"] != ev.name {
			t.Fatalf("event %d: name %q, type %v", i, ev.name, e["type"])
		}
		if (i == 0) != (ev.name == "message_start") || (i == len(events)-1) != (ev.name == "message_stop") {
			t.Fatalf("event %d is %s", i, ev.name)
		}
		switch ev.name {
		case "message_start":
			msg = e["message"].(map[string]any)
			if num(msg, "usage", "output_tokens") != 1 || msg["stop_reason"] != nil || len(msg["content"].([]any)) != 0 {
				t.Errorf("message_start = %s", ev.data)
			}
		case "ping":
			pings++
		case "content_block_start":
			if open != -1 || num(e, "index") != len(content) {
				t.Fatalf("block %v opened while %d open", e["index"], open)
			}
			open = num(e, "index")
			content = append(content, e["content_block"])
			partial = ""
		case "content_block_delta":
			if num(e, "index") != open {
				t.Fatalf("delta for block %v, open %d", e["index"], open)
			}
			b, d := content[open].(map[string]any), e["delta"].(map[string]any)
			switch d["type"] {
			case "text_delta":
				b["text"] = b["text"].(string) + d["text"].(string)
			case "thinking_delta":
				b["thinking"] = b["thinking"].(string) + d["thinking"].(string)
			case "signature_delta":
				b["signature"] = d["signature"]
			case "input_json_delta":
				if p := d["partial_json"].(string); len(p) > 5 {
					t.Errorf("partial_json %q longer than 5 bytes", p)
				}
				partial += d["partial_json"].(string)
			}
		case "content_block_stop":
			if num(e, "index") != open {
				t.Fatalf("stop for block %v, open %d", e["index"], open)
			}
			if b := content[open].(map[string]any); b["type"] == "tool_use" {
				if partial == "" {
					partial = "{}" // what a client must assume for an empty input stream
				}
				b["input"] = decode(t, []byte(partial))
			}
			open = -1
		case "message_delta":
			d := e["delta"].(map[string]any)
			msg["stop_reason"], msg["stop_sequence"] = d["stop_reason"], d["stop_sequence"]
			msg["usage"].(map[string]any)["output_tokens"] = path(e, "usage", "output_tokens")
		case "message_stop":
		default:
			t.Fatalf("unexpected event %s", ev.name)
		}
	}
	if pings != 1 || open != -1 {
		t.Errorf("%d pings, block %d left open", pings, open)
	}
	if content == nil {
		content = []any{}
	}
	msg["content"] = content
	return msg
}

func TestMessagesStreamMatchesNonStreaming(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, request string }{
		{"text", `"messages":[{"role":"user","content":"hello reply with 7 words cached 1"}]`},
		{"max_tokens cut", `"max_tokens":4,"messages":[{"role":"user","content":"hello"}]`},
		{"stop sequence", `"stop_sequences":["charlie"],"messages":[{"role":"user","content":"hello"}]`},
		{"zero words", `"messages":[{"role":"user","content":"reply with 0 words"}]`},
		{"thinking and text", `"thinking":{"type":"enabled","budget_tokens":1024},"messages":[{"role":"user","content":"reply with 3 words"}]`},
		{"forced tool", `"tools":` + messagesToolsJSON + `,"tool_choice":{"type":"tool","name":"clock"},"messages":[{"role":"user","content":"t"}]`},
		{"thinking and parallel tools", `"thinking":{"type":"enabled","budget_tokens":1024},"tools":` + messagesToolsJSON +
			`,"messages":[{"role":"user","content":"parallel"}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			request := tc.request
			if !strings.Contains(request, "max_tokens") {
				request += `,"max_tokens":2048`
			}
			want := messagesOK(t, base, `{"model":"m1",`+request+`}`)
			resp, data := postMessages(t, base+"/v1/messages", `{"model":"m1","stream":true,`+request+`}`)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			got := assembleMessages(t, parseEvents(t, string(data), "\n\n"))
			for _, m := range []map[string]any{want, got} {
				delete(m, "id")
				for _, b := range m["content"].([]any) {
					delete(b.(map[string]any), "id")
				}
			}
			assertJSON(t, marshal(t, got), string(marshal(t, want)))
		})
	}
}

func TestMessagesMidstreamError(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, request string
		events        []string
	}{
		{"text", `"messages":[{"role":"user","content":"midstream error please"}]`,
			[]string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "error"}},
		{"tool call", `"tools":` + messagesToolsJSON + `,"messages":[{"role":"user","content":"midstream error"}]`,
			[]string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_delta", "error"}},
		{"answer shorter than two deltas", `"messages":[{"role":"user","content":"midstream error reply with 1 word"}]`,
			[]string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop", "error"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postMessages(t, base+"/v1/messages", `{"model":"m1","max_tokens":100,"stream":true,`+tc.request+`}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d", resp.StatusCode)
			}
			events := parseEvents(t, string(data), "\n\n")
			var names []string
			for _, ev := range events {
				names = append(names, ev.name)
			}
			if strings.Join(names, " ") != strings.Join(tc.events, " ") {
				t.Fatalf("events %v, want %v", names, tc.events)
			}
			assertJSON(t, []byte(events[len(events)-1].data), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
		})
	}
	// Without stream the directive is inert: the turn completes.
	if m := messagesOK(t, base, `{"model":"m1","max_tokens":100,"messages":[{"role":"user","content":"midstream error"}]}`); m["stop_reason"] != "end_turn" {
		t.Errorf("non-streaming: %v", m)
	}
}

// messagesSignatureIsStable pins the signature format: base64, stable across processes.
func TestThinkingSignatureIsStableBase64(t *testing.T) {
	sig := signature("thinking", reasoning8)
	if sig != signature("thinking", reasoning8) || sig == signature("thinking", reasoning8+" ") {
		t.Error("signature must be a function of the text")
	}
	var raw []byte
	if err := json.Unmarshal([]byte(`"`+sig+`"`), &raw); err != nil || len(raw) != 48 {
		t.Errorf("signature %q is not 48 bytes of base64: %v", sig, err)
	}
}

// With the mid-conversation beta flag, system turns may sit between the others: their words
// count as input, and they break neither tool pairing nor the last user turn. Without the flag
// they are refused, as the API does.
func TestMessagesSystemTurnsNeedTheBeta(t *testing.T) {
	_, base := startSim(t)
	body := `{"model":"m","max_tokens":50,"messages":[
		{"role":"user","content":"reply with 3 words"},
		{"role":"system","content":[{"type":"text","text":"two words","cache_control":{"type":"ephemeral","ttl":"1h"}}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"ping","input":{}}]},
		{"role":"system","content":"one"},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"pong"}]},
		{"role":"system","content":"reply with 2 words"}]}`
	headers := map[string]string{"x-api-key": "sk-ant-test", "anthropic-version": "2023-06-01",
		"anthropic-beta": "claude-code-20250219, mid-conversation-tool-changes-2026-07-01"}
	resp, data := callHeaders(t, http.MethodPost, base+"/v1/messages", body, headers)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	m := object(t, string(data))
	u := m["usage"].(map[string]any)
	// reply with 3 words (4) + two words (2) + {} (1) + one (1) + pong (1) + reply with 2 words (4)
	if num(u, "input_tokens") != 13 || num(u, "output_tokens") != 3 {
		t.Errorf("usage %v, want 13 input tokens and a 3-word answer to the last user turn", u)
	}
	resp, data = postMessages(t, base+"/v1/messages", body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "messages.1.role: Input should be 'user' or 'assistant'") {
		t.Fatalf("without the beta: %d %s", resp.StatusCode, data)
	}
	headers["anthropic-beta"] = "mid-conversation-tool-changes-2026-07-01"
	resp, data = callHeaders(t, http.MethodPost, base+"/v1/messages", strings.Replace(body, `"content":"one"`, `"content":""`, 1), headers)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "messages.3.content: a system turn takes a non-empty string or text blocks") {
		t.Fatalf("empty system turn: %d %s", resp.StatusCode, data)
	}
}

// A deferred tool (defer_loading) is not in the model's context, so it is never called, even
// listed first (Claude Code sends a "never call this" placeholder first for unknown models).
func TestMessagesDeferredToolIsNotCalled(t *testing.T) {
	_, base := startSim(t)
	tools := `[{"name":"DeferredToolPlaceholder","description":"never call this tool","input_schema":{"type":"object","properties":{}},"defer_loading":true},
		{"name":"Bash","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`
	resp, data := postMessages(t, base+"/v1/messages", `{"model":"m1","max_tokens":1000,"tools":`+tools+`,"messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	content, _ := object(t, string(data))["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("content %v, want one tool_use", content)
	}
	if b := content[0].(map[string]any); b["type"] != "tool_use" || b["name"] != "Bash" {
		t.Fatalf("block %v, want a tool_use of Bash", b)
	}
}
