package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// responsesOK posts a Responses request that must succeed and returns the decoded body.
func responsesOK(t *testing.T, base, body string) map[string]any {
	t.Helper()
	resp, data := post(t, base+"/v1/responses", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	return object(t, string(data))
}

// stripResponse removes what varies between calls (ids, timestamps) from a response object,
// after checking their shapes.
func stripResponse(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	if !regexp.MustCompile(`^resp_[0-9a-f]{24}$`).MatchString(str(r, "id")) || num(r, "created_at") == 0 {
		t.Errorf("id %v created_at %v", r["id"], r["created_at"])
	}
	if done := r["completed_at"]; (r["status"] == "completed") != (done != nil) || (done != nil && num(r, "completed_at") < num(r, "created_at")) {
		t.Errorf("status %v completed_at %v", r["status"], done)
	}
	prefixes := map[string]string{"message": "msg_", "reasoning": "rs_", "function_call": "fc_"}
	for _, it := range r["output"].([]any) {
		item := it.(map[string]any)
		if !strings.HasPrefix(str(item, "id"), prefixes[str(item, "type")]) {
			t.Errorf("item id %v for type %v", item["id"], item["type"])
		}
		if item["type"] == "function_call" && !regexp.MustCompile(`^call_[0-9a-f]{24}$`).MatchString(str(item, "call_id")) {
			t.Errorf("call_id %v", item["call_id"])
		}
		delete(item, "id")
		delete(item, "call_id")
	}
	delete(r, "id")
	delete(r, "created_at")
	delete(r, "completed_at")
	return r
}

// responsesToolsJSON offers the chat tests' three tools, flat, plus hosted and custom tools
// that are never called.
const responsesToolsJSON = `[
	{"type":"function","name":"get_weather","description":"Weather","parameters":{"type":"object",
		"properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]},"strict":false},
	{"type":"function","name":"clock","parameters":{"type":"object","properties":{
		"tz":{"type":"string"},"utc":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
		"opts":{"type":"object"},"score":{"type":"number"},"note":{"type":["null","string"]}},"required":["tz","utc","tags","score","note"]}},
	{"type":"function","name":"ping"},
	{"type":"web_search"},
	{"type":"custom","name":"apply_patch","description":"patch"}]`

const defaultResponseEcho = `"error":null,"max_output_tokens":null,"parallel_tool_calls":true,"previous_response_id":null,
	"reasoning":{"effort":null,"summary":null},"store":true,"temperature":1,"text":{"format":{"type":"text"}},
	"tool_choice":"auto","top_p":1,"truncation":"disabled","metadata":{}`

func TestResponsesTextExactBody(t *testing.T) {
	_, base := startSim(t)
	r := responsesOK(t, base, `{"model":"gpt-test","instructions":"You are terse.","input":"Hello there friend"}`)
	assertJSON(t, marshal(t, stripResponse(t, r)), `{"object":"response","status":"completed",
		"incomplete_details":null,"instructions":"You are terse.","model":"gpt-test","tools":[],`+defaultResponseEcho+`,
		"output":[{"type":"message","status":"completed","role":"assistant","content":[
			{"type":"output_text","text":"Simulated reply from gpt-test. `+sixteen+`","annotations":[],"logprobs":[]}]}],
		"usage":{"input_tokens":6,"input_tokens_details":{"cached_tokens":0},"output_tokens":16,
			"output_tokens_details":{"reasoning_tokens":0},"total_tokens":22}}`)
}

func TestResponsesTextAnswers(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, extra, request  string
		text, status          string
		input, cached, output int
	}{
		{name: "words directive", request: `"please reply with 3 words"`, text: "Simulated reply from", status: "completed", input: 5, output: 3},
		{name: "max_output_tokens cuts", extra: `,"max_output_tokens":20`, request: `"reply with 30 words"`,
			text:   "Simulated reply from m1. alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa",
			status: "incomplete", input: 4, output: 20},
		{name: "cached tokens are part of input_tokens", request: `"one two cached 2 three"`,
			text: "Simulated reply from m1. " + sixteen, status: "completed", input: 5, cached: 2, output: 16},
		{name: "message items and roles count", request: `[{"role":"developer","content":"Be brief"},
				{"type":"message","role":"user","content":[{"type":"input_text","text":"look at"},
					{"type":"input_image","image_url":"data:image/png;base64,AAAA","detail":"auto"},{"type":"input_text","text":"this"}]},
				{"role":"assistant","content":[{"type":"output_text","text":"ok","annotations":[]}]},
				{"role":"user","content":"reply with 1 word"}]`,
			text: "Simulated", status: "completed", input: 10, output: 1},
		{name: "function traffic counts and the answer after an output is text", extra: `,"tools":` + responsesToolsJSON,
			request: `[{"role":"user","content":"weather please reply with 4 words"},
				{"type":"function_call","call_id":"call_A","name":"get_weather","arguments":"{\"city\": \"Paris\"}"},
				{"type":"function_call_output","call_id":"call_A","output":"sunny and warm"}]`,
			text: "Simulated reply from m1.", status: "completed", input: 11, output: 4},
		{name: "zero words", request: `"reply with 0 words"`, status: "completed", input: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := stripResponse(t, responsesOK(t, base, `{"model":"m1","input":`+tc.request+tc.extra+`}`))
			wantOutput := `[]`
			if tc.text != "" {
				itemStatus := map[string]string{"completed": "completed", "incomplete": "incomplete"}[tc.status]
				wantOutput = `[{"type":"message","status":"` + itemStatus + `","role":"assistant","content":[{"type":"output_text",
					"text":"` + tc.text + `","annotations":[],"logprobs":[]}]}]`
			}
			assertJSON(t, marshal(t, r["output"]), wantOutput)
			var wantDetails any
			if tc.status == "incomplete" {
				wantDetails = map[string]any{"reason": "max_output_tokens"}
			}
			if r["status"] != tc.status || string(marshal(t, r["incomplete_details"])) != string(marshal(t, wantDetails)) {
				t.Errorf("status %v incomplete_details %v, want %s", r["status"], r["incomplete_details"], tc.status)
			}
			assertJSON(t, marshal(t, r["usage"]), string(marshal(t, map[string]any{
				"input_tokens": tc.input, "input_tokens_details": map[string]any{"cached_tokens": tc.cached},
				"output_tokens": tc.output, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
				"total_tokens": tc.input + tc.output})))
		})
	}
}

