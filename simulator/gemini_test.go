package simulator

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func postGemini(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	return callHeaders(t, http.MethodPost, url, body, map[string]string{"x-goog-api-key": "AIza-test"})
}

// geminiOK posts a generateContent request for model g1 that must succeed.
func geminiOK(t *testing.T, base, body string) map[string]any {
	t.Helper()
	resp, data := postGemini(t, base+"/v1beta/models/g1:generateContent", body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	return object(t, string(data))
}

// geminiToolsJSON offers the chat tests' three tools: one with an OpenAPI-subset schema in
// capitals, one with a real JSON Schema (parametersJsonSchema allows what parameters
// rejects), one without parameters; plus a Google Search tool that is never called.
const geminiToolsJSON = `[{"functionDeclarations":[
	{"name":"get_weather","description":"Weather","parameters":{"type":"OBJECT",
		"properties":{"city":{"type":"STRING"},"days":{"type":"INTEGER"}},"required":["city"]}},
	{"name":"clock","parametersJsonSchema":{"type":"object","additionalProperties":false,"properties":{
		"tz":{"type":"string"},"utc":{"type":"boolean"},"tags":{"type":"array","items":{"type":"string"}},
		"opts":{"type":"object"},"score":{"type":"number"},"note":{"type":["null","string"]}},"required":["tz","utc","tags","score","note"]}},
	{"name":"ping"}]},{"googleSearch":{}}]`

func userContents(text string) string {
	return `"contents":[{"role":"user","parts":[{"text":"` + text + `"}]}]`
}

func TestGeminiTextExactBody(t *testing.T) {
	_, base := startSim(t)
	resp, data := postGemini(t, base+"/r/g/v1beta/models/gemini-test:generateContent", `{
		"systemInstruction":{"parts":[{"text":"You are terse."}]},`+userContents("Hello there friend")+`}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	if id := str(decode(t, data), "responseId"); !regexp.MustCompile(`^[0-9a-f]{24}$`).MatchString(id) {
		t.Errorf("responseId %q", id)
	}
	assertJSON(t, without(t, data, "responseId"), `{
		"candidates":[{"content":{"parts":[{"text":"Simulated reply from gemini-test. `+sixteen+`"}],"role":"model"},
			"finishReason":"STOP","index":0}],
		"usageMetadata":{"promptTokenCount":6,"candidatesTokenCount":16,"totalTokenCount":22,
			"promptTokensDetails":[{"modality":"TEXT","tokenCount":6}]},
		"modelVersion":"gemini-test"}`)
}

func TestGeminiTextAnswers(t *testing.T) {
	_, base := startSim(t)
	tests := []struct {
		name, request  string
		text, finish   string
		prompt, cached int
		candidates     int
	}{
		{name: "words directive", request: userContents("please reply with 3 words"),
			text: "Simulated reply from", finish: "STOP", prompt: 5, candidates: 3},
		{name: "maxOutputTokens cuts", request: userContents("hi") + `,"generationConfig":{"maxOutputTokens":5}`,
			text: "Simulated reply from g1. alpha", finish: "MAX_TOKENS", prompt: 1, candidates: 5},
		{name: "stop sequence", request: userContents("hi") + `,"generationConfig":{"stopSequences":["bravo"]}`,
			text: "Simulated reply from g1. alpha", finish: "STOP", prompt: 1, candidates: 5},
		{name: "cached tokens are part of the prompt", request: userContents("one two cached 2 three"),
			text: "Simulated reply from g1. " + sixteen, finish: "STOP", prompt: 5, cached: 2, candidates: 16},
		{name: "role may be left out", request: `"contents":[{"parts":[{"text":"reply with 1 word"}]}]`,
			text: "Simulated", finish: "STOP", prompt: 4, candidates: 1},
		{name: "directives read the last user text only", request: `"contents":[
				{"role":"user","parts":[{"text":"reply with 2 words"}]},{"role":"model","parts":[{"text":"ok"}]},
				{"role":"user","parts":[{"text":"reply with 1 word"}]}]`,
			text: "Simulated", finish: "STOP", prompt: 9, candidates: 1},
		{name: "text parts count, media does not", request: `"contents":[{"role":"user","parts":[{"text":"look at"},
				{"inlineData":{"mimeType":"image/png","data":"AAAA"}},{"fileData":{"mimeType":"application/pdf","fileUri":"f"}},
				{"text":"this reply with 2 words"}]}]`,
			text: "Simulated reply", finish: "STOP", prompt: 7, candidates: 2},
		{name: "function traffic counts and the answer after a response is text", request: `"tools":` + geminiToolsJSON + `,"contents":[
				{"role":"user","parts":[{"text":"weather please reply with 4 words"}]},
				{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city": "Paris"}},"thoughtSignature":"c2ln"}]},
				{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"result":"sunny and warm"}}}]}]`,
			text: "Simulated reply from g1.", finish: "STOP", prompt: 10, candidates: 4},
		{name: "zero words", request: userContents("reply with 0 words"), finish: "STOP", prompt: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := geminiOK(t, base, `{`+tc.request+`}`)
			cand := path(g, "candidates", 0)
			wantContent := `{"role":"model"}` // protobuf JSON leaves out an empty parts list
			if tc.text != "" {
				wantContent = string(marshal(t, map[string]any{"role": "model", "parts": []any{map[string]any{"text": tc.text}}}))
			}
			assertJSON(t, marshal(t, path(cand, "content")), wantContent)
			if str(cand, "finishReason") != tc.finish {
				t.Errorf("finishReason %q, want %q", str(cand, "finishReason"), tc.finish)
			}
			want := map[string]any{"promptTokenCount": tc.prompt, "totalTokenCount": tc.prompt + tc.candidates,
				"promptTokensDetails": []any{map[string]any{"modality": "TEXT", "tokenCount": tc.prompt}}}
			if tc.candidates > 0 {
				want["candidatesTokenCount"] = tc.candidates
			}
			if tc.cached > 0 {
				want["cachedContentTokenCount"] = tc.cached
				want["cacheTokensDetails"] = []any{map[string]any{"modality": "TEXT", "tokenCount": tc.cached}}
			}
			assertJSON(t, marshal(t, g["usageMetadata"]), string(marshal(t, want)))
		})
	}
}

func TestGeminiToolCalls(t *testing.T) {
	_, base := startSim(t)
	type call struct{ name, args string }
	weather, clock, ping := call{"get_weather", weatherArgs}, call{"clock", clockArgs}, call{"ping", `{}`}
	mode := func(m string, names ...string) string {
		allowed := ""
		if names != nil {
			allowed = `,"allowedFunctionNames":` + string(marshal(t, names))
		}
		return `,"toolConfig":{"functionCallingConfig":{"mode":"` + m + `"` + allowed + `}}`
	}
	tests := []struct {
		name, extra, contents string
		want                  []call // nil: a text answer
		candidates            int
	}{
		{name: "auto calls the first function", contents: userContents("what is the weather"), want: []call{weather}, candidates: 2},
		{name: "ANY calls the first function", extra: mode("ANY"), contents: userContents("go"), want: []call{weather}, candidates: 2},
		{name: "one allowed name forces it", extra: mode("ANY", "clock"), contents: userContents("time?"), want: []call{clock}, candidates: 6},
		{name: "forced function wins over parallel", extra: mode("ANY", "ping"), contents: userContents("in parallel"),
			want: []call{ping}, candidates: 1},
		{name: "allowed names limit parallel calls", extra: mode("ANY", "ping", "get_weather"), contents: userContents("parallel"),
			want: []call{weather, ping}, candidates: 3},
		{name: "parallel calls every function in order", contents: userContents("do all of it in Parallel please"),
			want: []call{weather, clock, ping}, candidates: 9},
		{name: "NONE answers in text", extra: mode("NONE"), contents: userContents("hi"), candidates: 16},
		{name: "a function response answers in text", contents: `"contents":[{"role":"user","parts":[{"text":"hi"}]},
			{"role":"model","parts":[{"functionCall":{"name":"ping","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"ping","response":{"result":"pong"}}}]}]`, candidates: 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postGemini(t, base+"/v1beta/models/g1:generateContent", `{"tools":`+geminiToolsJSON+tc.extra+`,`+tc.contents+`}`)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			g := object(t, string(data))
			if str(g, "candidates", 0, "finishReason") != "STOP" || num(g, "usageMetadata", "candidatesTokenCount") != tc.candidates {
				t.Errorf("finishReason %q candidatesTokenCount %d, want STOP %d", str(g, "candidates", 0, "finishReason"),
					num(g, "usageMetadata", "candidatesTokenCount"), tc.candidates)
			}
			var raw struct {
				Candidates []struct {
					Content struct {
						Parts []struct {
							Text         *string `json:"text"`
							FunctionCall *struct {
								Name string          `json:"name"`
								Args json.RawMessage `json:"args"`
								ID   *string         `json:"id"`
							} `json:"functionCall"`
						} `json:"parts"`
					} `json:"content"`
				} `json:"candidates"`
			}
			_ = json.Unmarshal(data, &raw)
			parts := raw.Candidates[0].Content.Parts
			if tc.want == nil {
				if len(parts) != 1 || parts[0].Text == nil || !strings.HasPrefix(*parts[0].Text, "Simulated reply") {
					t.Errorf("want a text answer, got %s", data)
				}
				return
			}
			if len(parts) != len(tc.want) {
				t.Fatalf("%d parts, want %d: %s", len(parts), len(tc.want), data)
			}
			for i, w := range tc.want {
				fc := parts[i].FunctionCall
				if fc == nil || fc.Name != w.name || string(fc.Args) != w.args || fc.ID != nil {
					t.Errorf("part %d = %s, want %s(%s) without id", i, data, w.name, w.args)
				}
			}
		})
	}
}

func TestGeminiThinking(t *testing.T) {
	_, base := startSim(t)
	sig := signature("thought", reasoning8)
	thought := `{"text":"` + reasoning8 + `","thought":true}`
	tests := []struct {
		name, request    string
		parts            string
		thoughts, output int
	}{
		{"includeThoughts shows the thought summary", userContents("reply with 2 words") +
			`,"generationConfig":{"thinkingConfig":{"includeThoughts":true}}`,
			`[` + thought + `,{"text":"Simulated reply","thoughtSignature":"` + sig + `"}]`, 8, 2},
		{"a budget alone thinks without showing", userContents("reply with 2 words") +
			`,"generationConfig":{"thinkingConfig":{"thinkingBudget":1024}}`,
			`[{"text":"Simulated reply","thoughtSignature":"` + sig + `"}]`, 8, 2},
		{"budget 0 turns thinking off", userContents("reply with 2 words") +
			`,"generationConfig":{"thinkingConfig":{"thinkingBudget":0,"includeThoughts":true}}`,
			`[{"text":"Simulated reply"}]`, 0, 2},
		{"the signature goes on the first function call", `"tools":` + geminiToolsJSON + `,` + userContents("parallel") +
			`,"generationConfig":{"thinkingConfig":{"thinkingLevel":"HIGH","includeThoughts":true}}`,
			`[` + thought + `,{"functionCall":{"name":"get_weather","args":` + weatherArgs + `},"thoughtSignature":"` + sig + `"},
				{"functionCall":{"name":"clock","args":` + clockArgs + `}},{"functionCall":{"name":"ping","args":{}}}]`, 8, 9},
		{"thoughts share maxOutputTokens", userContents("hi") +
			`,"generationConfig":{"maxOutputTokens":10,"thinkingConfig":{"includeThoughts":true}}`,
			`[` + thought + `,{"text":"Simulated reply","thoughtSignature":"` + sig + `"}]`, 8, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := geminiOK(t, base, `{`+tc.request+`}`)
			assertJSON(t, marshal(t, path(g, "candidates", 0, "content", "parts")), tc.parts)
			u := g["usageMetadata"]
			if num(u, "thoughtsTokenCount") != tc.thoughts || num(u, "candidatesTokenCount") != tc.output ||
				num(u, "totalTokenCount") != num(u, "promptTokenCount")+tc.thoughts+tc.output {
				t.Errorf("usageMetadata %v, want thoughts %d candidates %d", u, tc.thoughts, tc.output)
			}
		})
	}
}

