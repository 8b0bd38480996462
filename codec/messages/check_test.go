package messages

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestMessagesChecksRangesEnumsAndTools: a messages request out of the Messages API's
// ranges, with an unknown role, an invalid or repeated tool name, or a tool_choice
// naming a tool it does not offer is a 400 naming the field, in the messages envelope,
// before any upstream is called.
func TestMessagesChecksRangesEnumsAndTools(t *testing.T) {
	const head = `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"hi"}]`
	tool := `{"name":"get_weather","input_schema":{"type":"object"}}`
	cases := []checktest.Refusal{
		{"unknown role", `{"model":"m","max_tokens":100,"messages":[{"role":"user","content":"a"},{"role":"wizard","content":"b"}]}`,
			"messages[1].role", `messages[1].role must be one of user, assistant, system; got "wizard"`},
		{"temperature above 1", head + `,"temperature":1.5}`, "temperature", "temperature must be a number from 0 to 1; got 1.5"},
		{"temperature of 99", head + `,"temperature":99}`, "temperature", "temperature must be a number from 0 to 1; got 99"},
		{"top_p below 0", head + `,"top_p":-0.5}`, "top_p", "top_p must be a number from 0 to 1; got -0.5"},
		{"negative top_k", head + `,"top_k":-1}`, "top_k", "top_k must be an integer of at least 0; got -1"},
		{"fractional top_k", head + `,"top_k":2.5}`, "top_k", "top_k must be an integer of at least 0; got 2.5"},
		{"max_tokens 0", `{"model":"m","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, "max_tokens", "max_tokens must be an integer of at least 1; got 0"},
		{"max_tokens missing", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, "max_tokens", "max_tokens: max_tokens is required"},
		{"tool_choice names a tool not offered", head + `,"tools":[` + tool + `],"tool_choice":{"type":"tool","name":"get_time"}}`,
			"tool_choice.name", `tool_choice.name names the tool "get_time", which is not one of the tools offered (get_weather)`},
		{"tool_choice any without tools", head + `,"tool_choice":{"type":"any"}}`,
			"tool_choice.type", `tool_choice.type: type "any" needs tools, and the request offers none`},
		{"duplicate tool names", head + `,"tools":[` + tool + `,` + tool + `]}`,
			"tools[1].name", `tools[1].name "get_weather" is already the name of tools[0].name: tool names must be unique`},
		{"a tool named like a server tool", head + `,"tools":[{"type":"web_search_20250305","name":"web_search"},{"name":"web_search","input_schema":{"type":"object"}}]}`,
			"tools[1].name", `tools[1].name "web_search" is already the name of tools[0].name: tool names must be unique`},
		{"tool name with a dot", head + `,"tools":[{"name":"ns.get","input_schema":{"type":"object"}}]}`,
			"tools[0].name", `tools[0].name "ns.get" must be 1 to 128 characters of a-z, A-Z, 0-9, '_' and '-'`},
		{"tool name of 129 characters", head + `,"tools":[{"name":"` + strings.Repeat("x", 129) + `"}]}`,
			"tools[0].name", `tools[0].name "` + strings.Repeat("x", 129) + `" must be 1 to 128 characters of a-z, A-Z, 0-9, '_' and '-'`},
	}
	checkRefusals(t, cases)
}

// TestMessagesAcceptsTheBounds: the ends of each range, a tool_choice naming a server
// tool, and 128-character tool names pass.
func TestMessagesAcceptsTheBounds(t *testing.T) {
	for _, extra := range []string{
		`"temperature":0,"top_p":1,"top_k":0`,
		`"temperature":1,"top_p":0,"top_k":500`,
		`"tools":[{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"tool","name":"web_search"}`,
		`"tools":[{"name":"` + strings.Repeat("a", 128) + `"}],"tool_choice":{"type":"any"}`,
	} {
		body := `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"hi"}],` + extra + `}`
		if _, err := Format.DecodeRequest([]byte(body)); err != nil {
			t.Errorf("%s: %v", extra, err)
		}
	}
}

// checkRefusals checks each case's 400 in the messages envelope (no param member: the message
// names the field).
func checkRefusals(t *testing.T, cases []checktest.Refusal) {
	t.Helper()
	envelope := func(_, message string) string {
		return `{"type":"error","error":{"type":"invalid_request_error","message":` + checktest.Quoted(message) + `,"code":"invalid_request"}}`
	}
	checktest.Refuses(t, cases, Format.EncodeError, envelope, func(b []byte) error { _, err := Format.DecodeRequest(b); return err })
}
