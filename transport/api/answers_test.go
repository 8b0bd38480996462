package api_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestAnswersNameTheClientsModel: an upstream that pretty-prints its answer or echoes a dated
// id (gpt-4o -> gpt-4o-2024-08-06) never leaks it. Whole answers relayed on same-format paths
// are the upstream's bytes with only the model value changed (testdata/<format>/model), and
// every event of a relayed stream that carries a model names the client's.
func TestAnswersNameTheClientsModel(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	whole := []struct {
		name, route, path, body, golden string
	}{
		{"chat", "fc", "/v1/chat/completions", `{"model":"fx-chat","messages":[{"role":"user","content":"hi"}]}`, "chat/model/whole_pretty_dated"},
		// Mistral's content array becomes content and reasoning_content (chat.RewriteAnswer).
		{"chat_content_array", "fc", "/v1/chat/completions", `{"model":"fx-chat","messages":[{"role":"user","content":"hi"}]}`, "chat/answer/mistral_thinking_array"},
		{"embeddings", "fe", "/v1/embeddings", `{"model":"fx-embed","input":"hi"}`, "chat/model/embeddings"},
		{"messages", "fm", "/v1/messages", `{"model":"fx-msg","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`, "messages/model/whole_pretty_dated"},
		{"responses", "fr", "/v1/responses", `{"model":"fx-resp","input":"hi"}`, "responses/model/whole_pretty_dated"},
	}
	for _, c := range whole {
		t.Run("whole/"+c.name, func(t *testing.T) {
			up.SetJSON(c.route, nodetest.Testdata(t, c.golden+".in.json"))
			resp := env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01")
			got := nodetest.Read(t, resp)
			var req struct{ Model string }
			json.Unmarshal([]byte(c.body), &req)
			want := bytes.ReplaceAll(nodetest.Testdata(t, c.golden+".want.json"), []byte(`"my-model"`), []byte(`"`+req.Model+`"`))
			if resp.StatusCode != 200 || !bytes.Equal(got, want) {
				t.Fatalf("%d\n got: %s\nwant: %s", resp.StatusCode, got, want)
			}
		})
	}
	streams := []struct {
		name, route, path, body, answer string
		models                          int // events that carry a model
	}{
		{"messages", "fm", "/v1/messages", `{"model":"fx-msg","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "messages_stop_without_blank_line/answer.messages.sse", 1},
		{"responses", "fr", "/v1/responses", `{"model":"fx-resp","stream":true,"input":"hi"}`, "responses_completed_without_blank_line/answer.responses.sse", 3},
	}
	for _, c := range streams {
		t.Run("stream/"+c.name, func(t *testing.T) {
			answer := nodetest.Testdata(t, "conversion", "streams", c.answer)
			// Pretty spacing and a dated id, as some upstreams send them.
			answer = bytes.ReplaceAll(answer, []byte(`"model":"`), []byte(`"model" : "`))
			up.SetStream(c.route, answer)
			raw := nodetest.Read(t, env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01"))
			var req struct{ Model string }
			json.Unmarshal([]byte(c.body), &req)
			n := 0
			for _, f := range frames(t, raw) {
				var ev struct {
					Model    *string
					Message  struct{ Model *string }
					Response struct{ Model *string }
				}
				json.Unmarshal([]byte(f.data), &ev)
				for _, m := range []*string{ev.Model, ev.Message.Model, ev.Response.Model} {
					if m != nil {
						n++
						if *m != req.Model {
							t.Errorf("%s names model %q", f.name, *m)
						}
					}
				}
			}
			if n != c.models {
				t.Errorf("%d events carry a model, want %d: %s", n, c.models, raw)
			}
		})
	}
}

// TestReasoningBesideOutputIsBilled: a chat-format provider that counts reasoning beside
// completion_tokens (xAI: total = prompt + completion + reasoning) is read right: clients of
// every format see output = visible + reasoning, and the log bills 9 visible + 94 reasoning.
func TestReasoningBesideOutputIsBilled(t *testing.T) {
	env, up := nodetest.StartWithFixed(t, nodetest.Options{})
	// 26 uncached input at 1e-6, 6 cached at 1e-7, (9 + 94) output at 2e-6.
	const cost = "0.0002326"
	check := func(t *testing.T) {
		t.Helper()
		e := lastEntry(t, env)
		if e.Status != 200 || e.InputTokens != 26 || e.CachedTokens != 6 || e.OutputTokens != 9 || e.ReasoningTokens != 94 || e.CostUSD != cost {
			t.Fatalf("log %+v cost %s", e.LogEntry, e.CostUSD)
		}
	}
	t.Run("messages client, whole", func(t *testing.T) {
		up.SetJSON("fc", nodetest.Testdata(t, "chat", "usage", "xai_reasoning.json"))
		raw := nodetest.Read(t, env.Post("/v1/messages", env.Key, `{"model":"fx-chat","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`))
		if !json.Valid(raw) || !strings.Contains(string(raw), `"output_tokens":103`) || !strings.Contains(string(raw), `"input_tokens":26`) {
			t.Fatalf("%s", raw)
		}
		check(t)
	})
	t.Run("responses client, streamed", func(t *testing.T) {
		up.SetStream("fc", nodetest.Testdata(t, "chat", "relay", "xai_usage.upstream.sse"))
		raw := nodetest.Read(t, env.Post("/v1/responses", env.Key, `{"model":"fx-chat","stream":true,"input":"hi"}`))
		fs := frames(t, raw)
		last := fs[len(fs)-1]
		if last.name != "response.completed" || !strings.Contains(last.data, `"output_tokens":103,"output_tokens_details":{"reasoning_tokens":94}`) {
			t.Fatalf("%s", last.data)
		}
		check(t)
	})
	// Chat clients on the same-format path get the chat convention too: completion_tokens 103
	// (reasoning included), the total and every other byte as xAI sent them.
	const chatUsage = `"completion_tokens":103,"total_tokens":135,`
	t.Run("chat client, same format, whole", func(t *testing.T) {
		up.SetJSON("fc", nodetest.Testdata(t, "chat", "usage", "xai_reasoning.json"))
		raw := nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, `{"model":"fx-chat","messages":[{"role":"user","content":"hi"}]}`))
		if !strings.Contains(string(raw), `"usage":{"prompt_tokens":32,`+chatUsage+`"prompt_tokens_details":{"text_tokens":32,`) {
			t.Fatalf("%s", raw)
		}
		check(t)
	})
	t.Run("chat client, same format, streamed", func(t *testing.T) {
		up.SetStream("fc", nodetest.Testdata(t, "chat", "relay", "xai_usage.upstream.sse"))
		raw := nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatStream))
		if !strings.Contains(string(raw), `"usage":{"prompt_tokens":32,`+chatUsage) {
			t.Fatalf("%s", raw)
		}
		check(t)
	})
}
