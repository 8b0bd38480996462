package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

func TestMessagesClientToChatRoute(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/messages?beta=true", env.Key, `{"model":"chat","max_tokens":100,"system":"be brief","messages":[{"role":"user","content":"reply with 3 words"}]}`, "anthropic-version", "2023-06-01")
	raw := nodetest.Read(t, resp)
	var out struct {
		Type    string `json:"type"`
		Model   string `json:"model"`
		Content []struct {
			Type, Text string
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if out.Type != "message" || out.Model != "chat" || out.StopReason != "end_turn" || len(out.Content) != 1 || len(strings.Fields(out.Content[0].Text)) != 3 || out.Usage.OutputTokens != 3 {
		t.Fatalf("answer %s", raw)
	}
	route := "a"
	if env.Sim.Calls("b") == 1 {
		route = "b"
	}
	var fwd map[string]any
	json.Unmarshal(env.Sim.LastRequest(route), &fwd)
	msgs := fwd["messages"].([]any)
	if fwd["max_tokens"] != 100.0 || msgs[0].(map[string]any)["role"] != "system" {
		t.Fatalf("upstream chat request %s", env.Sim.LastRequest(route))
	}
}

func TestChatClientToMessagesRouteStreamed(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"msg","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"reply with 4 words"}]}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 200 || !strings.HasSuffix(raw, "data: [DONE]\n\n") || !strings.Contains(raw, `"finish_reason":"stop"`) {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	if h := env.Sim.LastHeaders("m"); h.Get("x-api-key") != "sim-test-credential" || h.Get("anthropic-version") != "2023-06-01" {
		t.Fatalf("upstream headers %v", h)
	}
	if e := usage(t, env); len(e) != 1 || e[0].OutputTokens != 4 || e[0].UpstreamFormat != "messages" || e[0].ClientFormat != "chat" {
		t.Fatalf("log %+v", e)
	}
}

func TestChatClientToGeminiRouteTools(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	body := `{"model":"gem","parallel_tool_calls":true,"tools":[
	 {"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}},
	 {"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{}}}}],
	 "messages":[{"role":"user","content":"parallel please"}]}`
	resp := env.Post("/v1/chat/completions", env.Key, body)
	raw := nodetest.Read(t, resp)
	var out struct {
		Choices []struct {
			Message struct {
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	calls := out.Choices[0].Message.ToolCalls
	if out.Choices[0].FinishReason != "tool_calls" || len(calls) != 2 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"sample"}` || calls[1].Function.Arguments != `{}` || calls[0].ID == calls[1].ID {
		t.Fatalf("answer %s", raw)
	}
	if d := resp.Header.Get("X-Modelgate-Dropped"); !strings.Contains(d, "additionalProperties") {
		t.Fatalf("dropped header %q", d)
	}
	if h := env.Sim.LastHeaders("g"); h.Get("x-goog-api-key") != "sim-test-credential" {
		t.Fatalf("gemini auth header %v", h)
	}
}

func TestReasoningEffortMappedForGemini(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"gem","reasoning_effort":"medium","messages":[{"role":"user","content":"hi"}]}`)
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 || resp.Header.Get("X-Reasoning-Effort") != "high" || !strings.Contains(string(raw), `"reasoning_content":"Simulated reasoning.`) {
		t.Fatalf("%d effort=%q %s", resp.StatusCode, resp.Header.Get("X-Reasoning-Effort"), raw)
	}
	var fwd struct {
		GenerationConfig struct {
			ThinkingConfig struct {
				ThinkingBudget  int  `json:"thinkingBudget"`
				IncludeThoughts bool `json:"includeThoughts"`
			} `json:"thinkingConfig"`
		} `json:"generationConfig"`
	}
	json.Unmarshal(env.Sim.LastRequest("g"), &fwd)
	if tc := fwd.GenerationConfig.ThinkingConfig; tc.ThinkingBudget != 4096 || !tc.IncludeThoughts {
		t.Fatalf("thinking config %+v", tc)
	}
}

// Errors come in the client's own envelope.
func TestErrorsInClientFormat(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	cases := []struct {
		name, path, key, body string
		status                int
		want                  string
	}{
		{"messages 401", "/v1/messages", "", `{}`, 401, `{"type":"error","error":{"type":"authentication_error"`},
		{"messages 404", "/v1/messages", env.Key, `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, 404, `{"type":"error","error":{"type":"not_found_error"`},
		{"messages 400 names the field", "/v1/messages", env.Key, `{"model":"msg","messages":[{"role":"user","content":"x"}]}`, 400, `"type":"invalid_request_error","message":"max_tokens`},
		{"responses 404", "/v1/responses", env.Key, `{"model":"nope","input":"x"}`, 404, `{"error":{"message":`},
		{"responses previous_response_id", "/v1/responses", env.Key, `{"model":"resp","input":"x","previous_response_id":"resp_123"}`, 400, `"code":"previous_response_not_found"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, c.key, c.body, "anthropic-version", "2023-06-01")
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != c.status || !strings.Contains(raw, c.want) || !strings.Contains(raw, `"request_id":"`+resp.Header.Get("X-Request-Id")+`"`) {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
		})
	}
}

// An upstream's verdict on a request (a 4xx) reaches a client of another format translated,
// and a request a route's format cannot carry is the client's 400, not a 502.
func TestRequestErrorsAcrossFormats(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	orphan := `"messages":[{"role":"user","content":"x"},{"role":"tool","tool_call_id":"call_nope","content":"r"}]`
	cases := []struct {
		name, model string
		status      int
		want        string
	}{
		// The messages upstream refuses a tool_result that no tool_use announced.
		{"messages upstream 400, chat envelope", "msg", 400, `"type":"invalid_request_error"`},
		// Gemini needs the function name of every result; this one names no call.
		{"gemini cannot express it", "gem", 400, `"param":"messages"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post("/v1/chat/completions", env.Key, `{"model":"`+c.model+`",`+orphan+`}`)
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != c.status || !strings.HasPrefix(raw, `{"error":{"message":`) || !strings.Contains(raw, c.want) {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
		})
	}
}

func TestCountTokens(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/messages/count_tokens", env.Key, `{"model":"gem","messages":[{"role":"user","content":"hello there, how are you"}]}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 200 || raw != "{\"input_tokens\":12}\n" {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
}

// A responses client cannot carry a messages signature back: the answer says so.
func TestAnswerSignatureLossReported(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/responses", env.Key, `{"model":"msg","reasoning":{"effort":"high"},"input":"reply with 2 words"}`)
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("X-Modelgate-Dropped"), "answer.reasoning.signature") {
		t.Fatalf("%d dropped=%q %s", resp.StatusCode, resp.Header.Get("X-Modelgate-Dropped"), raw)
	}
	metrics := env.Metrics()
	if !strings.Contains(metrics, `modelgate_conversion_dropped_fields_total{client_format="responses",field="answer.reasoning.signature",upstream_format="messages"} 1`) {
		t.Fatal("dropped-fields counter missing")
	}
}

// A model whose catalog entry names a tokenizer is counted with it: "hello world" is 2
// o200k tokens plus 4 for the message.
func TestCountTokensWithTokenizer(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	resp := env.Post("/v1/messages/count_tokens", env.Key, `{"model":"resp","messages":[{"role":"user","content":"hello world"}]}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 200 || raw != "{\"input_tokens\":6}\n" {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
}
