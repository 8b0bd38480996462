package simulator

import (
	"net/http"
	"strings"
	"testing"
)

// TestSimulatorRefusesWhatProvidersRefuse: each simulated provider answers a request out of its
// ranges, with an unknown role, an empty input, a bad or repeated tool name, a choice of a tool
// it was not given, or a media URL it would not fetch with its own 400 and envelope, so a
// gateway that lets such a request through fails its tests.
func TestSimulatorRefusesWhatProvidersRefuse(t *testing.T) {
	_, base := startSim(t)
	const chatHead = `{"model":"m","messages":[{"role":"user","content":"hi"}]`
	const respHead = `{"model":"m","input":"hi"`
	const msgHead = `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]`
	const gemHead = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]`
	openAIErr := func(param, code, message string) string {
		c := `null`
		if code != "" {
			c = `"` + code + `"`
		}
		return `{"error":{"message":` + quote(message) + `,"type":"invalid_request_error","param":"` + param + `","code":` + c + `}}`
	}
	anthropicErr := func(message string) string {
		return `{"type":"error","error":{"type":"invalid_request_error","message":` + quote(message) + `}}`
	}
	geminiErr := func(message string) string {
		return `{"error":{"code":400,"message":` + quote(message) + `,"status":"INVALID_ARGUMENT"}}`
	}
	cases := []struct {
		name, path, body, want string
		post                   func(*testing.T, string, string) (*http.Response, []byte)
	}{
		{"chat: unknown role", "/v1/chat/completions", `{"model":"m","messages":[{"role":"wizard","content":"hi"}]}`,
			openAIErr("messages[0].role", "invalid_value", "Invalid value: 'wizard'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'."), post},
		{"chat: temperature of 99", "/v1/chat/completions", chatHead + `,"temperature":99}`,
			openAIErr("temperature", "decimal_above_max_value", "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 99 instead."), post},
		{"chat: n of 1000", "/v1/chat/completions", chatHead + `,"n":1000}`,
			openAIErr("n", "integer_above_max_value", "Invalid 'n': integer above maximum value. Expected a value <= 128, but got 1000 instead."), post},
		{"chat: presence_penalty below -2", "/v1/chat/completions", chatHead + `,"presence_penalty":-3}`,
			openAIErr("presence_penalty", "decimal_below_min_value", "Invalid 'presence_penalty': decimal below minimum value. Expected a value >= -2, but got -3 instead."), post},
		{"chat: fractional n", "/v1/chat/completions", chatHead + `,"n":1.5}`,
			openAIErr("n", "invalid_type", "Invalid type for 'n': expected an integer, but got a decimal number instead."), post},
		{"chat: top_logprobs above 20", "/v1/chat/completions", chatHead + `,"top_logprobs":21}`,
			openAIErr("top_logprobs", "integer_above_max_value", "Invalid 'top_logprobs': integer above maximum value. Expected a value <= 20, but got 21 instead."), post},
		{"chat: tool name with a space", "/v1/chat/completions", chatHead + `,"tools":[{"type":"function","function":{"name":"get weather"}}]}`,
			openAIErr("tools[0].function.name", "invalid_value", "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."), post},
		{"chat: tool name too long", "/v1/chat/completions", chatHead + `,"tools":[{"type":"function","function":{"name":"` + strings.Repeat("a", 65) + `"}}]}`,
			openAIErr("tools[0].function.name", "string_above_max_length", "Invalid 'tools[0].function.name': string too long. Expected a string with maximum length 64, but got a string with length 65 instead."), post},
		{"chat: duplicate tool names", "/v1/chat/completions", chatHead + `,"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"f"}}]}`,
			openAIErr("tools", "", "Invalid 'tools': duplicate tool name 'f'. Each tool must have a unique name."), post},
		{"embeddings: dimensions of 0", "/v1/embeddings", `{"model":"m","input":"hi","dimensions":0}`,
			openAIErr("dimensions", "integer_below_min_value", "Invalid 'dimensions': integer below minimum value. Expected a value >= 1, but got 0 instead."), post},
		{"responses: empty input array", "/v1/responses", `{"model":"m","input":[]}`,
			openAIErr("input", "", "Invalid 'input': empty array. Expected an array with minimum length 1."), post},
		{"responses: empty input string", "/v1/responses", `{"model":"m","input":""}`,
			openAIErr("input", "", "Invalid 'input': empty string. Expected a string with minimum length 1."), post},
		{"responses: top_p above 1", "/v1/responses", respHead + `,"top_p":2}`,
			openAIErr("top_p", "decimal_above_max_value", "Invalid 'top_p': decimal above maximum value. Expected a value <= 1, but got 2 instead."), post},
		{"responses: duplicate tool names", "/v1/responses", respHead + `,"tools":[{"type":"function","name":"f"},{"type":"custom","name":"f"}]}`,
			openAIErr("tools", "", "Invalid 'tools': duplicate tool name 'f'. Each tool must have a unique name."), post},
		{"messages: top_p above 1", "/v1/messages", msgHead + `,"top_p":1.5}`, anthropicErr("top_p: Input should be less than or equal to 1"), postMessages},
		{"messages: negative top_k", "/v1/messages", msgHead + `,"top_k":-1}`, anthropicErr("top_k: Input should be greater than or equal to 0"), postMessages},
		{"messages: tool name with a dot", "/v1/messages", msgHead + `,"tools":[{"name":"a.b","input_schema":{"type":"object"}}]}`,
			anthropicErr("tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"), postMessages},
		{"messages: duplicate tool names", "/v1/messages", msgHead + `,"tools":[{"name":"f","input_schema":{"type":"object"}},{"name":"f","input_schema":{"type":"object"}}]}`,
			anthropicErr(`tools: Tool names must be unique. "f" is used more than once.`), postMessages},
		{"gemini: temperature of 99", "/v1beta/models/g:generateContent", gemHead + `,"generationConfig":{"temperature":99}}`,
			geminiErr("Unable to submit request because it has a temperature value of 99 but the supported range is from 0 (inclusive) to 2 (inclusive). Update the value and try again."), postGemini},
		{"gemini: topK of 0", "/v1beta/models/g:generateContent", gemHead + `,"generationConfig":{"topK":0}}`,
			geminiErr("Unable to submit request because it has a topK value of 0 but the supported range is from 1 (inclusive). Update the value and try again."), postGemini},
		{"gemini: duplicate declarations", "/v1beta/models/g:generateContent", gemHead + `,"tools":[{"functionDeclarations":[{"name":"f"},{"name":"f"}]}]}`,
			geminiErr("Duplicate function declaration found: f"), postGemini},
		{"gemini: allowed name without a declaration", "/v1beta/models/g:generateContent", gemHead + `,"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`,
			geminiErr("* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: \"g\" is not the name of a function declaration.\n"), postGemini},
		{"videos: a local file as the first frame", "/v1/videos", `{"model":"v","prompt":"p","mode":"keyframe","first_frame":"file:///etc/passwd"}`,
			openAIErr("first_frame", "invalid_url", "Invalid 'first_frame': expected an http(s) URL or a base64 data URL, got 'file:///etc/passwd'."), post},
		{"videos: a reference image over ftp", "/v1/videos", `{"model":"v","prompt":"p","mode":"reference","images":["https://x/a.png","ftp://x/b.png"]}`,
			openAIErr("images", "invalid_url", "Invalid 'images': expected an http(s) URL or a base64 data URL, got 'ftp://x/b.png'."), post},
		{"videos: mode text with a frame", "/v1/videos", `{"model":"v","prompt":"p","mode":"text","last_frame":"https://x/a.png"}`,
			openAIErr("last_frame", "", "Invalid 'last_frame': not allowed with mode 'text'."), post},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, data := c.post(t, base+c.path, c.body)
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("%d %s", resp.StatusCode, data)
			}
			assertJSON(t, without(t, data, "request_id"), c.want)
		})
	}
}