func TestResponsesToolCalls(t *testing.T) {
	_, base := startSim(t)
	type call struct{ name, args string }
	weather, clock, ping := call{"get_weather", weatherArgs}, call{"clock", clockArgs}, call{"ping", `{}`}
	tests := []struct {
		name, extra, input string
		want               []call // nil: a text answer
		output             int
	}{
		{name: "auto calls the first tool", input: `"what is the weather"`, want: []call{weather}, output: 2},
		{name: "required calls the first tool", extra: `,"tool_choice":"required"`, input: `"go"`, want: []call{weather}, output: 2},
		{name: "forced function", extra: `,"tool_choice":{"type":"function","name":"clock"}`, input: `"time?"`, want: []call{clock}, output: 6},
		{name: "forced function wins over parallel", extra: `,"tool_choice":{"type":"function","name":"ping"}`, input: `"in parallel"`,
			want: []call{ping}, output: 1},
		{name: "parallel calls every function in order", input: `"do all of it in Parallel please"`, want: []call{weather, clock, ping}, output: 9},
		{name: "parallel_tool_calls false calls one", extra: `,"parallel_tool_calls":false`, input: `"in parallel"`, want: []call{weather}, output: 2},
		{name: "allowed_tools limits the choice", extra: `,"tool_choice":{"type":"allowed_tools","mode":"required",
			"tools":[{"type":"function","name":"ping"},{"type":"function","name":"clock"}]}`, input: `"parallel"`, want: []call{clock, ping}, output: 7},
		{name: "tool_choice none answers in text", extra: `,"tool_choice":"none"`, input: `"hi"`, output: 16},
		{name: "a forced hosted tool calls no function", extra: `,"tool_choice":{"type":"web_search"}`, input: `"hi"`, output: 16},
		{name: "system turns after the user's still get the call", input: `[{"role":"user","content":"hi"},
			{"role":"system","content":"env"},{"role":"developer","content":"be brief"}]`, want: []call{weather}, output: 2},
		{name: "a function output answers in text", input: `[{"role":"user","content":"hi"},
			{"type":"function_call","call_id":"call_A","name":"ping","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_A","output":[{"type":"input_text","text":"pong"}]}]`, output: 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := stripResponse(t, responsesOK(t, base, `{"model":"m1","tools":`+responsesToolsJSON+tc.extra+`,"input":`+tc.input+`}`))
			if r["status"] != "completed" || num(r, "usage", "output_tokens") != tc.output {
				t.Errorf("status %v output_tokens %d, want completed %d", r["status"], num(r, "usage", "output_tokens"), tc.output)
			}
			output := r["output"].([]any)
			if tc.want == nil {
				if len(output) != 1 || str(output, 0, "type") != "message" {
					t.Errorf("want a text answer, got %v", output)
				}
				return
			}
			var want []any
			for _, w := range tc.want {
				want = append(want, map[string]any{"type": "function_call", "status": "completed", "name": w.name, "arguments": w.args})
			}
			assertJSON(t, marshal(t, output), string(marshal(t, want)))
		})
	}
}

