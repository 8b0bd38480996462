package sdktest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// chatTools are the two function tools in openai-go's shape.
func chatTools() []openai.ChatCompletionToolUnionParam {
	return []openai.ChatCompletionToolUnionParam{
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather",
			Description: openai.String("Weather for a city"), Parameters: weatherSchema}),
		openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time",
			Description: openai.String("Time in a zone"), Parameters: timeSchema}),
	}
}

// checkChatCalls asserts the two parallel tool calls: names, exact arguments, distinct ids.
func checkChatCalls(t *testing.T, calls []openai.ChatCompletionMessageToolCallUnion) {
	t.Helper()
	if len(calls) != len(wantCalls) {
		t.Fatalf("got %d tool calls %+v, want %d", len(calls), calls, len(wantCalls))
	}
	var ids []string
	for i, c := range calls {
		if c.Type != "function" {
			t.Errorf("tool call %d type = %q, want function", i, c.Type)
		}
		if c.Function.Name != wantCalls[i].name {
			t.Errorf("tool call %d name = %q, want %q", i, c.Function.Name, wantCalls[i].name)
		}
		checkArgs(t, c.Function.Name, c.Function.Arguments, wantCalls[i].args)
		ids = append(ids, c.ID)
	}
	checkDistinct(t, "tool call ids", ids)
}

// checkChatUsage asserts the usage block: the simulator's token counts and total = sum.
func checkChatUsage(t *testing.T, u openai.CompletionUsage, prompt, completion int64) {
	t.Helper()
	if u.PromptTokens <= 0 || u.CompletionTokens <= 0 {
		t.Errorf("usage = %+v, want positive prompt and completion tokens", u)
	}
	if u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage total_tokens = %d, want prompt %d + completion %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	if prompt > 0 && u.PromptTokens != prompt {
		t.Errorf("usage prompt_tokens = %d, want %d (the prompt's words)", u.PromptTokens, prompt)
	}
	if completion > 0 && u.CompletionTokens != completion {
		t.Errorf("usage completion_tokens = %d, want %d", u.CompletionTokens, completion)
	}
}