func TestGeminiRejectsBadRequests(t *testing.T) {
	_, base := startSim(t)
	fn := func(decl string) string {
		return `"tools":[{"functionDeclarations":[` + decl + `]}],` + userContents("hi")
	}
	tests := []struct{ name, body, message string }{
		{"not JSON", `{"contents":`, "Invalid JSON payload received. unexpected end of JSON input"},
		{"no contents", `{"contents":[]}`, "* GenerateContentRequest.contents: contents is not specified\n"},
		{"bad role", `{"contents":[{"role":"assistant","parts":[{"text":"x"}]}]}`, "Please use a valid role: user, model."},
		{"no parts", `{"contents":[{"role":"user","parts":[]}]}`,
			"* GenerateContentRequest.contents[0].parts: contents.parts must not be empty.\n"},
		{"empty part", `{"contents":[{"role":"user","parts":[{"text":"a"},{"thought":true}]}]}`,
			"* GenerateContentRequest.contents[0].parts[1].data: required oneof field 'data' must have one initialized field\n"},
		{"function without name", `{` + fn(`{"parameters":{"type":"object"}}`) + `}`,
			"* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.\n"},
		{"JSON-Schema keyword in parameters", `{` + fn(`{"name":"f","parameters":{"type":"object","additionalProperties":false}}`) + `}`,
			`Invalid JSON payload received. Unknown name "additionalProperties" at 'tools[0].function_declarations[0].parameters': Cannot find field.`},
		{"nested $schema", `{` + fn(`{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"$schema":"x"}}}}}`) + `}`,
			`Invalid JSON payload received. Unknown name "$schema" at 'tools[0].function_declarations[0].parameters.properties[1].value.items': Cannot find field.`},
		{"type list", `{` + fn(`{"name":"f","parameters":{"type":"object","properties":{"a":{"type":["string","null"]}}}}`) + `}`,
			`Invalid JSON payload received. Unknown name "type" at 'tools[0].function_declarations[0].parameters.properties[0].value': Proto field is not repeating, cannot start list.`},
		{"both parameter forms", `{` + fn(`{"name":"f","parameters":{"type":"object"},"parametersJsonSchema":{"type":"object"}}`) + `}`,
			"* GenerateContentRequest.tools[0].function_declarations[0]: parameters and parameters_json_schema must not both be set.\n"},
		{"bad mode", `{"toolConfig":{"functionCallingConfig":{"mode":"REQUIRED"}},` + userContents("hi") + `}`,
			`Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "REQUIRED"`},
		{"negative maxOutputTokens", `{"generationConfig":{"maxOutputTokens":-1},` + userContents("hi") + `}`,
			"* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive, got -1.\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := postGemini(t, base+"/v1beta/models/g1:generateContent", tc.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, data)
			}
			assertJSON(t, data, string(marshal(t, map[string]any{"error": map[string]any{
				"code": 400, "message": tc.message, "status": "INVALID_ARGUMENT"}})))
		})
	}
}

