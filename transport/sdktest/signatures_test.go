package sdktest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// simSignature is the simulator's signature of a reasoning text (simulator/answer.go).
func simSignature(kind, text string) string {
	sum := sha256.Sum256([]byte("modelgate-simulator/" + kind + "\x00" + text))
	return base64.StdEncoding.EncodeToString(append(sum[:], sum[:16]...))
}

// geminiCallSignatures returns, for the last request route g (the gem model) received, the
// thoughtSignature of each functionCall part by function name ("" when unsigned).
func geminiCallSignatures(t *testing.T, env *nodetest.Env) map[string]string {
	t.Helper()
	var req struct {
		Contents []struct {
			Role  string
			Parts []struct {
				FunctionCall *struct {
					Name string `json:"name"`
				} `json:"functionCall"`
				ThoughtSignature string `json:"thoughtSignature"`
			}
		}
	}
	raw := env.Sim.LastRequest("g")
	if err := json.Unmarshal(raw, &req); err != nil {
		t.Fatalf("gemini request %s: %v", raw, err)
	}
	out := map[string]string{}
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if p.FunctionCall != nil {
				out[p.FunctionCall.Name] = p.ThoughtSignature
			}
		}
	}
	return out
}

// checkGeminiSignatureSent asserts the gemini upstream got back, on the first function call,
// the thoughtSignature it issued with it (and both calls).
func checkGeminiSignatureSent(t *testing.T, env *nodetest.Env) {
	t.Helper()
	sigs := geminiCallSignatures(t, env)
	if len(sigs) != 2 {
		t.Fatalf("gemini upstream got function calls %v, want get_weather and get_time; request %s", sigs, env.Sim.LastRequest("g"))
	}
	if want := simSignature("thought", reasoningText); sigs["get_weather"] != want {
		t.Errorf("thoughtSignature sent back on get_weather = %q, want the issued %q; request %s",
			sigs["get_weather"], want, env.Sim.LastRequest("g"))
	}
}

// messagesSentThinking reports whether the last request route m (the msg model) received
// carries the simulator's thinking block with its signature in an assistant turn.
func messagesSentThinking(t *testing.T, env *nodetest.Env) bool {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	_ = json.Unmarshal(env.Sim.LastRequest("m"), &req)
	for _, m := range req.Messages {
		var blocks []struct{ Type, Thinking, Signature string }
		if m.Role != "assistant" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			if b.Type == "thinking" && b.Thinking == reasoningText && b.Signature == simSignature("thinking", reasoningText) {
				return true
			}
		}
	}
	return false
}