// TestChatCompletionsSDK drives /v1/chat/completions with openai-go against every upstream
// format.
func TestChatCompletionsSDK(t *testing.T) {
	env := startEnv(t)
	client := openaiClient(env, env.Key)

	forEachModel(t, env, func(t *testing.T, m model) {
		const prompt = "Greet me and reply with 5 words."
		params := openai.ChatCompletionNewParams{
			Model:    m.ID,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)},
		}
		var plain string // the plain answer, for the streamed one to match

		t.Run("text", func(t *testing.T) {
			c, err := client.Chat.Completions.New(ctx(t), params)
			if err != nil {
				t.Fatal(err)
			}
			if c.Model != m.ID {
				t.Errorf("model = %q, want the requested %q", c.Model, m.ID)
			}
			if !strings.HasPrefix(c.ID, "chatcmpl-") {
				t.Errorf("id = %q, want a chatcmpl- id", c.ID)
			}
			if len(c.Choices) != 1 {
				t.Fatalf("got %d choices, want 1", len(c.Choices))
			}
			ch := c.Choices[0]
			checkReply(t, m, ch.Message.Content, 5)
			if ch.FinishReason != "stop" {
				t.Errorf("finish_reason = %q, want stop", ch.FinishReason)
			}
			if ch.Message.Role != "assistant" {
				t.Errorf("role = %q, want assistant", ch.Message.Role)
			}
			if len(ch.Message.ToolCalls) != 0 {
				t.Errorf("unexpected tool calls %+v", ch.Message.ToolCalls)
			}
			checkChatUsage(t, c.Usage, int64(len(strings.Fields(prompt))), 5)
			plain = ch.Message.Content
		})

		t.Run("stream", func(t *testing.T) {
			if plain == "" {
				t.Skip("needs the plain answer")
			}
			p := params
			p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			stream := client.Chat.Completions.NewStreaming(ctx(t), p)
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			chunks, usageChunks := 0, 0
			for stream.Next() {
				chunk := stream.Current()
				chunks++
				if !acc.AddChunk(chunk) {
					t.Fatalf("chunk %d rejected by the accumulator: %s", chunks, chunk.RawJSON())
				}
				if chunk.JSON.Usage.Valid() {
					usageChunks++
					if len(chunk.Choices) != 0 {
						t.Errorf("usage chunk has %d choices, want none", len(chunk.Choices))
					}
				}
				if chunk.Model != m.ID {
					t.Errorf("chunk model = %q, want %q", chunk.Model, m.ID)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if chunks < 3 {
				t.Errorf("got %d chunks, want a real stream", chunks)
			}
			if usageChunks != 1 {
				t.Errorf("got %d usage chunks, want exactly 1", usageChunks)
			}
			if len(acc.Choices) != 1 {
				t.Fatalf("accumulated %d choices, want 1", len(acc.Choices))
			}
			sameReply(t, m, acc.Choices[0].Message.Content, plain, 5)
			if fr := acc.Choices[0].FinishReason; fr != "stop" {
				t.Errorf("finish_reason = %q, want stop", fr)
			}
			checkChatUsage(t, acc.Usage, int64(len(strings.Fields(prompt))), 5)
		})

		t.Run("stream_without_usage", func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(ctx(t), params)
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				chunk := stream.Current()
				acc.AddChunk(chunk)
				if chunk.JSON.Usage.Valid() {
					t.Errorf("usage chunk %s sent though the client did not ask for usage", chunk.RawJSON())
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if len(acc.Choices) == 1 {
				checkReply(t, m, acc.Choices[0].Message.Content, 5)
			} else {
				t.Errorf("accumulated %d choices, want 1", len(acc.Choices))
			}
		})

		t.Run("system_prompt", func(t *testing.T) {
			p := params
			p.Messages = []openai.ChatCompletionMessageParamUnion{
				openai.SystemMessage("You are terse."),
				openai.DeveloperMessage("Answer in plain English."),
				openai.UserMessage(prompt),
			}
			c, err := client.Chat.Completions.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, c.Choices[0].Message.Content, 5)
			// The model read both instructions: 3 + 4 words on top of the prompt.
			checkChatUsage(t, c.Usage, int64(3+4+len(strings.Fields(prompt))), 5)
		})

		t.Run("max_tokens", func(t *testing.T) {
			p := params
			p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Reply with 30 words.")}
			p.MaxCompletionTokens = openai.Int(20)
			c, err := client.Chat.Completions.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			checkReply(t, m, c.Choices[0].Message.Content, 20)
			if fr := c.Choices[0].FinishReason; fr != "length" {
				t.Errorf("finish_reason = %q, want length", fr)
			}
			checkChatUsage(t, c.Usage, 0, 20)
		})

		t.Run("cached_usage", func(t *testing.T) {
			const cachedPrompt = "Greet me, cached 3, and reply with 5 words."
			p := params
			p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage(cachedPrompt)}
			c, err := client.Chat.Completions.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			// prompt_tokens includes the cached ones.
			checkChatUsage(t, c.Usage, int64(len(strings.Fields(cachedPrompt))), 5)
			if got := c.Usage.PromptTokensDetails.CachedTokens; got != 3 {
				t.Errorf("prompt_tokens_details.cached_tokens = %d, want 3; usage %s", got, c.Usage.RawJSON())
			}
		})

		toolParams := openai.ChatCompletionNewParams{
			Model:    m.ID,
			Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(parallelPrompt + " Then reply with 4 words.")},
			Tools:    chatTools(),
		}
		var toolAnswer *openai.ChatCompletion

		t.Run("tools", func(t *testing.T) {
			c, err := client.Chat.Completions.New(ctx(t), toolParams)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Choices) != 1 {
				t.Fatalf("got %d choices, want 1", len(c.Choices))
			}
			if fr := c.Choices[0].FinishReason; fr != "tool_calls" {
				t.Errorf("finish_reason = %q, want tool_calls", fr)
			}
			checkChatCalls(t, c.Choices[0].Message.ToolCalls)
			checkChatUsage(t, c.Usage, 0, 0)
			toolAnswer = c
		})

		t.Run("tools_stream", func(t *testing.T) {
			stream := client.Chat.Completions.NewStreaming(ctx(t), toolParams)
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			var finished []string
			for stream.Next() {
				if !acc.AddChunk(stream.Current()) {
					t.Fatalf("chunk rejected by the accumulator: %s", stream.Current().RawJSON())
				}
				if tc, ok := acc.JustFinishedToolCall(); ok {
					finished = append(finished, tc.Name)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream error: %v", err)
			}
			if len(acc.Choices) != 1 {
				t.Fatalf("accumulated %d choices, want 1", len(acc.Choices))
			}
			if fr := acc.Choices[0].FinishReason; fr != "tool_calls" {
				t.Errorf("finish_reason = %q, want tool_calls", fr)
			}
			checkChatCalls(t, acc.Choices[0].Message.ToolCalls)
			if want := []string{"get_weather", "get_time"}; strings.Join(finished, ",") != strings.Join(want, ",") {
				t.Errorf("JustFinishedToolCall reported %q, want %q", finished, want)
			}
		})

		t.Run("tool_round_trip", func(t *testing.T) {
			if toolAnswer == nil || len(toolAnswer.Choices[0].Message.ToolCalls) != 2 {
				t.Skip("needs the tool calls")
			}
			asst := toolAnswer.Choices[0].Message
			p := toolParams
			p.Messages = append(append([]openai.ChatCompletionMessageParamUnion{}, toolParams.Messages...), asst.ToParam())
			for _, tc := range asst.ToolCalls {
				p.Messages = append(p.Messages, openai.ToolMessage("result of "+tc.Function.Name+": fine", tc.ID))
			}
			c, err := client.Chat.Completions.New(ctx(t), p)
			if err != nil {
				t.Fatal(err)
			}
			if fr := c.Choices[0].FinishReason; fr != "stop" {
				t.Errorf("finish_reason = %q, want stop", fr)
			}
			if len(c.Choices[0].Message.ToolCalls) != 0 {
				t.Errorf("got tool calls %+v after the tool results, want text", c.Choices[0].Message.ToolCalls)
			}
			checkReply(t, m, c.Choices[0].Message.Content, 4)
			// Everything the model read: the user turn, both calls and both results.
			if c.Usage.PromptTokens <= toolAnswer.Usage.PromptTokens {
				t.Errorf("prompt_tokens = %d after the tool results, want more than the first turn's %d",
					c.Usage.PromptTokens, toolAnswer.Usage.PromptTokens)
			}
		})

		t.Run("reasoning", func(t *testing.T) {
			if !m.thinks() {
				// No visible reasoning (a chat-format upstream or a model without reasoning):
				// the answer is the plain one, with no reasoning_content.
				p := params
				p.ReasoningEffort = shared.ReasoningEffortHigh
				c, err := client.Chat.Completions.New(ctx(t), p)
				if err != nil {
					t.Fatal(err)
				}
				msg := c.Choices[0].Message
				checkReply(t, m, msg.Content, 5)
				if rc := msg.JSON.ExtraFields["reasoning_content"].Raw(); rc != "" && rc != "null" && rc != `""` {
					t.Errorf("%s (%s upstream, class %q) returned reasoning_content %s", m.ID, m.Format, m.Reasoning.Class, rc)
				}
				return
			}
			type variant struct {
				name   string
				effort shared.ReasoningEffort
				opts   []option.RequestOption
			}
			var variants []variant
			switch m.Reasoning.Class {
			case catalog.ReasoningEffort:
				variants = []variant{{name: "reasoning_effort_high", effort: shared.ReasoningEffortHigh}}
			default:
				variants = []variant{
					{name: "thinking", opts: []option.RequestOption{option.WithJSONSet("thinking", map[string]any{"type": "enabled", "budget_tokens": 1024})}},
					{name: "enable_thinking", opts: []option.RequestOption{option.WithJSONSet("enable_thinking", true)}},
				}
			}
			for _, v := range variants {
				t.Run(v.name, func(t *testing.T) {
					p := params
					p.ReasoningEffort = v.effort
					var resp *http.Response
					c, err := client.Chat.Completions.New(ctx(t), p, append(v.opts, option.WithResponseInto(&resp))...)
					if err != nil {
						t.Fatal(err)
					}
					msg := c.Choices[0].Message
					checkReply(t, m, msg.Content, 5)
					if got := rawString(msg.JSON.ExtraFields["reasoning_content"].Raw()); got != reasoningText {
						t.Errorf("reasoning_content = %q, want %q; message %s", got, reasoningText, msg.RawJSON())
					}
					// Anthropic usage does not split out thinking tokens; the others do.
					if got := c.Usage.CompletionTokensDetails.ReasoningTokens; got != 8 && m.Format != catalog.FormatMessages {
						t.Errorf("completion_tokens_details.reasoning_tokens = %d, want 8", got)
					}
					checkChatUsage(t, c.Usage, 0, 5+8)
					if v.effort != "" {
						if got := resp.Header.Get("X-Reasoning-Effort"); got != string(v.effort) {
							t.Errorf("X-Reasoning-Effort = %q, want %q", got, v.effort)
						}
					}
					if m.Format == catalog.FormatMessages {
						blocks := msg.JSON.ExtraFields["thinking_blocks"].Raw()
						if !strings.Contains(blocks, `"signature":"`) || !strings.Contains(blocks, reasoningText) {
							t.Errorf("thinking_blocks = %s, want the thinking text with its signature", blocks)
						}
					}
				})
			}
			t.Run("stream", func(t *testing.T) {
				p := params
				v := variants[0]
				p.ReasoningEffort = v.effort
				stream := client.Chat.Completions.NewStreaming(ctx(t), p, v.opts...)
				defer stream.Close()
				var acc openai.ChatCompletionAccumulator
				var reasoning strings.Builder
				var blocks []string // the thinking_blocks deltas
				for stream.Next() {
					chunk := stream.Current()
					acc.AddChunk(chunk)
					for _, ch := range chunk.Choices {
						reasoning.WriteString(rawString(ch.Delta.JSON.ExtraFields["reasoning_content"].Raw()))
						if b := ch.Delta.JSON.ExtraFields["thinking_blocks"].Raw(); b != "" {
							blocks = append(blocks, b)
						}
					}
				}
				if err := stream.Err(); err != nil {
					t.Fatalf("stream error: %v", err)
				}
				if reasoning.String() != reasoningText {
					t.Errorf("streamed reasoning_content = %q, want %q", reasoning.String(), reasoningText)
				}
				if len(acc.Choices) == 1 {
					checkReply(t, m, acc.Choices[0].Message.Content, 5)
				}
				if m.Format == catalog.FormatMessages {
					// The signature of the thinking arrives as a thinking_blocks delta.
					want := simSignature("thinking", reasoningText)
					if got := strings.Join(blocks, ""); !strings.Contains(got, want) {
						bug(t, "streamed chat answer from a messages upstream loses the thinking signature: "+
							"thinking_blocks deltas = %s, want one carrying signature %q (the whole answer has it)", got, want)
					}
				}
			})
		})

		t.Run("midstream_error", func(t *testing.T) {
			p := params
			p.Messages = []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Reply with 6 words then a midstream error.")}
			stream := client.Chat.Completions.NewStreaming(ctx(t), p)
			defer stream.Close()
			var content strings.Builder
			for stream.Next() {
				for _, ch := range stream.Current().Choices {
					content.WriteString(ch.Delta.Content)
				}
			}
			if stream.Err() == nil {
				t.Fatalf("stream ended without an error after %q; want the upstream's mid-stream failure surfaced", content.String())
			}
			prefixOfReply(t, m, content.String(), 6)
		})
	})
}

// prefixOfReply asserts got is a non-empty proper prefix of the n-word reply of one of m's
// upstreams: what a stream delivered before it failed (the simulator fails after two deltas,
// which the gateway must have relayed).
func prefixOfReply(t *testing.T, m model, got string, n int) {
	t.Helper()
	for _, up := range m.Upstreams {
		if full := replyText(up, n); got != "" && strings.HasPrefix(full, got) && got != full {
			return
		}
	}
	t.Errorf("content before the failure = %q, want a non-empty proper prefix of the %d-word reply", got, n)
}
