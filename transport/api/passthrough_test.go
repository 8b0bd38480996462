package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

var update = flag.Bool("update", false, "rewrite the expected upstream bodies in testdata/passthrough (review them before keeping)")

// passCatalog has one model per reasoning class for each client format's own route format;
// each model's route is the simulator route of the same name.
const passCatalog = `
server: {first_byte_timeout: 5s, idle_stream_timeout: 5s}
models:
  - {id: c-none, kind: chat, max_output_tokens: 20, routes: [{id: c-none, format: chat, base_url: "{{SIM}}/r/c-none/v1", upstream_model: up-c-none, credential_env: NODETEST_SIM_KEY}]}
  - {id: c-always, kind: chat, reasoning: {class: always_on}, routes: [{id: c-always, format: chat, base_url: "{{SIM}}/r/c-always/v1", upstream_model: up-c-always, credential_env: NODETEST_SIM_KEY}]}
  - {id: c-toggle, kind: chat, reasoning: {class: toggle}, routes: [{id: c-toggle, format: chat, base_url: "{{SIM}}/r/c-toggle/v1", upstream_model: up-c-toggle, credential_env: NODETEST_SIM_KEY}]}
  - {id: c-effort, kind: chat, reasoning: {class: effort, efforts: [low, high]}, routes: [{id: c-effort, format: chat, base_url: "{{SIM}}/r/c-effort/v1", upstream_model: up-c-effort, credential_env: NODETEST_SIM_KEY}]}
  - {id: m-none, kind: chat, max_output_tokens: 512, routes: [{id: m-none, format: messages, base_url: "{{SIM}}/r/m-none/v1", upstream_model: up-m-none, credential_env: NODETEST_SIM_KEY}]}
  - {id: m-toggle, kind: chat, reasoning: {class: toggle}, routes: [{id: m-toggle, format: messages, base_url: "{{SIM}}/r/m-toggle/v1", upstream_model: up-m-toggle, credential_env: NODETEST_SIM_KEY}]}
  - {id: m-effort, kind: chat, reasoning: {class: effort, efforts: [low, high]}, routes: [{id: m-effort, format: messages, base_url: "{{SIM}}/r/m-effort/v1", upstream_model: up-m-effort, credential_env: NODETEST_SIM_KEY}]}
  - {id: m-adaptive, kind: chat, reasoning: {class: effort, efforts: [low, medium, high, max], adaptive: true}, routes: [{id: m-adaptive, format: messages, base_url: "{{SIM}}/r/m-adaptive/v1", upstream_model: up-m-adaptive, credential_env: NODETEST_SIM_KEY}]}
  - {id: r-none, kind: chat, max_output_tokens: 50, routes: [{id: r-none, format: responses, base_url: "{{SIM}}/r/r-none/v1", upstream_model: up-r-none, credential_env: NODETEST_SIM_KEY}]}
  - {id: r-toggle, kind: chat, reasoning: {class: toggle}, routes: [{id: r-toggle, format: responses, base_url: "{{SIM}}/r/r-toggle/v1", upstream_model: up-r-toggle, credential_env: NODETEST_SIM_KEY}]}
  - {id: r-effort, kind: chat, reasoning: {class: effort, efforts: [low, medium, high]}, routes: [{id: r-effort, format: responses, base_url: "{{SIM}}/r/r-effort/v1", upstream_model: up-r-effort, credential_env: NODETEST_SIM_KEY}]}
`

