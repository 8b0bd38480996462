package simulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const converseURL = "/model/anthropic.claude-sim-v1:0/converse"

// converseToolConfig offers the three test tools in Converse's shape.
const converseToolsJSON = `{"tools":[
	{"toolSpec":{"name":"get_weather","description":"Weather","inputSchema":{"json":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}}}},
	{"cachePoint":{"type":"default"}},
	{"toolSpec":{"name":"ping","inputSchema":{"json":{"type":"object"}}}}]}`

func TestConverseAnswers(t *testing.T) {
	_, base := startSim(t)
	tests := []struct{ name, body, want string }{
		{"text with thinking and cache", `{"system":[{"text":"Be brief."}],
			"messages":[{"role":"user","content":[{"text":"Say hello cached 2 reply with 5 words"}]}],
			"inferenceConfig":{"maxTokens":2048},"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}}`,
			`{"output":{"message":{"role":"assistant","content":[
				{"reasoningContent":{"reasoningText":{"text":"Simulated reasoning. alpha bravo charlie delta echo foxtrot","signature":"` +
				signature("thinking", "Simulated reasoning. alpha bravo charlie delta echo foxtrot") + `"}}},
				{"text":"Simulated reply from claude-sim. alpha"}]}},
			"stopReason":"end_turn","usage":{"inputTokens":8,"outputTokens":13,"totalTokens":23,"cacheReadInputTokens":2,"cacheWriteInputTokens":0},
			"metrics":{"latencyMs":0}}`},
		{"output cap", `{"messages":[{"role":"user","content":[{"text":"Tell me a story"}]}],"inferenceConfig":{"maxTokens":3}}`,
			`{"output":{"message":{"role":"assistant","content":[{"text":"Simulated reply from"}]}},"stopReason":"max_tokens",
			"usage":{"inputTokens":4,"outputTokens":3,"totalTokens":7},"metrics":{"latencyMs":0}}`},
		{"stop sequence", `{"messages":[{"role":"user","content":[{"text":"Tell me a story"}]}],"inferenceConfig":{"stopSequences":["alpha"]}}`,
			`{"output":{"message":{"role":"assistant","content":[{"text":"Simulated reply from claude-sim."}]}},"stopReason":"stop_sequence",
			"usage":{"inputTokens":4,"outputTokens":4,"totalTokens":8},"metrics":{"latencyMs":0}}`},
		{"tool results answered in text", `{"toolConfig":` + converseToolsJSON + `,"messages":[
			{"role":"user","content":[{"text":"weather?"}]},
			{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{"city":"Oslo"}}}]},
			{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"json":{"temp":"cold"}}]}},{"text":"reply with 2 words"}]}]}`,
			`{"output":{"message":{"role":"assistant","content":[{"text":"Simulated reply"}]}},"stopReason":"end_turn",
			"usage":{"inputTokens":7,"outputTokens":2,"totalTokens":9},"metrics":{"latencyMs":0}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := bedrockCall(t, base+converseURL, tc.body)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			assertJSON(t, data, tc.want)
		})
	}
}

func TestConverseToolUse(t *testing.T) {
	_, base := startSim(t)
	resp, data := bedrockCall(t, base+converseURL, `{"toolConfig":`+converseToolsJSON+`,
		"messages":[{"role":"user","content":[{"text":"check in parallel"}]}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	v := decode(t, data)
	id := str(v, "output", "message", "content", 0, "toolUse", "toolUseId")
	if !strings.HasPrefix(id, "tooluse_") || id == str(v, "output", "message", "content", 1, "toolUse", "toolUseId") {
		t.Errorf("tool use ids %s", data)
	}
	assertJSON(t, NormalizeTranscript(data), `{"output":{"message":{"role":"assistant","content":[
		{"toolUse":{"toolUseId":"tooluse_000000000000000000000001","name":"get_weather","input":{"city":"sample"}}},
		{"toolUse":{"toolUseId":"tooluse_000000000000000000000002","name":"ping","input":{}}}]}},
		"stopReason":"tool_use","usage":{"inputTokens":3,"outputTokens":3,"totalTokens":6},"metrics":{"latencyMs":0}}`)

	// The stream opens each tool block with its id and name; the input pieces concatenate to
	// the whole answer's.
	resp, data = bedrockCall(t, base+"/model/anthropic.claude-sim-v1:0/converse-stream", `{"toolConfig":`+converseToolsJSON+`,
		"toolChoice":{"any":{}},"messages":[{"role":"user","content":[{"text":"weather?"}]}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream status %d: %s", resp.StatusCode, data)
	}
	var types []string
	var input strings.Builder
	for _, f := range decodeFrames(t, data) {
		types = append(types, f.eventType)
		var p struct {
			Start struct {
				ToolUse struct{ ToolUseID, Name string }
			}
			Delta struct{ ToolUse struct{ Input string } }
		}
		_ = json.Unmarshal([]byte(f.payload), &p)
		if f.eventType == "contentBlockStart" && (p.Start.ToolUse.Name != "get_weather" || !strings.HasPrefix(p.Start.ToolUse.ToolUseID, "tooluse_")) {
			t.Errorf("contentBlockStart %s", f.payload)
		}
		input.WriteString(p.Delta.ToolUse.Input)
	}
	if got := strings.Join(types, " "); got != "messageStart contentBlockStart"+strings.Repeat(" contentBlockDelta", 4)+
		" contentBlockStop messageStop metadata" {
		t.Errorf("events %s", got)
	}
	if input.String() != weatherArgs {
		t.Errorf("input %q, want %q", input.String(), weatherArgs)
	}
}

// What Bedrock refuses, in its words: its own model constraints, its conversation rules, and
// the model's refusals relayed with their prefix.
func TestConverseValidation(t *testing.T) {
	_, base := startSim(t)
	user := `{"role":"user","content":[{"text":"hi"}]}`
	useWeather := `{"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_1","name":"get_weather","input":{"city":"Oslo"}}}]}`
	tests := []struct{ name, body, message string }{
		{"no messages", `{"messages":[]}`,
			"A conversation must start with a user message. Try again with a conversation that starts with a user message."},
		{"assistant first", `{"messages":[{"role":"assistant","content":[{"text":"hi"}]}]}`,
			"A conversation must start with a user message. Try again with a conversation that starts with a user message."},
		{"two user turns", `{"messages":[` + user + `,` + user + `]}`,
			"A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again."},
		{"unknown role", `{"messages":[` + user + `,{"role":"system","content":[{"text":"x"}]}]}`,
			"1 validation error detected: Value 'system' at 'messages.2.member.role' failed to satisfy constraint: Member must satisfy enum value set: [user, assistant]"},
		{"empty content", `{"messages":[{"role":"user","content":[]}]}`,
			"The content field in the Message object at messages.0 is empty. Add a ContentBlock object to the content field and try again."},
		{"blank text", `{"messages":[{"role":"user","content":[{"text":"  "}]}]}`,
			"The text field in the ContentBlock object at messages.0.content.0 is blank. Add text to the text field, and try again."},
		{"maxTokens 0", `{"messages":[` + user + `],"inferenceConfig":{"maxTokens":0}}`,
			"1 validation error detected: Value '0' at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1"},
		{"temperature 1.5", `{"messages":[` + user + `],"inferenceConfig":{"temperature":1.5}}`,
			"1 validation error detected: Value '1.5' at 'inferenceConfig.temperature' failed to satisfy constraint: Member must have value less than or equal to 1"},
		{"tool blocks without toolConfig", `{"messages":[` + user + `,` + useWeather + `,
			{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_1","content":[{"text":"cold"}]}}]}]}`,
			"The toolConfig field must be defined when using toolUse and toolResult content blocks."},
		{"tool result missing", `{"toolConfig":` + converseToolsJSON + `,"messages":[` + user + `,` + useWeather + `,` + user + `]}`,
			"Expected toolResult blocks at messages.2.content for the following Ids: tooluse_1"},
		{"tool result for another call", `{"toolConfig":` + converseToolsJSON + `,"messages":[` + user + `,` + useWeather + `,
			{"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_9","content":[{"text":"cold"}]}}]}]}`,
			"The model returned the following errors: messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: tooluse_9. " +
				"Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool name", `{"toolConfig":{"tools":[{"toolSpec":{"name":"get weather","inputSchema":{"json":{}}}}]},"messages":[` + user + `]}`,
			"1 validation error detected: Value 'get weather' at 'toolConfig.tools.1.member.toolSpec.name' failed to satisfy constraint: " +
				"Member must satisfy regular expression pattern: [a-zA-Z0-9_-]+ and have length between 1 and 64"},
		{"no input schema", `{"toolConfig":{"tools":[{"toolSpec":{"name":"ping"}}]},"messages":[` + user + `]}`,
			"1 validation error detected: Value 'null' at 'toolConfig.tools.1.member.toolSpec.inputSchema' failed to satisfy constraint: Member must not be null"},
		{"forced unknown tool", `{"toolConfig":{"tools":[{"toolSpec":{"name":"ping","inputSchema":{"json":{}}}}],"toolChoice":{"tool":{"name":"pong"}}},"messages":[` + user + `]}`,
			"The model returned the following errors: tool_choice.name: Tool 'pong' not found in provided tools"},
		{"thinking budget over maxTokens", `{"messages":[` + user + `],"inferenceConfig":{"maxTokens":1024},
			"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":1024}}}`,
			"The model returned the following errors: `max_tokens` must be greater than `thinking.budget_tokens`"},
		{"thinking budget too small", `{"messages":[` + user + `],"additionalModelRequestFields":{"thinking":{"type":"enabled","budget_tokens":10}}}`,
			"The model returned the following errors: thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"},
		{"reasoning sent back altered", `{"messages":[` + user + `,{"role":"assistant","content":[
			{"reasoningContent":{"reasoningText":{"text":"I changed this","signature":"` + signature("thinking", "Simulated reasoning.") + `"}}},{"text":"hi"}]},` + user + `]}`,
			"The model returned the following errors: messages.1.content.0: Invalid `signature` in `thinking` block"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, data := bedrockCall(t, base+converseURL, tc.body)
			if resp.StatusCode != http.StatusBadRequest ||
				resp.Header.Get("X-Amzn-Errortype") != "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/" {
				t.Fatalf("status %d %q: %s", resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), data)
			}
			assertJSON(t, data, `{"message":`+string(marshal(t, tc.message))+`}`)
		})
	}
	// Reasoning sent back as it came is accepted.
	text := "Simulated reasoning. alpha bravo"
	resp, data := bedrockCall(t, base+converseURL, `{"messages":[`+user+`,{"role":"assistant","content":[
		{"reasoningContent":{"reasoningText":{"text":"`+text+`","signature":"`+signature("thinking", text)+`"}}},{"text":"hi"}]},`+user+`]}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("reasoning sent back: %d %s", resp.StatusCode, data)
	}
}

// ConverseStream carries the whole answer's content and usage, event by event, each payload
// padded, latencyMs the pacing the behaviour planned.
func TestConverseStreamMatchesConverse(t *testing.T) {
	s, base := startSim(t)
	s.SetBehavior("paced", Behavior{TokensPerSecond: 1000})
	body := `{"messages":[{"role":"user","content":[{"text":"reply with 4 words"}]}],
		"additionalModelRequestFields":{"thinking":{"type":"adaptive"}}}`
	_, whole := bedrockCall(t, base+"/r/paced"+converseURL, body)
	resp, data := bedrockCall(t, base+"/r/paced/model/anthropic.claude-sim-v1:0/converse-stream", body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/vnd.amazon.eventstream" {
		t.Fatalf("status %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	frames := decodeFrames(t, data)
	var reasoning, signatureDelta, text strings.Builder
	var types []string
	for i, f := range frames {
		types = append(types, f.eventType)
		if f.messageType != "event" || f.contentType != "application/json" {
			t.Errorf("frame %d headers %+v", i, f)
		}
		p := object(t, f.payload)
		if p["p"] != padding(i) {
			t.Errorf("frame %d padding %v, want %q", i, p["p"], padding(i))
		}
		reasoning.WriteString(str(p, "delta", "reasoningContent", "text"))
		signatureDelta.WriteString(str(p, "delta", "reasoningContent", "signature"))
		text.WriteString(str(p, "delta", "text"))
		switch f.eventType {
		case "messageStop":
			if str(p, "stopReason") != str(decode(t, whole), "stopReason") {
				t.Errorf("messageStop %s", f.payload)
			}
		case "metadata":
			assertJSON(t, marshal(t, p["usage"]), string(marshal(t, path(decode(t, whole), "usage"))))
			if got, want := num(p, "metrics", "latencyMs"), len(frames)-1; got != want { // one event per millisecond
				t.Errorf("latencyMs %d, want %d", got, want)
			}
		}
	}
	w := decode(t, whole)
	if reasoning.String() != str(w, "output", "message", "content", 0, "reasoningContent", "reasoningText", "text") ||
		signatureDelta.String() != str(w, "output", "message", "content", 0, "reasoningContent", "reasoningText", "signature") ||
		text.String() != str(w, "output", "message", "content", 1, "text") || text.String() != "Simulated reply from claude-sim." {
		t.Errorf("streamed reasoning %q, signature %q, text %q; whole answer %s", reasoning.String(), signatureDelta.String(), text.String(), whole)
	}
	want := "messageStart" + strings.Repeat(" contentBlockDelta", 9) + " contentBlockStop" + strings.Repeat(" contentBlockDelta", 4) +
		" contentBlockStop messageStop metadata"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events\n%s\nwant\n%s", got, want)
	}
}
