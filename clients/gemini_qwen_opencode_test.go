package clients

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Gemini CLI speaks the Gemini API (GOOGLE_GEMINI_BASE_URL; the gateway serves /v1beta).
// Its settings narrow the tools to the shell and turn statistics, telemetry and updates off.
var gemini = &client{
	name: "gemini",
	command: func(c *cell) ([]string, []string) {
		writeSettings(c, ".gemini", "gemini-api-key")
		return []string{"gemini", "-p", prompt, "-m", c.model, "--output-format", "stream-json", "--yolo"},
			[]string{"GOOGLE_GEMINI_BASE_URL=" + c.baseURL, "GEMINI_API_KEY=" + c.key,
				"GEMINI_CLI_NO_RELAUNCH=true", "GEMINI_TELEMETRY_ENABLED=false"}
	},
	parse: parseGeminiFamily,
}

// Qwen Code (a Gemini CLI fork) speaks chat completions (OPENAI_BASE_URL, OPENAI_MODEL).
var qwen = &client{
	name: "qwen",
	command: func(c *cell) ([]string, []string) {
		writeSettings(c, ".qwen", "openai")
		// tools.core does not cover Qwen Code's agent, goal and worktree tools: a background
		// agent would report back in new turns forever, so they are excluded by name.
		args := []string{"qwen", "-p", prompt, "--output-format", "stream-json", "--yolo",
			"--core-tools", "run_shell_command", "--exclude-tools"}
		args = append(args, qwenExtraTools...)
		return args, []string{"OPENAI_BASE_URL=" + c.baseURL + "/v1", "OPENAI_API_KEY=" + c.key, "OPENAI_MODEL=" + c.model,
			"QWEN_CODE_SUPPRESS_YOLO_WARNING=1"}
	},
	parse: parseGeminiFamily,
}

// qwenExtraTools are the tools Qwen Code 0.24 offers besides its core tools.
var qwenExtraTools = []string{"agent", "get_goal", "update_goal", "tool_call", "tool_search", "list_agents",
	"send_message", "skill", "report_findings", "enter_worktree", "exit_worktree", "record_artifact", "task_stop"}

// writeSettings writes the settings Gemini CLI and Qwen Code share: the shell as the only
// tool, usage statistics, telemetry, update checks and the IDE integration off.
func writeSettings(c *cell, dir, auth string) {
	settings := map[string]any{
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true, "enableAutoUpdate": false, "enableAutoUpdateNotification": false, "checkpointing": map[string]any{"enabled": false}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false, "logPrompts": false},
		"security":  map[string]any{"auth": map[string]any{"selectedType": auth}, "folderTrust": map[string]any{"enabled": false}},
		"tools":     map[string]any{"core": []string{"run_shell_command"}, "sandbox": false},
		"ide":       map[string]any{"enabled": false},
		"ui":        map[string]any{"hideTips": true, "hideBanner": true},
	}
	b, _ := json.MarshalIndent(settings, "", "  ")
	_ = os.WriteFile(filepath.Join(mkdirQuiet(c.home, dir), "settings.json"), b, 0o600)
}

// parseGeminiFamily reads stream-json of Gemini CLI (init, message, tool_use, tool_result,
// error, result events) and of Qwen Code (Claude-style assistant/user/result messages).
func parseGeminiFamily(out []byte) transcript {
	var tr transcript
	var text strings.Builder // Gemini CLI streams the assistant text in deltas
	for _, ev := range jsonLines(out) {
		switch ev["type"] {
		case "message":
			if ev["role"] == "assistant" {
				if ev["delta"] != true {
					text.Reset()
				}
				text.WriteString(str(ev["content"]))
			}
		case "tool_use":
			tr.toolCalls = append(tr.toolCalls, str(ev["tool_name"]))
			text.Reset()
		case "tool_result":
			tr.toolOutput += str(ev["output"]) + "\n"
			if ev["status"] == "error" {
				tr.toolOutput += fmt.Sprint(ev["error"]) + "\n"
			}
		case "error":
			tr.errors = append(tr.errors, fmt.Sprint(ev["message"], ev["error"]))
		case "assistant", "user", "result":
			sub := claude.parse(mustJSONLine(ev))
			tr.toolCalls = append(tr.toolCalls, sub.toolCalls...)
			tr.toolOutput += sub.toolOutput
			tr.errors = append(tr.errors, sub.errors...)
			if sub.final != "" {
				tr.final = sub.final
			}
			if ev["type"] == "result" && ev["status"] == "error" {
				tr.errors = append(tr.errors, fmt.Sprint("result: ", ev["error"]))
			}
		}
	}
	if text.Len() > 0 {
		tr.final = text.String()
	}
	return tr
}

// opencode talks to an OpenAI-compatible provider ("modelgate", chat completions) declared
// in its config; autoupdate, sharing, the models.dev fetch and LSP downloads are off, and
// every tool but bash is disabled.
var opencode = &client{
	name: "opencode",
	command: func(c *cell) ([]string, []string) {
		config := map[string]any{
			"$schema":    "https://opencode.ai/config.json",
			"autoupdate": false,
			"share":      "disabled",
			"provider": map[string]any{"modelgate": map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "modelgate",
				"options": map[string]any{"baseURL": c.baseURL + "/v1", "apiKey": c.key},
				"models":  map[string]any{c.model: map[string]any{"name": c.model, "tool_call": true}},
			}},
			"model":       "modelgate/" + c.model,
			"small_model": "modelgate/" + c.model,
			"permission":  map[string]any{"bash": "allow"},
			"tools": map[string]any{"bash": true, "read": false, "write": false, "edit": false, "glob": false,
				"grep": false, "list": false, "patch": false, "todowrite": false, "todoread": false, "webfetch": false,
				"task": false, "skill": false, "question": false, "websearch": false, "codesearch": false, "lsp": false},
		}
		b, _ := json.Marshal(config)
		return []string{"opencode", "run", "--format", "json", "-m", "modelgate/" + c.model, prompt},
			[]string{"OPENCODE_CONFIG_CONTENT=" + string(b), "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
				"OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1", "OPENCODE_DISABLE_DEFAULT_PLUGINS=1",
				"OPENCODE_DISABLE_CLAUDE_CODE=1", "OPENCODE_DISABLE_EXTERNAL_SKILLS=1"}
	},
	parse: func(out []byte) transcript {
		var tr transcript
		for _, ev := range jsonLines(out) {
			part, _ := ev["part"].(map[string]any)
			switch ev["type"] {
			case "tool_use":
				tr.toolCalls = append(tr.toolCalls, str(part["tool"]))
				state, _ := part["state"].(map[string]any)
				tr.toolOutput += str(state["output"]) + "\n"
			case "text":
				tr.final = str(part["text"])
			case "error":
				b, _ := json.Marshal(ev["error"])
				tr.errors = append(tr.errors, string(b))
			}
		}
		return tr
	},
}

func mustJSONLine(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
