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