func TestGeminiAuthAndPaths(t *testing.T) {
	s, base := startSim(t)
	body := `{` + userContents("hi") + `}`
	denied := `{"error":{"code":403,"message":"Method doesn't allow unregistered callers (callers without established identity). ` +
		`Please use API Key or other form of API consumer identity to call this API.","status":"PERMISSION_DENIED"}}`
	tests := []struct {
		name, path string
		headers    map[string]string
		status     int
		body       string
	}{
		{"no key", "/r/g/v1beta/models/g1:generateContent", nil, 403, denied},
		{"x-goog-api-key", "/r/g/v1beta/models/g1:generateContent", map[string]string{"x-goog-api-key": "k"}, 200, ""},
		{"key query parameter", "/r/g/v1beta/models/g1:generateContent?key=k", nil, 200, ""},
		{"bearer token", "/r/g/v1/models/g1:generateContent", map[string]string{"Authorization": "Bearer k"}, 200, ""},
		{"count tokens", "/r/g/v1beta/models/g1:countTokens?key=k", nil, 200,
			`{"totalTokens":1,"promptTokensDetails":[{"modality":"TEXT","tokenCount":1}]}`},
		{"unknown method", "/r/g/v1beta/models/g1:embedEverything?key=k", nil, 404,
			`{"error":{"code":404,"message":"Method \"embedEverything\" is not found for models/g1.","status":"NOT_FOUND"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := callHeaders(t, http.MethodPost, base+tc.path, body, tc.headers)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.body != "" {
				assertJSON(t, data, tc.body)
			}
		})
	}
	if got := s.Calls("g"); got != int64(len(tests)) {
		t.Errorf("Calls(g) = %d, want %d", got, len(tests))
	}
}

// geminiChunks decodes an alt=sse stream, checking its framing: only "data:" lines,
// "\r\n\r\n" between events, one candidate per chunk with index 0, the same responseId and
// modelVersion throughout, finishReason and the full usage on the last chunk only.
func geminiChunks(t *testing.T, body string) []map[string]any {
	t.Helper()
	var chunks []map[string]any
	events := parseEvents(t, body, "\r\n\r\n")
	for i, ev := range events {
		if ev.name != "" || ev.bare {
			t.Fatalf("event %d is not a data line: %+v", i, ev)
		}
		c := object(t, ev.data)
		last := i == len(events)-1
		cand := path(c, "candidates", 0)
		if len(path(c, "candidates").([]any)) != 1 || num(cand, "index") != 0 || str(c, "responseId") != str(object(t, events[0].data), "responseId") {
			t.Errorf("chunk %d: %s", i, ev.data)
		}
		if _, has := cand.(map[string]any)["finishReason"]; has != last {
			t.Errorf("chunk %d (last %v) finishReason: %s", i, last, ev.data)
		}
		if u := c["usageMetadata"].(map[string]any); !last && (len(u) != 2 || u["promptTokenCount"] != u["totalTokenCount"]) {
			t.Errorf("interim chunk %d usage %v", i, u)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// assembleGemini merges stream chunks into the response they describe: adjacent text parts of
// the same kind (thought or not) join, function calls stay whole, the empty text part that
// carries a late finishReason is dropped.
func assembleGemini(t *testing.T, chunks []map[string]any) map[string]any {
	t.Helper()
	var parts []any
	for _, c := range chunks {
		ps, _ := path(c, "candidates", 0, "content", "parts").([]any)
		for _, p := range ps {
			pm := p.(map[string]any)
			text, isText := pm["text"].(string)
			if isText && text == "" && pm["thoughtSignature"] == nil {
				continue
			}
			if n := len(parts); n > 0 && isText {
				prev := parts[n-1].(map[string]any)
				if pt, ok := prev["text"].(string); ok && prev["thought"] == pm["thought"] {
					prev["text"] = pt + text
					continue
				}
			}
			parts = append(parts, pm)
		}
	}
	out := chunks[len(chunks)-1]
	content := path(out, "candidates", 0, "content").(map[string]any)
	delete(content, "parts")
	if parts != nil {
		content["parts"] = parts
	}
	return out
}

func TestGeminiStreamMatchesNonStreaming(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, request string }{
		{"text", userContents("hello reply with 7 words cached 1")},
		{"max tokens cut", userContents("hello") + `,"generationConfig":{"maxOutputTokens":4}`},
		{"zero words", userContents("reply with 0 words")},
		{"thoughts and text", userContents("reply with 3 words") + `,"generationConfig":{"thinkingConfig":{"includeThoughts":true}}`},
		{"hidden thinking and parallel calls", `"tools":` + geminiToolsJSON + `,` + userContents("parallel") +
			`,"generationConfig":{"thinkingConfig":{"thinkingBudget":-1}}`},
		{"one call", `"tools":` + geminiToolsJSON + `,` + userContents("weather")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := geminiOK(t, base, `{`+tc.request+`}`)
			resp, data := postGemini(t, base+"/v1beta/models/g1:streamGenerateContent?alt=sse", `{`+tc.request+`}`)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			chunks := geminiChunks(t, string(data))
			withCalls := 0 // function calls arrive whole, all in one chunk
			for _, c := range chunks {
				if strings.Contains(string(marshal(t, c)), "functionCall") {
					withCalls++
				}
			}
			if withCalls > 1 {
				t.Errorf("function calls spread over %d chunks", withCalls)
			}
			got := assembleGemini(t, chunks)
			delete(got, "responseId")
			delete(want, "responseId")
			assertJSON(t, marshal(t, got), string(marshal(t, want)))

			// Without alt=sse the same chunks come as one JSON array.
			resp, data = postGemini(t, base+"/v1beta/models/g1:streamGenerateContent", `{`+tc.request+`}`)
			if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("array stream: status %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			var array []map[string]any
			if err := json.Unmarshal(data, &array); err != nil || len(array) != len(chunks) {
				t.Fatalf("array stream %q: %v (%d chunks, want %d)", data, err, len(array), len(chunks))
			}
		})
	}
}

func TestGeminiMidstreamError(t *testing.T) {
	_, base := startSim(t)
	resp, data := postGemini(t, base+"/v1beta/models/g1:streamGenerateContent?alt=sse", `{`+userContents("midstream error")+`}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	events := parseEvents(t, string(data), "\r\n\r\n")
	if len(events) != 3 || events[0].bare || events[1].bare || !events[2].bare {
		t.Fatalf("events %+v, want two data chunks and a bare error", events)
	}
	for i, w := range []string{"Simulated", " reply"} {
		if got := str(object(t, events[i].data), "candidates", 0, "content", "parts", 0, "text"); got != w {
			t.Errorf("chunk %d text %q, want %q", i, got, w)
		}
	}
	assertJSON(t, []byte(events[2].data), `{"error":{"code":503,"message":"The model is overloaded. Please try again later.","status":"UNAVAILABLE"}}`)
}
