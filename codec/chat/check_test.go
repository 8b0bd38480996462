package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

const userTurn = `"messages":[{"role":"user","content":"hi"}]`

// TestChatChecksRangesEnumsAndTools: the light parse of the hot path and the full
// decode refuse the same requests with the same 400, naming the field and what it
// allows, in the chat envelope.
func TestChatChecksRangesEnumsAndTools(t *testing.T) {
	weather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}`
	cases := []checktest.Refusal{
		{"unknown role", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]}`,
			"messages[1].role", `messages[1].role must be one of system, developer, user, assistant, tool, function; got "wizard"`},
		{"role not a string", `{"model":"m","messages":[{"role":7,"content":"a"}]}`,
			"messages[0].role", `messages[0].role must be a string: one of system, developer, user, assistant, tool, function`},
		{"message not an object", `{"model":"m","messages":["hi"]}`,
			"messages[0]", `messages[0] must be a message object {"role", "content"}; got "hi"`},
		{"empty messages", `{"model":"m","messages":[]}`, "messages", "messages must contain at least one message"},
		{"temperature above 2", `{"model":"m",` + userTurn + `,"temperature":99}`, "temperature", "temperature must be a number from 0 to 2; got 99"},
		{"temperature a string", `{"model":"m",` + userTurn + `,"temperature":"hot"}`, "temperature", `temperature must be a number from 0 to 2; got "hot"`},
		{"top_p above 1", `{"model":"m",` + userTurn + `,"top_p":1.5}`, "top_p", "top_p must be a number from 0 to 1; got 1.5"},
		{"negative top_k", `{"model":"m",` + userTurn + `,"top_k":-1}`, "top_k", "top_k must be an integer of at least 0; got -1"},
		{"n of 1000", `{"model":"m",` + userTurn + `,"n":1000}`, "n", "n must be an integer from 1 to 128; got 1000"},
		{"n of 0", `{"model":"m",` + userTurn + `,"n":0}`, "n", "n must be an integer from 1 to 128; got 0"},
		{"fractional n", `{"model":"m",` + userTurn + `,"n":2.5}`, "n", "n must be an integer from 1 to 128; got 2.5"},
		{"presence_penalty below -2", `{"model":"m",` + userTurn + `,"presence_penalty":-3}`, "presence_penalty", "presence_penalty must be a number from -2 to 2; got -3"},
		{"frequency_penalty above 2", `{"model":"m",` + userTurn + `,"frequency_penalty":2.5}`, "frequency_penalty", "frequency_penalty must be a number from -2 to 2; got 2.5"},
		{"max_tokens 0", `{"model":"m",` + userTurn + `,"max_tokens":0}`, "max_tokens", "max_tokens must be an integer of at least 1; got 0"},
		{"max_completion_tokens negative", `{"model":"m",` + userTurn + `,"max_completion_tokens":-5}`, "max_completion_tokens", "max_completion_tokens must be an integer of at least 1; got -5"},
		{"max_tokens a string", `{"model":"m",` + userTurn + `,"max_tokens":"100"}`, "max_tokens", `max_tokens must be an integer of at least 1; got "100"`},
		{"five stop sequences", `{"model":"m",` + userTurn + `,"stop":["a","b","c","d","e"]}`, "stop", `stop must be a string or an array of at most 4 strings; got ["a","b","c","d","e"]`},
		{"stop a number", `{"model":"m",` + userTurn + `,"stop":5}`, "stop", "stop must be a string or an array of at most 4 strings; got 5"},
		{"logprobs not a boolean", `{"model":"m",` + userTurn + `,"logprobs":"yes"}`, "logprobs", "logprobs must be a boolean"},
		{"top_logprobs above 20", `{"model":"m",` + userTurn + `,"top_logprobs":21}`, "top_logprobs", "top_logprobs must be an integer from 0 to 20; got 21"},
		{"tool_choice names a tool not offered", `{"model":"m",` + userTurn + `,"tools":[` + weather + `],"tool_choice":{"type":"function","function":{"name":"get_time"}}}`,
			"tool_choice.function.name", `tool_choice.function.name names the tool "get_time", which is not one of the tools offered (get_weather)`},
		{"tool_choice names a tool without tools", `{"model":"m",` + userTurn + `,"tool_choice":{"type":"function","function":{"name":"get_time"}}}`,
			"tool_choice.function.name", `tool_choice.function.name names the tool "get_time", but the request offers no tools`},
		{"tool_choice required without tools", `{"model":"m",` + userTurn + `,"tool_choice":"required"}`,
			"tool_choice", `tool_choice "required" needs tools, and the request offers none`},
		{"unknown tool_choice mode", `{"model":"m",` + userTurn + `,"tools":[` + weather + `],"tool_choice":"sometimes"}`,
			"tool_choice", `tool_choice must be one of none, auto, required; got "sometimes"`},
		{"allowed_tools names a tool not offered", `{"model":"m",` + userTurn + `,"tools":[` + weather + `],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"auto","tools":[{"type":"function","function":{"name":"x"}}]}}}`,
			"tool_choice.allowed_tools.tools[0].function.name", `tool_choice.allowed_tools.tools[0].function.name names the tool "x", which is not one of the tools offered (get_weather)`},
		{"duplicate tool names", `{"model":"m",` + userTurn + `,"tools":[` + weather + `,` + weather + `]}`,
			"tools[1].function.name", `tools[1].function.name "get_weather" is already the name of tools[0].function.name: tool names must be unique`},
		{"tool name with a space", `{"model":"m",` + userTurn + `,"tools":[{"type":"function","function":{"name":"get weather"}}]}`,
			"tools[0].function.name", `tools[0].function.name "get weather" must be 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-'`},
		{"tool name of 65 characters", `{"model":"m",` + userTurn + `,"tools":[{"type":"custom","custom":{"name":"` + strings.Repeat("a", 65) + `"}}]}`,
			"tools[0].custom.name", `tools[0].custom.name "` + strings.Repeat("a", 65) + `" must be 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-'`},
		{"tool not an object", `{"model":"m",` + userTurn + `,"tools":[7]}`, "tools[0]", "tools[0] must be a tool object; got 7"},
		{"function_call names no function", `{"model":"m",` + userTurn + `,"functions":[{"name":"f"}],"function_call":{"name":"g"}}`,
			"function_call.name", `function_call.name names the tool "g", which is not one of the tools offered (f)`},
		{"body not JSON", `{"model":`, "", "the request body must be a JSON object: it is not valid JSON (unexpected end of JSON input at byte 9)"},
		{"body an array", `[1]`, "", "the request body must be a JSON object; got [1]"},
	}
	checkRefusals(t, cases)
}