// TestSameFormatRoutesGetNativeReasoning: a client calling a route of its own format has its
// reasoning controls translated to the model's native parameter, the foreign ones removed,
// the output cap clamped to the model's, and everything else passed as it was. The upstream
// bodies the simulator received are compared with testdata/passthrough/<request>.<model>.json.
func TestSameFormatRoutesGetNativeReasoning(t *testing.T) {
	env := nodetest.Start(t, passCatalog, nodetest.Options{})
	cases := []struct {
		request, path string
		effort        map[string]string // model → X-Reasoning-Effort ("" = absent)
	}{
		{"chat_effort", "/v1/chat/completions", map[string]string{"c-none": "", "c-always": "", "c-toggle": "", "c-effort": "high"}},
		{"chat_thinking_off", "/v1/chat/completions", map[string]string{"c-none": "", "c-toggle": "", "c-effort": "none"}},
		{"messages_adaptive", "/v1/messages", map[string]string{"m-none": "", "m-toggle": "", "m-effort": "high", "m-adaptive": "high"}},
		{"messages_budget", "/v1/messages", map[string]string{"m-effort": "high", "m-adaptive": "medium"}},
		{"responses_effort", "/v1/responses", map[string]string{"r-none": "", "r-toggle": "", "r-effort": "medium"}},
	}
	dir := "../../testdata/passthrough"
	for _, c := range cases {
		body, err := os.ReadFile(filepath.Join(dir, c.request+".request.json"))
		if err != nil {
			t.Fatal(err)
		}
		for model, effort := range c.effort {
			t.Run(c.request+"/"+model, func(t *testing.T) {
				resp := env.Post(c.path, env.Key, strings.Replace(string(body), "MODEL", model, 1), "anthropic-version", "2023-06-01")
				raw := nodetest.Read(t, resp)
				if resp.StatusCode != 200 {
					t.Fatalf("%d %s", resp.StatusCode, raw)
				}
				if got := resp.Header.Get("X-Reasoning-Effort"); got != effort {
					t.Errorf("X-Reasoning-Effort %q, want %q", got, effort)
				}
				got := indentJSON(t, env.Sim.LastRequest(model))
				name := filepath.Join(dir, c.request+"."+model+".json")
				if *update {
					os.WriteFile(name, got, 0o644)
					return
				}
				want, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, indentJSON(t, want)) {
					t.Errorf("the %s route received\n%s\nwant (%s)\n%s", model, got, name, want)
				}
			})
		}
	}
}

// indentJSON is b with sorted keys, indented, for comparison and golden files.
func indentJSON(t *testing.T, b []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(v)
	return out.Bytes()
}

// TestSameFormatRoutesKeepTheClientsBytes: a same-format route receives the client's body
// with only the members the gateway changes rewritten (codec/jsonpatch): member order,
// spacing, escapes and unknown members as the client wrote them, a changed member in its
// place, an added one last, a removed one with its comma.
func TestSameFormatRoutesKeepTheClientsBytes(t *testing.T) {
	env := nodetest.Start(t, passCatalog, nodetest.Options{})
	cases := []struct {
		name, path, route, body, want string
	}{
		{"chat: model in place, unknown members kept", "/v1/chat/completions", "c-none",
			"{\"x_b\": {\"z\":1, \"a\":2},\n \"messages\":[{\"role\":\"user\",\"content\":\"<hi> \\u0026\"}], \"model\" : \"c-none\",\"max_tokens\":10 }",
			"{\"x_b\": {\"z\":1, \"a\":2},\n \"messages\":[{\"role\":\"user\",\"content\":\"<hi> \\u0026\"}], \"model\" : \"up-c-none\",\"max_tokens\":10 }"},
		{"chat: stream_options patched inside, foreign reasoning removed", "/v1/chat/completions", "c-toggle",
			`{"stream":true,"reasoning_effort":"high","stream_options":{"include_usage":false, "q":1},"messages":[{"role":"user","content":"hi"}],"model":"c-toggle"}`,
			`{"stream":true,"stream_options":{"include_usage":true, "q":1},"messages":[{"role":"user","content":"hi"}],"model":"up-c-toggle","enable_thinking":true}`},
		{"messages: model and max_tokens in place", "/v1/messages", "m-none",
			"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\n\"z_unknown\":[1, 2],\"max_tokens\": 900,\"model\":\"m-none\"}",
			"{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\n\"z_unknown\":[1, 2],\"max_tokens\": 512,\"model\":\"up-m-none\"}"},
		{"responses: reasoning patched inside, cap added last", "/v1/responses", "r-effort",
			`{"input":"hi","reasoning":{"summary":"auto","x":1,"effort":"low"},"model":"r-effort","store":false}`,
			`{"input":"hi","reasoning":{"summary":"auto","x":1,"effort":"low"},"model":"up-r-effort","store":false}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post(c.path, env.Key, c.body, "anthropic-version", "2023-06-01")
			if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			if got := string(env.Sim.LastRequest(c.route)); got != c.want {
				t.Errorf("the route received\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