func TestResponsesReasoning(t *testing.T) {
	_, base := startSim(t)
	sealed := sealReasoning(reasoning8)
	tests := []struct {
		name, request string
		reasoning     string // the reasoning item without its id; "" for none
		output        int
	}{
		{"effort without summary: empty summary", `"reasoning":{"effort":"low"}`, `{"type":"reasoning","summary":[]}`, 9},
		{"summary requested", `"reasoning":{"effort":"high","summary":"auto"}`,
			`{"type":"reasoning","summary":[{"type":"summary_text","text":"` + reasoning8 + `"}]}`, 9},
		{"encrypted content included", `"reasoning":{"effort":"medium"},"include":["reasoning.encrypted_content"],"store":false`,
			`{"type":"reasoning","summary":[],"encrypted_content":"` + sealed + `"}`, 9},
		{"effort none: no reasoning", `"reasoning":{"effort":"none","summary":"auto"}`, ``, 1},
		{"effort minimal: no reasoning", `"reasoning":{"effort":"minimal"}`, ``, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := stripResponse(t, responsesOK(t, base, `{"model":"m1","input":"reply with 1 word",`+tc.request+`}`))
			output := r["output"].([]any)
			want := `[{"type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Simulated","annotations":[],"logprobs":[]}]}]`
			if tc.reasoning != "" {
				want = `[` + tc.reasoning + `,` + want[1:]
			}
			assertJSON(t, marshal(t, output), want)
			reasoning := 0
			if tc.reasoning != "" {
				reasoning = 8
			}
			if num(r, "usage", "output_tokens") != tc.output || num(r, "usage", "output_tokens_details", "reasoning_tokens") != reasoning {
				t.Errorf("usage %v, want output %d reasoning %d", r["usage"], tc.output, reasoning)
			}
		})
	}
	if text, ok := openReasoning(sealed); !ok || text != reasoning8 {
		t.Errorf("openReasoning = %q, %v", text, ok)
	}
	// Reasoning items produced here are accepted back, with their encrypted content.
	responsesOK(t, base, `{"model":"m1","reasoning":{"effort":"low"},"input":[{"role":"user","content":"hi"},
		{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"`+sealed+`"},
		{"role":"assistant","content":[{"type":"output_text","text":"Simulated"}]},{"role":"user","content":"more"}]}`)
}