// TestSimulatorAcceptsTheBounds: the ends of each range and well-formed names and URLs
// are answered.
func TestSimulatorAcceptsTheBounds(t *testing.T) {
	_, base := startSim(t)
	cases := []struct {
		path, body string
		post       func(*testing.T, string, string) (*http.Response, []byte)
	}{
		{"/v1/chat/completions", `{"model":"m","messages":[{"role":"developer","content":"x"},{"role":"user","content":"hi"}],"temperature":2,"top_p":0,"n":128,"presence_penalty":-2,"top_logprobs":20,"tools":[{"type":"function","function":{"name":"a-b_9"}}]}`, post},
		{"/v1/responses", `{"model":"m","input":"hi","temperature":0,"top_p":1,"tools":[{"type":"function","name":"f"},{"type":"web_search"}]}`, post},
		{"/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"top_p":1,"top_k":0,"tools":[{"name":"` + strings.Repeat("a", 128) + `","input_schema":{"type":"object"}}]}`, postMessages},
		{"/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"temperature":2,"topK":1.0,"candidateCount":1},"tools":[{"functionDeclarations":[{"name":"mcp.fs:read"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["mcp.fs:read"]}}}`, postGemini},
		{"/v1/videos", `{"model":"v","prompt":"p","mode":"keyframe","first_frame":"https://x/a.png","last_frame":"data:image/png;base64,iVBO"}`, post},
	}
	for _, c := range cases {
		if resp, data := c.post(t, base+c.path, c.body); resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, data)
		}
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
