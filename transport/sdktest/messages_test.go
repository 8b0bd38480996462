package sdktest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// messagesTools are the two tools in anthropic-sdk-go's shape.
func messagesTools() []anthropic.ToolUnionParam {
	tool := func(name, desc string, schema map[string]any) anthropic.ToolUnionParam {
		u := anthropic.ToolUnionParamOfTool(anthropic.ToolInputSchemaParam{
			Properties: schema["properties"], Required: schema["required"].([]string)}, name)
		u.OfTool.Description = anthropic.String(desc)
		return u
	}
	return []anthropic.ToolUnionParam{
		tool("get_weather", "Weather for a city", weatherSchema),
		tool("get_time", "Time in a zone", timeSchema),
	}
}

// checkToolUses asserts the two tool_use blocks: names, inputs as exact maps, distinct ids.
func checkToolUses(t *testing.T, msg *anthropic.Message) {
	t.Helper()
	var uses []anthropic.ContentBlockUnion
	for _, b := range msg.Content {
		switch b.Type {
		case "tool_use":
			uses = append(uses, b)
		case "text":
			if b.Text == "" {
				t.Errorf("empty text block in %s", msg.RawJSON())
			}
		case "thinking", "redacted_thinking":
		default:
			t.Errorf("unexpected %s block in a tool answer: %s", b.Type, b.RawJSON())
		}
	}
	if len(uses) != len(wantCalls) {
		t.Fatalf("got %d tool_use blocks, want %d: %s", len(uses), len(wantCalls), msg.RawJSON())
	}
	var ids []string
	for i, b := range uses {
		if b.Name != wantCalls[i].name {
			t.Errorf("tool_use %d name = %q, want %q", i, b.Name, wantCalls[i].name)
		}
		var got, want map[string]any
		if err := json.Unmarshal(b.Input, &got); err != nil {
			t.Errorf("tool_use %d input %q is not a JSON object: %v", i, b.Input, err)
		}
		_ = json.Unmarshal([]byte(wantCalls[i].args), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("tool_use %d input = %s, want %s", i, b.Input, wantCalls[i].args)
		}
		if !strings.HasPrefix(b.ID, "toolu_") && !strings.HasPrefix(b.ID, "call_") && !strings.HasPrefix(b.ID, "fc_") {
			t.Logf("tool_use %d id %q has an unusual prefix", i, b.ID)
		}
		ids = append(ids, b.ID)
	}
	checkDistinct(t, "tool_use ids", ids)
	if msg.StopReason != anthropic.StopReasonToolUse {
		t.Errorf("stop_reason = %q, want tool_use", msg.StopReason)
	}
}

// textOf is the concatenated text of the message's text blocks; it fails on other blocks
// except thinking.
func textOf(t *testing.T, msg *anthropic.Message) string {
	t.Helper()
	var text []string
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "thinking", "redacted_thinking":
		default:
			t.Errorf("unexpected %s block: %s", b.Type, b.RawJSON())
		}
	}
	return strings.Join(text, "")
}

// accumulate reads a whole messages stream into one Message with the SDK's Accumulate.
func accumulate(t *testing.T, client anthropic.Client, p anthropic.MessageNewParams) (*anthropic.Message, []string, error) {
	t.Helper()
	stream := client.Messages.NewStreaming(ctx(t), p)
	defer stream.Close()
	var msg anthropic.Message
	var types []string
	for stream.Next() {
		ev := stream.Current()
		types = append(types, ev.Type)
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate(%s): %v", ev.RawJSON(), err)
		}
	}
	return &msg, types, stream.Err()
}