func TestResponsesRejectsBadRequests(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, body, param, code, message string }{
		{"missing model", `{"input":"hi"}`, "model", "", "Missing required parameter: 'model'."},
		{"missing input", `{"model":"m"}`, "input", "", "Missing required parameter: 'input'."},
		{"previous_response_id", `{"model":"m","input":"hi","previous_response_id":"resp_abc"}`, "previous_response_id",
			"previous_response_not_found", "Previous response with id 'resp_abc' not found."},
		{"chat-shaped tool", `{"model":"m","input":"hi","tools":[{"type":"function","function":{"name":"f"}}]}`, "tools[0].name", "",
			"Missing required parameter: 'tools[0].name'."},
		{"chat-shaped content part", `{"model":"m","input":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`,
			"input[0].content[0].type", "", "Invalid value: 'text'. Supported values are: 'input_text', 'input_image', 'input_file', 'input_audio'."},
		{"input part in an assistant message", `{"model":"m","input":[{"role":"assistant","content":[{"type":"input_text","text":"hi"}]}]}`,
			"input[0].content[0].type", "", "Invalid value: 'input_text'. Supported values are: 'output_text', 'refusal'."},
		{"tool role", `{"model":"m","input":[{"role":"tool","content":"x"}]}`, "input[0].role", "",
			"Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'."},
		{"output without its call", `{"model":"m","input":[{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"call_X","output":"x"}]}`,
			"input", "", "No tool call found for function call output with call_id call_X."},
		{"reasoning item without summary", `{"model":"m","input":[{"type":"reasoning","id":"rs_1"},{"role":"user","content":"hi"}]}`,
			"input[0].summary", "", "Missing required parameter: 'input[0].summary'."},
		{"foreign encrypted reasoning", `{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAAnotours"},{"role":"user","content":"hi"}]}`,
			"", "invalid_encrypted_content", "The encrypted content for item input[0] could not be verified."},
		{"max_output_tokens below 16", `{"model":"m","input":"hi","max_output_tokens":10}`, "max_output_tokens", "integer_below_min_value",
			"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead."},
		{"forced function not offered", `{"model":"m","input":"hi","tools":` + responsesToolsJSON + `,"tool_choice":{"type":"function","name":"nope"}}`,
			"tool_choice", "", "Tool choice 'function' not found in 'tools' parameter."},
		{"unknown effort", `{"model":"m","input":"hi","reasoning":{"effort":"extreme"}}`, "reasoning.effort", "",
			"Invalid value: 'extreme'. Supported values are: 'none', 'minimal', 'low', 'medium', 'high', 'xhigh' and 'max'."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := post(t, base+"/v1/responses", tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, data)
			}
			orNull := func(s string) any {
				if s == "" {
					return nil
				}
				return s
			}
			assertJSON(t, data, string(marshal(t, map[string]any{"error": map[string]any{"message": tc.message,
				"type": "invalid_request_error", "param": orNull(tc.param), "code": orNull(tc.code)}})))
		})
	}
}

// assembleResponses checks a Responses stream and returns the response of its
// terminal event: event names equal types, sequence numbers count from 0, created and
// in_progress come first, every item is added, streamed and done in order, deltas (one word
// each for text and summaries, at most 5 bytes for arguments) concatenate to the done values,
// and the terminal response's output is exactly the done items.
func assembleResponses(t *testing.T, events []sseEventT) map[string]any {
	t.Helper()
	var done []any
	var streamed string // the text, summary or arguments of the item being streamed
	for i, ev := range events {
		e := object(t, ev.data)
		if e["type"] != ev.name || num(e, "sequence_number") != i {
			t.Fatalf("event %d: name %q, type %v, sequence_number %v", i, ev.name, e["type"], e["sequence_number"])
		}
		if i < 2 {
			want := []string{"response.created", "response.in_progress"}[i]
			if ev.name != want || str(e, "response", "status") != "in_progress" || len(path(e, "response", "output").([]any)) != 0 ||
				path(e, "response", "usage") != nil {
				t.Fatalf("event %d = %s, want %s of an empty in_progress response", i, ev.data, want)
			}
			continue
		}
		if idx, ok := e["output_index"]; ok && int(idx.(float64)) != len(done) {
			t.Fatalf("event %d output_index %v, %d items done", i, idx, len(done))
		}
		switch ev.name {
		case "response.output_item.added":
			streamed = ""
		case "response.output_text.delta", "response.reasoning_summary_text.delta":
			d := str(e, "delta")
			if strings.Count(strings.TrimSpace(d), " ") != 0 || (streamed != "" && !strings.HasPrefix(d, " ")) {
				t.Errorf("delta %q is not one word", d)
			}
			streamed += d
		case "response.function_call_arguments.delta":
			if d := str(e, "delta"); len(d) > 5 || d == "" {
				t.Errorf("arguments delta %q", d)
			}
			streamed += str(e, "delta")
		case "response.output_text.done", "response.reasoning_summary_text.done":
			if str(e, "text") != streamed {
				t.Errorf("%s text %q, streamed %q", ev.name, str(e, "text"), streamed)
			}
		case "response.function_call_arguments.done":
			if str(e, "arguments") != streamed {
				t.Errorf("arguments %q, streamed %q", str(e, "arguments"), streamed)
			}
		case "response.output_item.done":
			done = append(done, e["item"])
		case "response.completed", "response.incomplete", "response.failed":
			if i != len(events)-1 {
				t.Fatalf("terminal %s at %d of %d", ev.name, i, len(events))
			}
			resp := e["response"].(map[string]any)
			if ev.name != "response.failed" {
				if done == nil {
					done = []any{}
				}
				assertJSON(t, marshal(t, resp["output"]), string(marshal(t, done)))
			}
			return resp
		}
	}
	t.Fatal("stream without a terminal event")
	return nil
}

