package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/sse"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

type frame struct{ name, data string }

// frames splits a client's event stream.
func frames(t *testing.T, raw []byte) []frame {
	t.Helper()
	rd := sse.NewReader(bytes.NewReader(raw))
	var out []frame
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, frame{string(ev.Name), string(ev.Data)})
	}
}

const chatStream = `{"model":"fx-chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

// TestChatPassThroughStreams: on the chat -> chat path the client gets the route's chunks with
// only the model, the tool-call indexes and the unasked usage chunk changed (byte for byte the
// golden of testdata/chat/relay), the data: [DONE] a finished stream left out, and an error
// only when the stream broke before its finish. The log says what was billed.
func TestChatPassThroughStreams(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	cases := []struct {
		name   string
		answer []byte // the route's stream
		want   []byte // the client's stream
		status int    // in the log
		input  int64
		output int64
		drop   string // X-Modelgate-Dropped
	}{
		// The first tool call numbered 1 (a server in front of Claude): the client gets 0, 1.
		{"tool_index_from_one", nodetest.Testdata(t, "chat", "relay", "tool_index_from_one.upstream.sse"),
			nodetest.Testdata(t, "chat", "relay", "tool_index_from_one.client.sse"), 200, 412, 96, ""},
		{"tool_index_all_zero", nodetest.Testdata(t, "chat", "relay", "tool_index_all_zero.upstream.sse"),
			nodetest.Testdata(t, "chat", "relay", "tool_index_all_zero.client.sse"), 200, 0, 0, ""},
		// finish_reason, then the connection closes without [DONE]: whole, billed, [DONE] sent.
		{"finish_without_done", nodetest.Testdata(t, "chat", "relay", "finish_without_done.upstream.sse"),
			append(nodetest.Testdata(t, "chat", "relay", "finish_without_done.client.sse"), "data: [DONE]\n\n"...), 200, 11, 5, ""},
		{"finish_without_blank_line", nodetest.Testdata(t, "chat", "relay", "finish_without_blank_line.upstream.sse"),
			append(nodetest.Testdata(t, "chat", "relay", "finish_without_blank_line.client.sse"), "data: [DONE]\n\n"...), 200, 0, 0, ""},
		// A pretty-printed stream with a dated model id: each chunk names fx-chat, spacing kept.
		{"pretty_dated_model", nodetest.Testdata(t, "chat", "relay", "pretty_dated_model.upstream.sse"),
			nodetest.Testdata(t, "chat", "relay", "pretty_dated_model.client.sse"), 200, 9, 3, ""},
		// Azure's preamble (empty id, no choices) and its annotations after the finish are left
		// out; what they held is named (the header goes out with the first chunk, after the
		// preamble; the annotations reach the dropped-fields counter).
		{"azure_filter_annotations", nodetest.Testdata(t, "chat", "relay", "azure_filter_annotations.upstream.sse"),
			nodetest.Testdata(t, "chat", "relay", "azure_filter_annotations.client.sse"), 200, 14, 3, "answer.prompt_filter_results"},
		// Mistral's content arrays: content a string, reasoning in reasoning_content.
		{"mistral_content_array", nodetest.Testdata(t, "chat", "relay", "mistral_content_array.upstream.sse"),
			nodetest.Testdata(t, "chat", "relay", "mistral_content_array.client.sse"), 200, 10, 21, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.SetStream("fc", c.answer)
			body := chatStream
			if c.name == "pretty_dated_model" {
				body = strings.Replace(body, `,"stream_options":{"include_usage":true}`, "", 1)
			}
			resp := env.Post("/v1/chat/completions", env.Key, body)
			got := nodetest.Read(t, resp)
			want := bytes.ReplaceAll(c.want, []byte(`"my-model"`), []byte(`"fx-chat"`))
			if resp.StatusCode != 200 || !bytes.Equal(got, want) || resp.Header.Get("X-Modelgate-Dropped") != c.drop {
				t.Fatalf("%d dropped %q\n got: %s\nwant: %s", resp.StatusCode, resp.Header.Get("X-Modelgate-Dropped"), got, want)
			}
			if e := lastEntry(t, env); e.Status != c.status || e.InputTokens != c.input || e.OutputTokens != c.output {
				t.Fatalf("log %+v", e.LogEntry)
			}
		})
	}
	// Cut in the middle of a chunk before any finish: the client gets an error, no [DONE].
	t.Run("cut_before_finish", func(t *testing.T) {
		up.SetStream("fc", nodetest.Testdata(t, "conversion", "streams", "chat_cut_before_finish", "answer.chat.sse"))
		raw := nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatStream))
		fs := frames(t, raw)
		if len(fs) != 3 || !strings.Contains(fs[2].data, `"code":"stream_interrupted"`) || bytes.Contains(raw, []byte("[DONE]")) {
			t.Fatalf("stream %s", raw)
		}
		if e := lastEntry(t, env); e.Status != 502 {
			t.Fatalf("log %+v", e.LogEntry)
		}
	})
}

// lastEntry is the newest request log entry.
func lastEntry(t *testing.T, env *nodetest.Env) usageEntry {
	t.Helper()
	entries := usage(t, env)
	if len(entries) == 0 {
		t.Fatal("no log entry")
	}
	newest := entries[0]
	for _, e := range entries {
		if e.Time > newest.Time {
			newest = e
		}
	}
	return newest
}

// TestSameFormatStreamsEndWithoutTheirMarker: messages and responses streams relayed as they
// are end well when the upstream closes right after its finish: a message_stop is sent in
// place of the missing one, a last event without its blank line is relayed, the call is
// billed (status 200).
func TestSameFormatStreamsEndWithoutTheirMarker(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	msgBody := `{"model":"fx-msg","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	respBody := `{"model":"fx-resp","stream":true,"input":"hi"}`
	cases := []struct {
		name, route, path, body, answer string
		last                            string // the last event the client gets
		input, output                   int64
	}{
		{"messages_stop_without_message_stop", "fm", "/v1/messages", msgBody, "answer.messages.sse", "message_stop", 25, 6},
		{"messages_stop_without_blank_line", "fm", "/v1/messages", msgBody, "answer.messages.sse", "message_stop", 25, 6},
		{"responses_completed_without_blank_line", "fr", "/v1/responses", respBody, "answer.responses.sse", "response.completed", 37, 11},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			up.SetStream(c.route, nodetest.Testdata(t, "conversion", "streams", c.name, c.answer))
			resp := env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01")
			raw := nodetest.Read(t, resp)
			fs := frames(t, raw)
			if resp.StatusCode != 200 || len(fs) == 0 || fs[len(fs)-1].name != c.last || bytes.Contains(raw, []byte("stream_interrupted")) {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			if e := lastEntry(t, env); e.Status != 200 || e.InputTokens != c.input || e.OutputTokens != c.output {
				t.Fatalf("log %+v", e.LogEntry)
			}
		})
	}
}

