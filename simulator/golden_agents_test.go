package simulator

// Golden exchanges shaped like real coding agents' requests: the tools they offer (only the
// required arguments are filled, so nothing runs in the background) and the turns they send
// after running a tool, where text rides along with the tool results and must still get a
// text answer, or the agent calls the tool again forever.

func init() { goldens = append(goldens, agentGoldens...) }

const (
	// A shell tool like Claude Code's: optional timeout, description and background flags.
	agentBashTool = `{"name":"Bash","description":"Run a command","input_schema":{"$schema":"http://json-schema.org/draft-07/schema#",
		"type":"object","additionalProperties":false,"required":["command"],"properties":{
		"command":{"type":"string"},"timeout":{"type":"number","maximum":600000},"description":{"type":"string"},
		"run_in_background":{"type":"boolean"},"dangerouslyDisableSandbox":{"type":"boolean"}}}}`
	// A shell tool like Codex's: an argv array of at least one word, an optional enum.
	agentShellTool = `{"type":"function","name":"shell","parameters":{"type":"object","required":["command"],"properties":{
		"command":{"type":"array","items":{"type":"string"},"minItems":1},"workdir":{"type":"string"},
		"timeout_ms":{"type":"integer","minimum":1},"sandbox_permissions":{"type":"string","enum":["use_default","require_escalated"]}}}}`
	// A shell tool like Gemini CLI's, in Gemini's schema spelling, with a required flag.
	agentGeminiShellTool = `{"functionDeclarations":[{"name":"run_shell_command","parameters":{"type":"OBJECT",
		"required":["command","is_background"],"properties":{"command":{"type":"STRING"},"description":{"type":"STRING"},
		"is_background":{"type":"BOOLEAN"},"dir_path":{"type":"STRING"}}}}]}`
	// A shell tool as chat clients (Qwen Code, opencode) declare one.
	agentChatShellTool = `{"type":"function","function":{"name":"run_shell_command","parameters":{"type":"object",
		"required":["command"],"properties":{"command":{"type":"string"},"is_background":{"type":"boolean"},
		"timeout":{"type":"number","minimum":1000,"maximum":600000}}}}}`
	reminder = `<system-reminder>Remember the todo list.</system-reminder>`
)

var agentGoldens = []golden{
	{"messages_stream_agent_tool", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim",
		"max_tokens":1024,"stream":true,"tools":[` + agentBashTool + `],"messages":[{"role":"user","content":"List the files"}]}`},
	{"messages_tool_result_reminder", "/v1/messages", map[string]string{"anthropic-version": "2023-06-01"}, `{"model":"claude-sim",
		"max_tokens":1024,"tools":[` + agentBashTool + `],"messages":[{"role":"user","content":"List the files"},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01","name":"Bash","input":{"command":"sample"}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"sample ran"},
		{"type":"text","text":"` + reminder + `"}]}]}`},
	{"responses_stream_agent_tool", "/v1/responses", nil, `{"model":"gpt-sim","stream":true,"tools":[` + agentShellTool + `],
		"input":[{"role":"user","content":[{"type":"input_text","text":"List the files"}]}]}`},
	{"responses_tool_output_then_user", "/v1/responses", nil, `{"model":"gpt-sim","tools":[` + agentShellTool + `],
		"input":[{"role":"user","content":[{"type":"input_text","text":"List the files"}]},
		{"type":"function_call","call_id":"call_01","name":"shell","arguments":"{\"command\":[\"sample\"]}"},
		{"type":"function_call_output","call_id":"call_01","output":"sample ran"},
		{"role":"user","content":[{"type":"input_text","text":"` + reminder + `"}]}]}`},
	{"gemini_stream_agent_tool", "/v1beta/models/gemini-sim:streamGenerateContent?alt=sse", nil, `{"tools":[` + agentGeminiShellTool + `],
		"contents":[{"role":"user","parts":[{"text":"List the files"}]}]}`},
	{"gemini_function_response_with_text", "/v1beta/models/gemini-sim:generateContent", nil, `{"tools":[` + agentGeminiShellTool + `],
		"contents":[{"role":"user","parts":[{"text":"List the files"}]},
		{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{"command":"sample","is_background":false}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"sample ran"}}},{"text":"` + reminder + `"}]}]}`},
	{"chat_stream_agent_tool", "/v1/chat/completions", nil, `{"model":"gpt-sim","stream":true,"tools":[` + agentChatShellTool + `],
		"messages":[{"role":"user","content":"List the files"}]}`},
	{"chat_tool_result_then_user", "/v1/chat/completions", nil, `{"model":"gpt-sim","tools":[` + agentChatShellTool + `],
		"messages":[{"role":"user","content":"List the files"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_01","type":"function","function":{"name":"run_shell_command","arguments":"{\"command\":\"sample\"}"}}]},
		{"role":"tool","tool_call_id":"call_01","content":"sample ran"},{"role":"user","content":"` + reminder + `"}]}`},
}
