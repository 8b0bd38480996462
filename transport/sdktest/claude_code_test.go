package sdktest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// claudeCodeDir holds two requests Claude Code 2.1.328 sent and its headers (see the README).
const claudeCodeDir = "../../testdata/messages/claude_code"

// claudeCodeCatalog is nodetest's catalog with room for Claude Code's requests (~12k input
// tokens, max_tokens 32000) and msg as a Claude model that takes only adaptive thinking, the
// kind Claude Code's effort request is meant for.
func claudeCodeCatalog(t *testing.T) string {
	cat := nodetest.DefaultCatalog
	for _, r := range []struct{ old, new string }{
		{"    context_length: 1000\n    max_output_tokens: 100\n", ""},
		{"    max_output_tokens: 512\n    pricing: {prompt: \"0.000003\"", "    max_output_tokens: 32000\n    pricing: {prompt: \"0.000003\""},
		{"reasoning: {class: toggle}", "reasoning: {class: effort, efforts: [low, medium, high, max], adaptive: true}"},
	} {
		if strings.Count(cat, r.old) != 1 {
			t.Fatalf("nodetest.DefaultCatalog changed: %q is not in it once", r.old)
		}
		cat = strings.Replace(cat, r.old, r.new, 1)
	}
	// The cloud models, likewise: Claude on Bedrock and Vertex take what msg takes.
	cloud := strings.ReplaceAll(nodetest.CloudModels, "    max_output_tokens: 512\n    pricing: {prompt: \"0.000003\"", "    max_output_tokens: 32000\n    pricing: {prompt: \"0.000003\"")
	cloud = strings.ReplaceAll(cloud, "reasoning: {class: toggle}", "reasoning: {class: effort, efforts: [low, medium, high, max], adaptive: true}")
	return cat + cloud
}

// TestClaudeCodeRequests sends Claude Code's first turn and its follow-up after a tool call,
// streamed, with its headers, to a model of each upstream format: every answer is a 200 with a
// messages stream anthropic-sdk-go accumulates; the messages route receives the client's
// anthropic-beta and the body unchanged but for model; formats with one system field report
// the environment turn's lost position.
func TestClaudeCodeRequests(t *testing.T) {
	env := nodetest.Start(t, claudeCodeCatalog(t), nodetest.Options{})
	client := anthropicClient(env, env.Key)
	var headers map[string]string
	if err := json.Unmarshal(readFixture(t, "headers.json"), &headers); err != nil {
		t.Fatal(err)
	}
	var opts []option.RequestOption
	for k, v := range headers {
		switch strings.ToLower(k) {
		case "x-api-key", "content-type":
		default:
			opts = append(opts, option.WithHeader(k, v))
		}
	}
	cases := []struct {
		turn string
		stop anthropic.BetaStopReason // the simulator calls the first tool on a user turn
	}{
		{"first_turn", anthropic.BetaStopReasonToolUse},
		{"tool_followup", anthropic.BetaStopReasonEndTurn},
	}
	for _, c := range cases {
		captured := readFixture(t, c.turn+".json")
		forEachModel(t, env, func(t *testing.T, m model) {
			t.Run(c.turn, func(t *testing.T) {
				body := bytes.Replace(captured, []byte(`"model": "sim-messages"`), []byte(`"model": "`+m.ID+`"`), 1)
				var resp *http.Response
				stream := client.Beta.Messages.NewStreaming(ctx(t), anthropic.BetaMessageNewParams{},
					append(opts, option.WithRequestBody("application/json", body), option.WithResponseInto(&resp))...)
				defer stream.Close()
				var msg anthropic.BetaMessage
				var events []string
				for stream.Next() {
					ev := stream.Current()
					events = append(events, ev.Type)
					if err := msg.Accumulate(ev); err != nil {
						t.Fatalf("Accumulate(%s): %v", ev.RawJSON(), err)
					}
				}
				if err := stream.Err(); err != nil {
					t.Fatalf("stream: %v", err)
				}
				if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
					t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
				}
				if events[0] != "message_start" || events[len(events)-1] != "message_stop" {
					t.Errorf("events %q", events)
				}
				if string(msg.Model) != m.ID || msg.StopReason != c.stop || len(msg.Content) == 0 || msg.Usage.InputTokens == 0 {
					t.Errorf("message %s, want model %s, stop %s, content and input usage", msg.RawJSON(), m.ID, c.stop)
				}
				wantEffort := "high" // output_config.effort: every reasoning model here lists high
				if m.Reasoning.Class == "none" {
					wantEffort = ""
				}
				if got := resp.Header.Get("X-Reasoning-Effort"); got != wantEffort {
					t.Errorf("X-Reasoning-Effort %q, want %q", got, wantEffort)
				}
				checkClaudeCodeUpstream(t, env, m, body, headers["anthropic-beta"], resp.Header.Get("X-Modelgate-Dropped"))
			})
		})
	}
}