// chatFirstTurn gets the first answer, whole or streamed (accumulated), with the thinking
// blocks a chat client would echo back: the whole answer's thinking_blocks, or for a stream
// the reasoning_content deltas joined with the signature of the thinking_blocks deltas.
func chatFirstTurn(t *testing.T, client openai.Client, p openai.ChatCompletionNewParams, stream bool, opts ...option.RequestOption) (openai.ChatCompletionMessage, string) {
	t.Helper()
	if !stream {
		c, err := client.Chat.Completions.New(ctx(t), p, opts...)
		if err != nil {
			t.Fatal(err)
		}
		msg := c.Choices[0].Message
		return msg, msg.JSON.ExtraFields["thinking_blocks"].Raw()
	}
	st := client.Chat.Completions.NewStreaming(ctx(t), p, opts...)
	defer st.Close()
	var acc openai.ChatCompletionAccumulator
	var reasoning, sig strings.Builder
	for st.Next() {
		chunk := st.Current()
		acc.AddChunk(chunk)
		for _, ch := range chunk.Choices {
			reasoning.WriteString(rawString(ch.Delta.JSON.ExtraFields["reasoning_content"].Raw()))
			var blocks []struct{ Signature string }
			_ = json.Unmarshal([]byte(ch.Delta.JSON.ExtraFields["thinking_blocks"].Raw()), &blocks)
			for _, b := range blocks {
				sig.WriteString(b.Signature)
			}
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream error: %v", err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("accumulated %d choices, want 1", len(acc.Choices))
	}
	var blocks string
	if sig.Len() > 0 {
		b, _ := json.Marshal([]map[string]string{{"type": "thinking", "thinking": reasoning.String(), "signature": sig.String()}})
		blocks = string(b)
	}
	return acc.Choices[0].Message, blocks
}

// TestReasoningSignaturesSDK: the opaque reasoning state an upstream issues with tool calls
// (Anthropic thinking signatures, Gemini thoughtSignatures) survives a tool round trip made
// through each SDK, whole or streamed, so the upstream gets it back as the real APIs require.
func TestReasoningSignaturesSDK(t *testing.T) {
	env := startEnv(t)
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)
	const toolPrompt = parallelPrompt + " Then reply with 4 words."

	for _, stream := range []bool{false, true} {
		mode := "whole"
		if stream {
			mode = "stream"
		}

		// chat client, gem: the signature rides in the tool-call id.
		t.Run("chat_client/gem/"+mode, func(t *testing.T) {
			p := openai.ChatCompletionNewParams{
				Model:           "gem",
				Messages:        []openai.ChatCompletionMessageParamUnion{openai.UserMessage(toolPrompt)},
				Tools:           chatTools(),
				ReasoningEffort: shared.ReasoningEffortHigh,
			}
			msg, _ := chatFirstTurn(t, oai, p, stream)
			checkChatCalls(t, msg.ToolCalls)
			if !strings.Contains(msg.ToolCalls[0].ID, "__thought__") {
				t.Errorf("first tool call id %q carries no thought signature", msg.ToolCalls[0].ID)
			}
			p.Messages = append(p.Messages, msg.ToParam())
			for _, tc := range msg.ToolCalls {
				p.Messages = append(p.Messages, openai.ToolMessage("fine", tc.ID))
			}
			c2, err := oai.Chat.Completions.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, model{Upstreams: []string{"up-g"}}, c2.Choices[0].Message.Content, 4)
			checkGeminiSignatureSent(t, env)
		})

		// chat client, msg: thinking_blocks echoed on the assistant message.
		t.Run("chat_client/msg/"+mode, func(t *testing.T) {
			p := openai.ChatCompletionNewParams{
				Model:    "msg",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(toolPrompt)},
				Tools:    chatTools(),
			}
			thinking := option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": 1024})
			msg, blocks := chatFirstTurn(t, oai, p, stream, thinking)
			checkChatCalls(t, msg.ToolCalls)
			if stream && blocks == "" {
				bug(t, "a chat stream from the messages-format model carries no thinking signature (see TestChatCompletionsSDK/msg/reasoning/stream), so a streaming chat client cannot echo the signed thinking back")
			}
			if !strings.Contains(blocks, simSignature("thinking", reasoningText)) || !strings.Contains(blocks, reasoningText) {
				t.Fatalf("thinking_blocks = %s, want the signed thinking", blocks)
			}
			asst := msg.ToAssistantMessageParam()
			asst.SetExtraFields(map[string]any{"reasoning_content": reasoningText, "thinking_blocks": json.RawMessage(blocks)})
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &asst})
			for _, tc := range msg.ToolCalls {
				p.Messages = append(p.Messages, openai.ToolMessage("fine", tc.ID))
			}
			c2, err := oai.Chat.Completions.New(ctx(t), p, thinking)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, model{Upstreams: []string{"up-m"}}, c2.Choices[0].Message.Content, 4)
			if !messagesSentThinking(t, env) {
				t.Errorf("the messages upstream did not get the signed thinking block back: %s", env.Sim.LastRequest("m"))
			}
		})

		// messages client, gem and msg: thinking + tool_use, then tool_result.
		for _, tc := range []struct{ model, up string }{{"gem", "up-g"}, {"msg", "up-m"}} {
			t.Run("messages_client/"+tc.model+"/"+mode, func(t *testing.T) {
				p := anthropic.MessageNewParams{
					Model:     anthropic.Model(tc.model),
					MaxTokens: 2048,
					Thinking:  anthropic.ThinkingConfigParamOfEnabled(1024),
					Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(toolPrompt))},
					Tools:     messagesTools(),
				}
				var msg *anthropic.Message
				if stream {
					var err error
					if msg, _, err = accumulate(t, ant, p); err != nil {
						t.Fatalf("stream error: %v", err)
					}
				} else {
					var err error
					if msg, err = ant.Messages.New(ctx(t), p); err != nil {
						t.Fatal(err)
					}
				}
				if len(msg.Content) == 0 || msg.Content[0].Type != "thinking" || msg.Content[0].Thinking != reasoningText {
					t.Fatalf("content = %s, want the thinking block first", msg.RawJSON())
				}
				if tc.model == "msg" && msg.Content[0].Signature != simSignature("thinking", reasoningText) {
					t.Errorf("thinking signature = %q, want the upstream's", msg.Content[0].Signature)
				}
				checkToolUses(t, msg)
				var results []anthropic.ContentBlockParamUnion
				for _, b := range msg.Content {
					if b.Type == "tool_use" {
						results = append(results, anthropic.NewToolResultBlock(b.ID, "fine", false))
					}
				}
				p.Messages = append(p.Messages, msg.ToParam(), anthropic.NewUserMessage(results...))
				msg2, err := ant.Messages.New(ctx(t), p)
				if err != nil {
					t.Fatal(err)
				}
				checkReply(t, model{Upstreams: []string{tc.up}}, textOf(t, msg2), 4)
				if tc.model == "gem" {
					checkGeminiSignatureSent(t, env)
				} else if !messagesSentThinking(t, env) {
					t.Errorf("the messages upstream did not get the signed thinking block back: %s", env.Sim.LastRequest("m"))
				}
			})
		}

		// responses client, gem: the signature rides in the call_id.
		t.Run("responses_client/gem/"+mode, func(t *testing.T) {
			requireResponses(t, env)
			p := responses.ResponseNewParams{
				Model:     "gem",
				Input:     responses.ResponseNewParamsInputUnion{OfString: openai.String(toolPrompt)},
				Tools:     responsesTools(),
				Reasoning: shared.ReasoningParam{Effort: shared.ReasoningEffortHigh},
			}
			var r *responses.Response
			if stream {
				s := streamResponse(t, oai, p)
				if s.err != nil || s.completed == nil {
					t.Fatalf("stream error %v, events %q", s.err, s.types)
				}
				r = s.completed
			} else {
				var err error
				if r, err = oai.Responses.New(ctx(t), p); err != nil {
					t.Fatal(err)
				}
			}
			calls := checkResponseCalls(t, r)
			input := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(toolPrompt, responses.EasyInputMessageRoleUser)}
			for _, c := range calls {
				input = append(input, responses.ResponseInputItemParamOfFunctionCall(c.Arguments.OfString, c.CallID, c.Name))
			}
			for _, c := range calls {
				out := responses.ResponseInputItemParamOfFunctionCallOutput("fine")
				out.OfFunctionCallOutput.CallID = openai.String(c.CallID)
				input = append(input, out)
			}
			p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: input}
			r2, err := oai.Responses.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, model{Upstreams: []string{"up-g"}}, r2.OutputText(), 4)
			checkGeminiSignatureSent(t, env)
		})
	}
}