func TestResponsesStreamMatchesNonStreaming(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, request string }{
		{"text", `"input":"hello reply with 7 words cached 1"`},
		{"max_output_tokens cut", `"input":"reply with 40 words","max_output_tokens":17`},
		{"zero words", `"input":"reply with 0 words"`},
		{"reasoning summary and text", `"input":"reply with 3 words","reasoning":{"effort":"low","summary":"detailed"},"include":["reasoning.encrypted_content"]`},
		{"reasoning and parallel calls", `"tools":` + responsesToolsJSON + `,"input":"parallel","reasoning":{"effort":"high"}`},
		{"forced call", `"tools":` + responsesToolsJSON + `,"tool_choice":{"type":"function","name":"clock"},"input":"t"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			request := tc.request
			want := stripResponse(t, responsesOK(t, base, `{"model":"m1",`+request+`}`))
			resp, data := post(t, base+"/v1/responses", `{"model":"m1","stream":true,`+request+`}`)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			events := parseEvents(t, string(data), "\n\n")
			got := stripResponse(t, assembleResponses(t, events))
			assertJSON(t, marshal(t, got), string(marshal(t, want)))
			terminal := map[string]string{"completed": "response.completed", "incomplete": "response.incomplete"}[str(want, "status")]
			if events[len(events)-1].name != terminal {
				t.Errorf("terminal event %s, want %s", events[len(events)-1].name, terminal)
			}
		})
	}
}

func TestResponsesMidstreamError(t *testing.T) {
	_, base := startSim(t)
	resp, data := post(t, base+"/v1/responses", `{"model":"m1","stream":true,"input":"midstream error"}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	events := parseEvents(t, string(data), "\n\n")
	var names []string
	for _, ev := range events {
		names = append(names, ev.name)
	}
	want := "response.created response.in_progress response.output_item.added response.content_part.added " +
		"response.output_text.delta response.output_text.delta response.failed"
	if strings.Join(names, " ") != want {
		t.Fatalf("events %v, want %s", names, want)
	}
	failed := assembleResponses(t, events)
	if failed["status"] != "failed" || failed["usage"] != nil {
		t.Errorf("failed response %v", failed)
	}
	assertJSON(t, marshal(t, failed["error"]), `{"code":"server_error","message":"The server had an error while processing your request (simulated)."}`)
	output := failed["output"].([]any)
	if len(output) != 1 || str(output, 0, "status") != "incomplete" || str(output, 0, "content", 0, "text") != "Simulated reply" {
		t.Errorf("partial output %v", output)
	}
}

func TestResponsesRequestIsRecorded(t *testing.T) {
	s, base := startSim(t)
	body := `{"model":"m1","input":"hi","store":false}`
	post(t, base+"/r/codex/v1/responses", body)
	var got, want any
	_ = json.Unmarshal(s.LastRequest("codex"), &got)
	_ = json.Unmarshal([]byte(body), &want)
	if string(marshal(t, got)) != string(marshal(t, want)) || s.Calls("codex") != 1 {
		t.Errorf("LastRequest %s, Calls %d", s.LastRequest("codex"), s.Calls("codex"))
	}
}