// TestChatAcceptsTheBounds: the ends of every range, and tool kinds a provider defines
// (judged by the route), pass.
func TestChatAcceptsTheBounds(t *testing.T) {
	for _, extra := range []string{
		`"temperature":2,"top_p":0,"n":128,"presence_penalty":-2,"frequency_penalty":2,"top_logprobs":20,"logprobs":true,"max_tokens":1,"top_k":0`,
		`"temperature":0,"top_p":1,"n":1,"max_completion_tokens":100000,"stop":["a","b","c","d"]`,
		`"temperature":null,"n":null,"stop":"END","tool_choice":"none"`,
		`"tools":[{"type":"function","function":{"name":"a-b_C9"}},{"type":"web_search"}],"tool_choice":{"type":"function","function":{"name":"a-b_C9"}}`,
		`"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"allowed_tools","allowed_tools":{"mode":"required","tools":[{"type":"function","function":{"name":"f"}}]}}`,
		`"functions":[{"name":"f"}],"function_call":{"name":"f"}`,
	} {
		body := `{"model":"m","messages":[{"role":"developer","content":"x"},{"role":"user","content":"hi"}],` + extra + `}`
		if _, err := ParseRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func paramJSON(p string) string {
	if p == "" {
		return "null"
	}
	return quoteJSON(p)
}

// checkRefusals checks that the light parse of the hot path and the full decode refuse each
// case with the same 400, in the chat envelope.
func checkRefusals(t *testing.T, cases []checktest.Refusal) {
	t.Helper()
	envelope := func(param, message string) string {
		return `{"error":{"message":` + quoteJSON(message) + `,"type":"invalid_request_error","param":` + paramJSON(param) + `,"code":"invalid_request"}}`
	}
	checktest.Refuses(t, cases, EncodeError, envelope,
		func(b []byte) error { _, err := ParseRequest(b); return err },
		func(b []byte) error { _, err := DecodeIR(b); return err })
}