// TestChangingItemIDsReachChatAndMessagesOnce: a responses route that sends a new item_id on
// every event gives chat and messages clients the text, the reasoning and the arguments once.
func TestChangingItemIDsReachChatAndMessagesOnce(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	up.SetStream("fr", nodetest.Testdata(t, "responses", "upstream_changing_item_ids.sse"))
	raw := nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, strings.Replace(chatStream, "fx-chat", "fx-resp", 1)))
	var text, thought, args strings.Builder
	for _, d := range sseData(raw) {
		var c struct {
			Choices []struct {
				Delta struct {
					Content          string
					ReasoningContent string                                          `json:"reasoning_content"`
					ToolCalls        []struct{ Function struct{ Arguments string } } `json:"tool_calls"`
				}
			}
		}
		json.Unmarshal([]byte(d), &c)
		for _, ch := range c.Choices {
			text.WriteString(ch.Delta.Content)
			thought.WriteString(ch.Delta.ReasoningContent)
			for _, tc := range ch.Delta.ToolCalls {
				args.WriteString(tc.Function.Arguments)
			}
		}
	}
	if text.String() != "Checking Paris." || thought.String() != "Weather needs the tool." || args.String() != `{"city":"Paris"}` {
		t.Fatalf("chat client: text %q reasoning %q args %q", text.String(), thought.String(), args.String())
	}
	raw = nodetest.Read(t, env.Post("/v1/messages", env.Key, `{"model":"fx-resp","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	text.Reset()
	thought.Reset()
	args.Reset()
	for _, f := range frames(t, raw) {
		var ev struct {
			Delta struct {
				Text, Thinking string
				PartialJSON    string `json:"partial_json"`
			} `json:"delta"`
		}
		json.Unmarshal([]byte(f.data), &ev)
		text.WriteString(ev.Delta.Text)
		thought.WriteString(ev.Delta.Thinking)
		args.WriteString(ev.Delta.PartialJSON)
	}
	if text.String() != "Checking Paris." || thought.String() != "Weather needs the tool." || args.String() != `{"city":"Paris"}` {
		t.Fatalf("messages client: text %q thinking %q args %q", text.String(), thought.String(), args.String())
	}
}

// TestInStreamErrorsAreLoggedByWhoseFault: an upstream that refuses the request inside its
// stream (context length) logs the client's 400 and leaves the route healthy; one that fails
// (server_error) logs its 500, refunded, and counts against the route.
func TestInStreamErrorsAreLoggedByWhoseFault(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	cases := []struct {
		answer string
		status int
		fails  uint64 // the route's failures so far (and one success per case)
	}{
		{"responses_error_nested_after_reasoning", 400, 0},
		{"responses_failed_server_error_after_reasoning", 500, 1},
	}
	for i, c := range cases {
		t.Run(c.answer, func(t *testing.T) {
			up.SetStream("fr", nodetest.Testdata(t, "conversion", "streams", c.answer, "answer.responses.sse"))
			raw := nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, strings.Replace(chatStream, "fx-chat", "fx-resp", 1)))
			if e := lastEntry(t, env); e.Status != c.status || e.ChargedUSD != "0" {
				t.Fatalf("log %+v charged %s; stream %s", e.LogEntry, e.ChargedUSD, raw)
			}
			waitState(t, env, "fr", func(s *routehealth.State) bool {
				return s.Failures == c.fails && s.Successes+s.Failures == uint64(i+1)
			})
		})
	}
}
