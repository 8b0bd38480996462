package api_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// onlyRoute makes every route but keep fail with 500 and resets the others.
func onlyRoute(env *nodetest.Env, keep string) {
	for _, r := range []string{"a", "b"} {
		if r != keep {
			env.Sim.SetBehavior(r, simulator.Behavior{FailStatus: 500})
		}
	}
}

func TestChatPlainPassThrough(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	body := `{"model":"chat-latest","messages":[{"role":"user","content":"reply with 4 words cached 1"}],"temperature":0.2,"x_future_field":{"a":1}}`
	resp := env.Post("/v1/chat/completions", env.Key, body)
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	route := "a"
	if env.Sim.Calls("b") == 1 {
		route = "b"
	}
	if out.Model != "chat-latest" || out.Choices[0].FinishReason != "stop" || out.Usage.CompletionTokens != 4 || out.Usage.PromptTokens != 6 {
		t.Fatalf("answer = %s", raw)
	}
	var fwd map[string]any
	json.Unmarshal(env.Sim.LastRequest(route), &fwd)
	if fwd["model"] != "up-"+route || fwd["temperature"] != 0.2 || fwd["x_future_field"] == nil {
		t.Fatalf("forwarded body = %v", fwd)
	}
	if h := env.Sim.LastHeaders(route); h.Get("Authorization") != "Bearer sim-test-credential" {
		t.Fatalf("upstream auth = %q", h.Get("Authorization"))
	}
	// The request log holds counts and exact cost: 5 uncached input at 1e-6, 1 cached at
	// 1e-7, 4 output at 2e-6 = 0.0000131.
	entries := usage(t, env)
	if len(entries) != 1 {
		t.Fatalf("entries = %+v", entries)
	}
	e := entries[0]
	if e.InputTokens != 5 || e.CachedTokens != 1 || e.OutputTokens != 4 || e.CostUSD != "0.0000131" || e.Model != "chat" || e.Route != route || e.Status != 200 || e.ClientFormat != "chat" || e.UpstreamFormat != "chat" {
		t.Fatalf("log entry = %+v", e)
	}
}

type usageEntry struct {
	persistence.LogEntry
	CostUSD    string `json:"list_cost_usd"` // the usage at the model's prices
	ChargedUSD string `json:"cost_usd"`      // what credits paid
}

func usage(t *testing.T, env *nodetest.Env) []usageEntry {
	t.Helper()
	resp := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/usage", "")
	var out struct {
		Data  []usageEntry `json:"data"`
		Total string       `json:"total_list_cost_usd"`
	}
	raw := nodetest.Read(t, resp)
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("usage: %d %s", resp.StatusCode, raw)
	}
	return out.Data
}

// TestChatStreamChunkByChunk proves the gateway relays each chunk as it arrives: with the
// upstream pacing 10 chunks a second, the client sees the first content long before the last.
func TestChatStreamChunkByChunk(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	for _, r := range []string{"a", "b"} {
		env.Sim.SetBehavior(r, simulator.Behavior{TokensPerSecond: 10})
	}
	start := time.Now()
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","stream":true,"messages":[{"role":"user","content":"reply with 8 words"}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var arrivals []time.Duration
	var text strings.Builder
	var sawUsage, done bool
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "data: ") {
			continue
		}
		data := strings.TrimPrefix(line, "data: ")
		if data == "[DONE]" {
			done = true
			break
		}
		var chunk struct {
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Content string `json:"content"`
				} `json:"delta"`
			} `json:"choices"`
			Usage json.RawMessage `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("bad chunk %q", data)
		}
		if chunk.Model != "chat" {
			t.Fatalf("chunk model %q", chunk.Model)
		}
		if len(chunk.Choices) == 0 {
			sawUsage = true
		} else if c := chunk.Choices[0].Delta.Content; c != "" {
			text.WriteString(c)
			arrivals = append(arrivals, time.Since(start))
		}
	}
	if !done || sawUsage {
		t.Fatalf("done=%v; usage chunk leaked to a client that did not ask = %v", done, sawUsage)
	}
	if got := text.String(); got != "Simulated reply from up-a. alpha bravo charlie delta echo" && got != "Simulated reply from up-b. alpha bravo charlie delta echo" {
		// the simulator names the upstream model; either route may serve
		if len(strings.Fields(got)) != 8 {
			t.Fatalf("text = %q", got)
		}
	}
	if len(arrivals) != 8 || arrivals[7]-arrivals[0] < 500*time.Millisecond {
		t.Fatalf("arrivals %v: chunks were buffered, not streamed", arrivals)
	}
	// Usage was still captured for the log, from the chunk the gateway asked for.
	if e := usage(t, env); len(e) != 1 || e[0].OutputTokens != 8 || !e[0].Stream {
		t.Fatalf("log = %+v", e)
	}
}

func TestChatStreamKeepsClientUsageChunk(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"reply with 2 words"}]}`)
	raw := string(nodetest.Read(t, resp))
	if !strings.Contains(raw, `"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":2`) || !strings.HasSuffix(raw, "data: [DONE]\n\n") {
		t.Fatalf("stream = %s", raw)
	}
}

// A stream cut after the client got bytes ends with an error event, never silently.
func TestChatStreamBrokenMidwayEndsWithErrorEvent(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	for _, r := range []string{"a", "b"} {
		env.Sim.SetBehavior(r, simulator.Behavior{DropAfterChunks: 3})
	}
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	raw := string(nodetest.Read(t, resp))
	events := strings.Split(strings.TrimSpace(raw), "\n\n")
	last := events[len(events)-1]
	if resp.StatusCode != 200 || len(events) != 4 || !strings.Contains(last, `"code":"stream_interrupted"`) || strings.Contains(raw, "[DONE]") {
		t.Fatalf("stream = %q", raw)
	}
	if e := usage(t, env); len(e) != 1 || e[0].Status != 502 {
		t.Fatalf("log = %+v", e)
	}
}

func TestChatToolCallsPassThrough(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	body := `{"model":"chat","stream":true,"parallel_tool_calls":true,"tools":[
	 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
	 {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}],
	 "messages":[{"role":"user","content":"parallel please"}]}`
	resp := env.Post("/v1/chat/completions", env.Key, body)
	raw := string(nodetest.Read(t, resp))
	args := map[int]string{}
	names := map[int]string{}
	for _, ev := range strings.Split(raw, "\n\n") {
		data := strings.TrimPrefix(strings.TrimSpace(ev), "data: ")
		if data == "" || data == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int `json:"index"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
			} `json:"choices"`
		}
		json.Unmarshal([]byte(data), &c)
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				names[tc.Index] += tc.Function.Name
			}
		}
	}
	if names[0] != "get_weather" || args[0] != `{"city":"sample"}` || names[1] != "get_time" || args[1] != `{}` {
		t.Fatalf("names %v args %v\n%s", names, args, raw)
	}
}

func TestEmbeddings(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/embeddings", env.Key, `{"model":"embed","input":["one two","three"]}`)
	raw := nodetest.Read(t, resp)
	var out struct {
		Model string `json:"model"`
		Data  []struct {
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 || out.Model != "embed" || len(out.Data) != 2 || len(out.Data[0].Embedding) != 8 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if e := usage(t, env); len(e) != 1 || e[0].InputTokens != 3 || e[0].CostUSD != "0.0000003" {
		t.Fatalf("log = %+v", e)
	}
}