// TestMessagesSDK drives /v1/messages with anthropic-sdk-go against every upstream format.
func TestMessagesSDK(t *testing.T) {
	env := startEnv(t)
	client := anthropicClient(env, env.Key)

	forEachModel(t, env, func(t *testing.T, m model) {
		const prompt = "Greet me and reply with 5 words."
		params := anthropic.MessageNewParams{
			Model:     anthropic.Model(m.ID),
			MaxTokens: 256,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
		}
		var plain string

		t.Run("text", func(t *testing.T) {
			msg, err := client.Messages.New(ctx(t), params)
			if err != nil {
				t.Fatal(err)
			}
			if len(msg.Content) != 1 || msg.Content[0].Type != "text" {
				t.Fatalf("content = %s, want one text block", msg.RawJSON())
			}
			checkReply(t, m, msg.Content[0].Text, 5)
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason = %q, want end_turn", msg.StopReason)
			}
			if string(msg.Model) != m.ID {
				t.Errorf("model = %q, want %q", msg.Model, m.ID)
			}
			if !strings.HasPrefix(msg.ID, "msg_") {
				t.Errorf("id = %q, want a msg_ id", msg.ID)
			}
			if msg.Role != "assistant" || msg.Type != "message" {
				t.Errorf("role/type = %q/%q, want assistant/message", msg.Role, msg.Type)
			}
			if want := int64(len(strings.Fields(prompt))); msg.Usage.InputTokens != want {
				t.Errorf("usage input_tokens = %d, want %d", msg.Usage.InputTokens, want)
			}
			if msg.Usage.OutputTokens != 5 {
				t.Errorf("usage output_tokens = %d, want 5", msg.Usage.OutputTokens)
			}
			plain = msg.Content[0].Text
		})

		t.Run("stream", func(t *testing.T) {
			if plain == "" {
				t.Skip("needs the plain answer")
			}
			msg, types, err := accumulate(t, client, params)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if len(types) < 5 || types[0] != "message_start" || types[len(types)-1] != "message_stop" {
				t.Errorf("event types = %q, want message_start … message_stop", types)
			}
			if len(msg.Content) != 1 || msg.Content[0].Type != "text" {
				t.Fatalf("accumulated content = %s, want one text block", msg.RawJSON())
			}
			sameReply(t, m, msg.Content[0].Text, plain, 5)
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason = %q, want end_turn", msg.StopReason)
			}
			if msg.Usage.OutputTokens != 5 {
				t.Errorf("usage output_tokens = %d, want 5", msg.Usage.OutputTokens)
			}
			if want := int64(len(strings.Fields(prompt))); msg.Usage.InputTokens != want {
				t.Errorf("usage input_tokens = %d, want %d", msg.Usage.InputTokens, want)
			}
			if string(msg.Model) != m.ID {
				t.Errorf("model = %q, want %q", msg.Model, m.ID)
			}
		})

		t.Run("system", func(t *testing.T) {
			p := params
			p.System = []anthropic.TextBlockParam{{Text: "You are terse."}, {Text: "Answer in plain English."}}
			msg, err := client.Messages.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, textOf(t, msg), 5)
			if want := int64(3 + 4 + len(strings.Fields(prompt))); msg.Usage.InputTokens != want {
				t.Errorf("usage input_tokens = %d, want %d (system blocks + prompt)", msg.Usage.InputTokens, want)
			}
		})

		t.Run("max_tokens", func(t *testing.T) {
			p := params
			p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Reply with 30 words."))}
			p.MaxTokens = 20
			msg, err := client.Messages.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, textOf(t, msg), 20)
			if msg.StopReason != anthropic.StopReasonMaxTokens {
				t.Errorf("stop_reason = %q, want max_tokens", msg.StopReason)
			}
			if msg.Usage.OutputTokens != 20 {
				t.Errorf("usage output_tokens = %d, want 20", msg.Usage.OutputTokens)
			}
		})

		t.Run("cached_usage", func(t *testing.T) {
			const cachedPrompt = "Greet me, cached 3, and reply with 5 words."
			p := params
			p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(cachedPrompt))}
			msg, err := client.Messages.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			// Anthropic's input_tokens exclude the cache reads.
			u := msg.Usage
			if want := int64(len(strings.Fields(cachedPrompt)) - 3); u.InputTokens != want || u.CacheReadInputTokens != 3 {
				t.Errorf("usage input_tokens/cache_read_input_tokens = %d/%d, want %d/3; %s", u.InputTokens, u.CacheReadInputTokens, want, u.RawJSON())
			}
		})

		t.Run("stop_sequence", func(t *testing.T) {
			p := params
			p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Reply with 10 words."))}
			p.StopSequences = []string{"bravo"}
			var resp *http.Response
			msg, err := client.Messages.New(ctx(t), p, option.WithResponseInto(&resp))
			if err != nil {
				t.Fatal(err)
			}
			switch m.Format {
			case catalog.FormatResponses:
				// The Responses API has no stop sequences: dropped, and said so.
				checkReply(t, m, textOf(t, msg), 10)
				if d := resp.Header.Get("X-Modelgate-Dropped"); !strings.Contains(d, "stop") {
					t.Errorf("X-Modelgate-Dropped = %q, want it to name the stop sequences", d)
				}
			case catalog.FormatMessages:
				checkReply(t, m, textOf(t, msg), 5) // "Simulated reply from <model>. alpha", cut before "bravo"
				if msg.StopReason != anthropic.StopReasonStopSequence || msg.StopSequence != "bravo" {
					t.Errorf("stop_reason/stop_sequence = %q/%q, want stop_sequence/bravo", msg.StopReason, msg.StopSequence)
				}
			default:
				// Chat and Gemini answers do not say which stop sequence ended them (finish
				// reason "stop"/STOP), so end_turn is all the gateway can report.
				checkReply(t, m, textOf(t, msg), 5)
				if msg.StopReason != anthropic.StopReasonEndTurn && msg.StopReason != anthropic.StopReasonStopSequence {
					t.Errorf("stop_reason = %q, want end_turn or stop_sequence", msg.StopReason)
				}
			}
		})

		toolPrompt := parallelPrompt + " Then reply with 4 words."
		toolParams := params
		toolParams.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(toolPrompt))}
		toolParams.Tools = messagesTools()
		var toolAnswer *anthropic.Message

		t.Run("tools", func(t *testing.T) {
			msg, err := client.Messages.New(ctx(t), toolParams)
			if err != nil {
				t.Fatal(err)
			}
			checkToolUses(t, msg)
			if msg.Usage.OutputTokens <= 0 || msg.Usage.InputTokens <= 0 {
				t.Errorf("usage = %+v, want positive input and output tokens", msg.Usage)
			}
			toolAnswer = msg
		})

		t.Run("tools_stream", func(t *testing.T) {
			msg, _, err := accumulate(t, client, toolParams)
			if err != nil {
				t.Fatalf("stream error: %v", err)
			}
			checkToolUses(t, msg)
		})

		t.Run("tool_round_trip", func(t *testing.T) {
			if toolAnswer == nil {
				t.Skip("needs the tool calls")
			}
			var ids []string
			for _, b := range toolAnswer.Content {
				if b.Type == "tool_use" {
					ids = append(ids, b.ID)
				}
			}
			if len(ids) != 2 {
				t.Skip("needs two tool calls")
			}
			// Both results in one user message: one with string content, one with an array.
			stringResult, _ := json.Marshal(map[string]any{"type": "tool_result", "tool_use_id": ids[0], "content": "sunny and warm"})
			arrayResult := anthropic.ToolResultBlockParam{ToolUseID: ids[1], Content: []anthropic.ToolResultBlockParamContentUnion{
				{OfText: &anthropic.TextBlockParam{Text: "noon"}},
				{OfText: &anthropic.TextBlockParam{Text: "exactly"}},
			}}
			p := toolParams
			p.Messages = append(append([]anthropic.MessageParam{}, toolParams.Messages...),
				toolAnswer.ToParam(),
				anthropic.NewUserMessage(
					param.Override[anthropic.ContentBlockParamUnion](json.RawMessage(stringResult)),
					anthropic.ContentBlockParamUnion{OfToolResult: &arrayResult},
				))
			msg, err := client.Messages.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			if msg.StopReason != anthropic.StopReasonEndTurn {
				t.Errorf("stop_reason = %q, want end_turn; %s", msg.StopReason, msg.RawJSON())
			}
			checkReply(t, m, textOf(t, msg), 4)
			// The model read the results: "sunny and warm" + "noon exactly" are 5 more words
			// on top of the first turn and the calls.
			if msg.Usage.InputTokens < toolAnswer.Usage.InputTokens+5 {
				t.Errorf("input_tokens = %d, want at least the first turn's %d + 5 result words",
					msg.Usage.InputTokens, toolAnswer.Usage.InputTokens)
			}
		})

		t.Run("thinking", func(t *testing.T) {
			p := params
			p.MaxTokens = 2048
			p.Thinking = anthropic.ThinkingConfigParamOfEnabled(1024)
			msg, err := client.Messages.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			if !m.thinks() {
				// A model without visible reasoning answers as usual.
				for _, b := range msg.Content {
					if b.Type == "thinking" && b.Thinking != "" {
						t.Errorf("%s (%s upstream, class %q) returned thinking %q", m.ID, m.Format, m.Reasoning.Class, b.Thinking)
					}
				}
				checkReply(t, m, textOf(t, msg), 5)
				return
			}
			checkThinking(t, m, msg)
			if msg.Usage.OutputTokens != 5+8 {
				t.Errorf("usage output_tokens = %d, want 13 (5 text + 8 thinking)", msg.Usage.OutputTokens)
			}

			t.Run("stream", func(t *testing.T) {
				smsg, _, err := accumulate(t, client, p)
				if err != nil {
					t.Fatalf("stream error: %v", err)
				}
				checkThinking(t, m, smsg)
			})

			t.Run("second_turn", func(t *testing.T) {
				p2 := p
				p2.Messages = append(append([]anthropic.MessageParam{}, p.Messages...), msg.ToParam(),
					anthropic.NewUserMessage(anthropic.NewTextBlock("Thanks. Now reply with 4 words.")))
				msg2, err := client.Messages.New(ctx(t), p2)
				if err != nil {
					t.Fatalf("sending the thinking block back was refused: %v", err)
				}
				checkReply(t, m, textOf(t, msg2), 4)
				if m.Format == catalog.FormatMessages {
					// The simulator checks the signature, so the block reached it intact.
					var sent struct {
						Messages []struct {
							Content []struct{ Type, Thinking, Signature string }
						}
					}
					_ = json.Unmarshal(env.Sim.LastRequest(m.Routes[0]), &sent)
					found := false
					for _, mm := range sent.Messages {
						for _, b := range mm.Content {
							found = found || b.Type == "thinking" && b.Thinking == reasoningText && b.Signature != ""
						}
					}
					if !found {
						t.Errorf("the upstream did not receive the signed thinking block: %s", env.Sim.LastRequest(m.Routes[0]))
					}
				}
			})
		})

		t.Run("midstream_error", func(t *testing.T) {
			p := params
			p.Messages = []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Reply with 6 words then a midstream error."))}
			stream := client.Messages.NewStreaming(ctx(t), p)
			defer stream.Close()
			var text strings.Builder
			for stream.Next() {
				if ev := stream.Current(); ev.Type == "content_block_delta" {
					text.WriteString(ev.Delta.Text)
				}
			}
			if stream.Err() == nil {
				t.Fatalf("stream ended without an error after %q; want the upstream's mid-stream failure surfaced", text.String())
			}
			prefixOfReply(t, m, text.String(), 6)
		})

		t.Run("count_tokens", func(t *testing.T) {
			n, err := client.Messages.CountTokens(ctx(t), anthropic.MessageCountTokensParams{
				Model:    anthropic.Model(m.ID),
				Messages: params.Messages,
			})
			if err != nil {
				t.Fatal(err)
			}
			if n.InputTokens <= 0 {
				t.Errorf("input_tokens = %d, want > 0", n.InputTokens)
			}
			withTools, err := client.Messages.CountTokens(ctx(t), anthropic.MessageCountTokensParams{
				Model:    anthropic.Model(m.ID),
				Messages: params.Messages,
				Tools:    messageCountTools(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if withTools.InputTokens <= n.InputTokens {
				t.Errorf("input_tokens with tools = %d, want more than %d without", withTools.InputTokens, n.InputTokens)
			}
		})
	})
}

// messageCountTools are messagesTools in count_tokens' parameter shape.
func messageCountTools() []anthropic.MessageCountTokensToolUnionParam {
	var out []anthropic.MessageCountTokensToolUnionParam
	for _, tl := range messagesTools() {
		out = append(out, anthropic.MessageCountTokensToolUnionParam{OfTool: tl.OfTool})
	}
	return out
}

// checkThinking asserts a thinking answer: a thinking block with the simulator's reasoning
// first (signed on the messages-format model), then the text.
func checkThinking(t *testing.T, m model, msg *anthropic.Message) {
	t.Helper()
	if len(msg.Content) != 2 || msg.Content[0].Type != "thinking" || msg.Content[1].Type != "text" {
		t.Fatalf("content = %s, want a thinking block then a text block", msg.RawJSON())
	}
	th := msg.Content[0]
	if th.Thinking != reasoningText {
		t.Errorf("thinking = %q, want %q", th.Thinking, reasoningText)
	}
	if m.Format == catalog.FormatMessages && th.Signature == "" {
		t.Errorf("thinking block has no signature: %s", th.RawJSON())
	}
	checkReply(t, m, msg.Content[1].Text, 5)
	if msg.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("stop_reason = %q, want end_turn", msg.StopReason)
	}
}
