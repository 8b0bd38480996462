package sdktest

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// Streams the simulator does not produce, replayed byte for byte by a fixed upstream
// (nodetest.StartWithFixed: fx-chat, fx-msg and fx-resp are routes of the chat, messages and
// responses formats), read by the official SDKs' own stream parsers and accumulators.

func chatStreamParams(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Weather and time, please.")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}}
}

func messagesParams(model string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 256,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Weather, please."))}}
}

// accumulateChat reads a chat stream through openai-go's ChatCompletionAccumulator.
func accumulateChat(t *testing.T, client openai.Client, model string) (openai.ChatCompletionAccumulator, error) {
	t.Helper()
	s := client.Chat.Completions.NewStreaming(ctx(t), chatStreamParams(model))
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		if !acc.AddChunk(s.Current()) {
			t.Fatalf("the accumulator refused chunk %s", s.Current().RawJSON())
		}
	}
	return acc, s.Err()
}

// TestSDKToolCallIndexes: openai-go accumulates tool calls by index; a route that numbers its
// first call 1 (a server in front of Claude), or every call 0, must still give the client two
// (four) calls and no empty one, on the same-format path and converted from a messages route
// whose tool blocks are content blocks 2 and 3.
func TestSDKToolCallIndexes(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	client := openaiClient(env, env.Key)
	type call struct{ id, name, args string }
	cases := []struct {
		name, route, model string
		answer             []byte
		want               []call
	}{
		{"chat route numbering from 1", "fc", "fx-chat", nodetest.Testdata(t, "chat", "relay", "tool_index_from_one.upstream.sse"),
			[]call{{"toolu_01A", "get_weather", `{"city": "Paris"}`}, {"toolu_01B", "get_time", `{"zone":"CET"}`}}},
		{"chat route numbering every call 0", "fc", "fx-chat", nodetest.Testdata(t, "chat", "relay", "tool_index_all_zero.upstream.sse"),
			[]call{{"call_1", "read_file", `{"path":"a.go"}`}, {"call_2", "read_file", `{"path":"b.go"}`},
				{"call_3", "list_dir", `{"dir":"."}`}, {"call_4", "list_dir", `{}`}}},
		{"messages route", "fm", "fx-msg", nodetest.Testdata(t, "messages", "stream_thinking_tools.sse"),
			[]call{{"toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", `{"city": "Paris", "unit": "celsius"}`},
				{"toolu_01BQ7kh3SUdQ3dLQzexGq9jZ", "get_time", `{"zone": "Asia/Tokyo", "q": "a \"quoted\" {brace"}`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.SetStream(c.route, c.answer)
			acc, err := accumulateChat(t, client, c.model)
			if err != nil {
				t.Fatal(err)
			}
			var got []call
			for _, tc := range acc.Choices[0].Message.ToolCalls {
				got = append(got, call{tc.ID, tc.Function.Name, tc.Function.Arguments})
			}
			if len(got) != len(c.want) {
				bug(t, "the SDK accumulated %d tool calls %q, want %d %q", len(got), got, len(c.want), c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("call %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
			if acc.Choices[0].FinishReason != "tool_calls" {
				t.Errorf("finish_reason %q", acc.Choices[0].FinishReason)
			}
		})
	}
}

// TestSDKFinishedStreams: a stream whose answer finished and whose upstream then closed without
// its end marker (or without the blank line after its last event) is a whole answer to every
// SDK: no error, the full text, the usage.
func TestSDKFinishedStreams(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)
	streams := filepath.Join("conversion", "streams")
	t.Run("chat client, chat route without [DONE]", func(t *testing.T) {
		up.SetStream("fc", nodetest.Testdata(t, "chat", "relay", "finish_without_done.upstream.sse"))
		acc, err := accumulateChat(t, oai, "fx-chat")
		if err != nil || acc.Choices[0].Message.Content != "Four words, no more." || acc.Usage.CompletionTokens != 5 {
			bug(t, "err %v, content %q, usage %+v", err, acc.Choices[0].Message.Content, acc.Usage)
		}
	})
	t.Run("chat client, chat route, last chunk without its blank line", func(t *testing.T) {
		up.SetStream("fc", nodetest.Testdata(t, "chat", "relay", "finish_without_blank_line.upstream.sse"))
		acc, err := accumulateChat(t, oai, "fx-chat")
		if err != nil || acc.Choices[0].Message.Content != "Hi" || acc.Choices[0].FinishReason != "stop" {
			bug(t, "err %v, content %q, finish %q", err, acc.Choices[0].Message.Content, acc.Choices[0].FinishReason)
		}
	})
	messages := []struct{ name, route, model, answer, text string }{
		{"messages route without message_stop", "fm", "fx-msg", "messages_stop_without_message_stop/answer.messages.sse", "Four words here, done."},
		{"messages route, message_stop without its blank line", "fm", "fx-msg", "messages_stop_without_blank_line/answer.messages.sse", "Four words here, done."},
		{"chat route without [DONE]", "fc", "fx-chat", "chat_finish_without_done/answer.chat.sse", "Four words, no more."},
		{"responses route, response.completed without its blank line", "fr", "fx-resp", "responses_completed_without_blank_line/answer.responses.sse", "Hi there!"},
	}
	for _, c := range messages {
		t.Run("messages client, "+c.name, func(t *testing.T) {
			up.SetStream(c.route, nodetest.Testdata(t, streams, c.answer))
			s := ant.Messages.NewStreaming(ctx(t), messagesParams(c.model))
			defer s.Close()
			var msg anthropic.Message
			for s.Next() {
				if err := msg.Accumulate(s.Current()); err != nil {
					t.Fatal(err)
				}
			}
			if s.Err() != nil || len(msg.Content) != 1 || msg.Content[0].Text != c.text || msg.StopReason != "end_turn" {
				bug(t, "err %v, message %s", s.Err(), msg.RawJSON())
			}
		})
	}
	t.Run("responses client, responses route, response.completed without its blank line", func(t *testing.T) {
		up.SetStream("fr", nodetest.Testdata(t, streams, "responses_completed_without_blank_line/answer.responses.sse"))
		s := oai.Responses.NewStreaming(ctx(t), responses.ResponseNewParams{Model: "fx-resp",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}})
		defer s.Close()
		var final responses.Response
		for s.Next() {
			if ev := s.Current(); ev.Type == "response.completed" {
				final = ev.Response
			}
		}
		if s.Err() != nil || final.OutputText() != "Hi there!" || final.Usage.OutputTokens != 11 {
			bug(t, "err %v, final %s", s.Err(), final.RawJSON())
		}
	})
}

// TestSDKInStreamErrorsFromResponsesRoutes: an error inside a responses route's stream (the
// nested error event, the flat one, response.failed) reaches openai-go and anthropic-sdk-go
// clients as their stream error, in their vocabulary, with the provider's message; what the
// anthropic client accumulated before it (a thinking block, a cut tool call) stays well-formed.
func TestSDKInStreamErrorsFromResponsesRoutes(t *testing.T) {
	// No cooldowns: each failed stream counts against the one route.
	env, up := nodetest.StartWithFixed(t, nodetest.Options{Health: routehealth.Policy{
		MaxFails: 1 << 30, BaseCooldown: time.Nanosecond, MaxCooldown: time.Nanosecond, RateLimited: time.Nanosecond, Now: time.Now}})
	oai := openaiClient(env, env.Key)
	ant := anthropicClient(env, env.Key)
	cases := []struct {
		name          string
		chatType      string // the chat error's type
		anthropicType string
		code          string
		message       string // the start of the provider's message
		blocks        int    // blocks the anthropic client accumulated before the error
	}{
		{"responses_error_nested_after_reasoning", "invalid_request_error", "invalid_request_error", "context_length_exceeded", "Your input exceeds the context window", 1},
		{"responses_failed_rate_limit_in_tool_call", "rate_limit_error", "rate_limit_error", "rate_limit_exceeded", "Rate limit reached for gpt-5", 1},
		{"responses_error_flat_overloaded", "overloaded_error", "overloaded_error", "server_is_overloaded", "The server is overloaded.", 1},
		{"responses_failed_server_error_after_reasoning", "server_error", "api_error", "server_error", "The model produced invalid content.", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.SetStream("fr", nodetest.Testdata(t, "conversion", "streams", c.name, "answer.responses.sse"))
			t.Run("openai-go chat", func(t *testing.T) {
				_, err := accumulateChat(t, oai, "fx-resp")
				var se *ssestream.StreamError
				if !errors.As(err, &se) {
					bug(t, "stream error %v (%T), want the SDK's StreamError", err, err)
				}
				for _, want := range []string{`"type":"` + c.chatType + `"`, `"code":"` + c.code + `"`, c.message} {
					if !strings.Contains(string(se.Event.Data), want) {
						t.Errorf("error event %s lacks %s", se.Event.Data, want)
					}
				}
			})
			t.Run("anthropic-sdk-go", func(t *testing.T) {
				s := ant.Messages.NewStreaming(ctx(t), messagesParams("fx-resp"))
				defer s.Close()
				var msg anthropic.Message
				for s.Next() {
					if err := msg.Accumulate(s.Current()); err != nil {
						t.Fatalf("accumulate: %v", err)
					}
				}
				var e *anthropic.Error
				if !errors.As(s.Err(), &e) {
					bug(t, "stream error %v (%T), want *anthropic.Error", s.Err(), s.Err())
				}
				if string(e.Type()) != c.anthropicType || !strings.Contains(e.RawJSON(), c.message) {
					t.Errorf("error type %q %s; want %s with the provider's message", e.Type(), e.RawJSON(), c.anthropicType)
				}
				if len(msg.Content) != c.blocks {
					t.Errorf("accumulated %d blocks before the error, want %d: %s", len(msg.Content), c.blocks, msg.RawJSON())
				}
			})
		})
	}
}
