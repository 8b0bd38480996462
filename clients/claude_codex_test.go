package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// allClients is the matrix's rows, in the order the table prints them.
var allClients = []*client{claude, codex, gemini, opencode, qwen}

// Claude Code speaks messages (/v1/messages; the base URL has no /v1). Its one tool is Bash,
// pre-approved; background and side calls (titles, summaries) go to the same demo model.
var claude = &client{
	name: "claude",
	command: func(c *cell) ([]string, []string) {
		return []string{"claude", "-p", prompt, "--model", c.model, "--output-format", "stream-json", "--verbose",
				"--tools", "Bash", "--allowedTools", "Bash", "--max-turns", "4"},
			[]string{
				"ANTHROPIC_BASE_URL=" + c.baseURL, "ANTHROPIC_API_KEY=" + c.key,
				"ANTHROPIC_SMALL_FAST_MODEL=" + c.model, "ANTHROPIC_DEFAULT_HAIKU_MODEL=" + c.model,
				// telemetry, error reporting, auto-update and the other non-essential calls off
				"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1",
				"DISABLE_AUTOUPDATER=1", "DISABLE_BUG_COMMAND=1", "CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1",
			}
	},
	parse: func(out []byte) transcript {
		var tr transcript
		for _, ev := range jsonLines(out) {
			msg, _ := ev["message"].(map[string]any)
			switch ev["type"] {
			case "assistant":
				if ev["error"] != nil || ev["is_api_error_message"] == true {
					tr.errors = append(tr.errors, textOf(msg["content"]))
				}
				for _, b := range blocks(msg["content"]) {
					switch b["type"] {
					case "tool_use":
						tr.toolCalls = append(tr.toolCalls, str(b["name"]))
					case "text":
						tr.final = str(b["text"])
					}
				}
			case "user":
				for _, b := range blocks(msg["content"]) {
					if b["type"] == "tool_result" {
						tr.toolOutput += textOf(b["content"]) + "\n"
					}
				}
			case "result":
				if ev["is_error"] == true {
					tr.errors = append(tr.errors, "result: "+str(ev["result"]))
				}
				if r := str(ev["result"]); r != "" {
					tr.final = r
				}
			}
		}
		return tr
	},
}

// Codex speaks responses through a custom provider (wire_api = "responses") in its
// config.toml. It cannot narrow its tool list; the simulator calls its first tool, the shell.
var codex = &client{
	name: "codex",
	command: func(c *cell) ([]string, []string) {
		codexHome := mkdirQuiet(c.home, ".codex")
		config := fmt.Sprintf(`model = %q
model_provider = "modelgate"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
log_user_prompt = false

[history]
persistence = "none"

[model_providers.modelgate]
name = "modelgate"
base_url = "%s/v1"
env_key = "MODELGATE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, c.model, c.baseURL)
		_ = os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o600)
		return []string{"codex", "exec", "--json", "--skip-git-repo-check", prompt},
			[]string{"CODEX_HOME=" + codexHome, "MODELGATE_API_KEY=" + c.key}
	},
	parse: func(out []byte) transcript {
		var tr transcript
		for _, ev := range jsonLines(out) {
			item, _ := ev["item"].(map[string]any)
			switch ev["type"] {
			case "item.completed":
				switch item["type"] {
				case "command_execution", "function_call", "mcp_tool_call":
					tr.toolCalls = append(tr.toolCalls, str(item["type"])+" "+fmt.Sprint(item["command"]))
					tr.toolOutput += str(item["aggregated_output"]) + "\n"
				case "agent_message":
					tr.final = str(item["text"])
				}
			case "turn.failed":
				e, _ := ev["error"].(map[string]any)
				tr.errors = append(tr.errors, "turn.failed: "+str(e["message"]))
			case "error":
				tr.errors = append(tr.errors, "error: "+str(ev["message"]))
			}
		}
		return tr
	},
}

// blocks is a content array of objects.
func blocks(v any) []map[string]any {
	arr, _ := v.([]any)
	var out []map[string]any
	for _, x := range arr {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// textOf is a content value as text: a string, or the text of its blocks.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var parts []string
	for _, b := range blocks(v) {
		if t, ok := b["text"].(string); ok {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n")
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
