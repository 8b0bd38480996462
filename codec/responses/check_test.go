package responses

import (
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestResponsesChecksRangesEnumsAndTools: out-of-range members, an unknown role, an empty
// input, a bad or repeated tool name and a tool_choice naming a tool that is not offered are
// the gateway's 400 in the OpenAI envelope, naming the field.
func TestResponsesChecksRangesEnumsAndTools(t *testing.T) {
	const head = `{"model":"m","input":"hi"`
	fn := `{"type":"function","name":"get_weather","parameters":{"type":"object"}}`
	cases := []checktest.Refusal{
		{"empty input array", `{"model":"m","input":[]}`, "input", "input must not be empty: send a string or an array of input items"},
		{"empty input string", `{"model":"m","input":""}`, "input", "input must not be empty: send a string or an array of input items"},
		{"empty input beside instructions", `{"model":"m","instructions":"be brief","input":[]}`, "input", "input must not be empty: send a string or an array of input items"},
		{"unknown role", `{"model":"m","input":[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]}`,
			"input[1].role", `input[1].role must be one of user, assistant, system, developer; got "wizard"`},
		{"temperature of 99", head + `,"temperature":99}`, "temperature", "temperature must be a number from 0 to 2; got 99"},
		{"top_p above 1", head + `,"top_p":1.01}`, "top_p", "top_p must be a number from 0 to 1; got 1.01"},
		{"top_logprobs above 20", head + `,"top_logprobs":25}`, "top_logprobs", "top_logprobs must be an integer from 0 to 20; got 25"},
		{"max_output_tokens below 16", head + `,"max_output_tokens":10}`, "max_output_tokens", "max_output_tokens must be an integer of at least 16; got 10"},
		{"unknown truncation", head + `,"truncation":"sometimes"}`, "truncation", `truncation must be one of auto, disabled; got "sometimes"`},
		{"unknown verbosity", head + `,"text":{"verbosity":"loud"}}`, "text.verbosity", `text.verbosity must be one of low, medium, high; got "loud"`},
		{"tool_choice names a tool not offered", head + `,"tools":[` + fn + `],"tool_choice":{"type":"function","name":"get_time"}}`,
			"tool_choice.name", `tool_choice.name names the tool "get_time", which is not one of the tools offered (get_weather)`},
		{"allowed tool not offered", head + `,"tools":[` + fn + `],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"x"}]}}`,
			"tool_choice.tools[0].name", `tool_choice.tools[0].name names the tool "x", which is not one of the tools offered (get_weather)`},
		{"tool_choice required without tools", head + `,"tool_choice":"required"}`, "tool_choice", `tool_choice "required" needs tools, and the request offers none`},
		{"duplicate tool names", head + `,"tools":[` + fn + `,{"type":"custom","name":"get_weather"}]}`,
			"tools[1].name", `tools[1].name "get_weather" is already the name of tools[0].name: tool names must be unique`},
		{"tool name with a colon", head + `,"tools":[{"type":"function","name":"ns:get"}]}`,
			"tools[0].name", `tools[0].name "ns:get" must be 1 to 64 characters of a-z, A-Z, 0-9, '_' and '-'`},
	}
	checkRefusals(t, cases)
}

// TestResponsesAcceptsTheBounds: the ends of each range, hosted tools and a choice among
// them pass.
func TestResponsesAcceptsTheBounds(t *testing.T) {
	for _, extra := range []string{
		`"temperature":2,"top_p":0,"top_logprobs":0,"max_output_tokens":16,"truncation":"auto"`,
		`"temperature":0,"top_p":1,"top_logprobs":20,"text":{"verbosity":"low"}`,
		`"tools":[{"type":"web_search"}],"tool_choice":"required"`,
		`"tools":[{"type":"function","name":"a-b_9"}],"tool_choice":{"type":"function","name":"a-b_9"}`,
	} {
		body := `{"model":"m","input":[{"role":"developer","content":"x"},{"role":"user","content":"hi"}],` + extra + `}`
		if _, err := Format.DecodeRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

// checkRefusals checks each case's 400 in the OpenAI envelope.
func checkRefusals(t *testing.T, cases []checktest.Refusal) {
	t.Helper()
	envelope := func(param, message string) string {
		return `{"error":{"message":` + checktest.Quoted(message) + `,"type":"invalid_request_error","param":"` + param + `","code":"invalid_request"}}`
	}
	checktest.Refuses(t, cases, Format.EncodeError, envelope, func(b []byte) error { _, err := Format.DecodeRequest(b); return err })
}