// Claude Code counts tokens with the same body (interactive sessions do): the system turn in
// messages is no 400 there either.
func TestClaudeCodeCountTokens(t *testing.T) {
	env := nodetest.Start(t, claudeCodeCatalog(t), nodetest.Options{})
	for _, turn := range []string{"first_turn", "tool_followup"} {
		resp := env.Post("/v1/messages/count_tokens?beta=true", env.Key, string(bytes.Replace(readFixture(t, turn+".json"),
			[]byte(`"model": "sim-messages"`), []byte(`"model": "msg"`), 1)), "anthropic-version", "2023-06-01")
		raw := nodetest.Read(t, resp)
		var out struct {
			InputTokens int `json:"input_tokens"`
		}
		if err := json.Unmarshal(raw, &out); err != nil || resp.StatusCode != 200 || out.InputTokens < 1000 {
			t.Errorf("%s: %d %s", turn, resp.StatusCode, raw)
		}
	}
}

// checkClaudeCodeUpstream: a messages route gets the client's beta flags and its body with the
// route's model id; others report what they could not carry.
func checkClaudeCodeUpstream(t *testing.T, env *nodetest.Env, m model, body []byte, beta, dropped string) {
	t.Helper()
	route := m.Routes[0]
	if m.Format != "messages" {
		position := strings.Contains(dropped, "messages[].role=system (position)")
		if want := m.Format == "gemini" || m.Format == "converse"; position != want {
			t.Errorf("X-Modelgate-Dropped %q: position loss %v, want %v", dropped, position, want)
		}
		if !strings.Contains(dropped, "context_management") || !strings.Contains(dropped, "messages[].cache_control") {
			t.Errorf("X-Modelgate-Dropped %q, want context_management and messages[].cache_control", dropped)
		}
		return
	}
	if dropped != "" {
		t.Errorf("X-Modelgate-Dropped %q on the same-format route", dropped)
	}
	want := bytes.Replace(body, []byte(`"model": "`+m.ID+`"`), []byte(`"model": "`+m.Upstreams[0]+`"`), 1)
	wantBeta := beta
	switch m.Provider {
	case catalog.ProviderBedrock: // the model and stream mode go in the path, the flags in the body
		wantBeta = ""
		want = patchJSON(t, want, map[string]any{"model": nil, "stream": nil, "anthropic_version": "bedrock-2023-05-31",
			"anthropic_beta": strings.Split(beta, ",")})
	case catalog.ProviderVertex: // the model goes in the path
		want = patchJSON(t, want, map[string]any{"model": nil, "anthropic_version": "vertex-2023-10-16"})
	}
	if got := env.Sim.LastHeaders(route).Get("anthropic-beta"); got != wantBeta {
		t.Errorf("the messages route got anthropic-beta %q, want %q", got, wantBeta)
	}
	if g, w := canonicalJSON(t, env.Sim.LastRequest(route)), canonicalJSON(t, want); g != w {
		t.Errorf("the messages route got a changed body:\n got: %.400s\nwant: %.400s", g, w)
	}
}

// patchJSON sets top-level members of the object b (a nil value removes the member).
func patchJSON(t *testing.T, b []byte, set map[string]any) []byte {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	for k, x := range set {
		if x == nil {
			delete(v, k)
		} else {
			v[k] = x
		}
	}
	out, _ := json.Marshal(v)
	return out
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(claudeCodeDir + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func canonicalJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
