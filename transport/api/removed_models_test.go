package api_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// removedCatalog adds a deprecated model and a removed: list to the default test catalog.
var removedCatalog = nodetest.DefaultCatalog + `
  - id: chat-dep
    kind: chat
    deprecated_at: 2027-01-31T00:00:00Z
    replacement: chat
    routes:
      - {id: d, format: chat, base_url: "{{SIM}}/r/d/v1", credential_env: NODETEST_SIM_KEY}
removed:
  - {id: chat-old, replacement: chat-latest}
  - {id: embed-v1, replacement: embed}
  - {id: gone}
`

// TestRemovedModelsNameTheirReplacement: a call to a model of the catalog's removed: list is a
// 404 whose message names the replacement (and a "replacement" member gives it to programs), on
// every endpoint and in every envelope; the model lists leave removed models out and keep
// deprecated ones, whose answers carry Deprecation and Sunset.
func TestRemovedModelsNameTheirReplacement(t *testing.T) {
	env := nodetest.Start(t, removedCatalog, nodetest.Options{})
	const named = `the model "chat-old" has been removed; use "chat-latest" instead`
	cases := []struct {
		name, method, path, body string
		format, message          string
		fields                   map[string]string
	}{
		{"chat", "POST", "/v1/chat/completions", `{"model":"chat-old","messages":[{"role":"user","content":"hi"}]}`, "chat", named, map[string]string{"replacement": "chat-latest"}},
		{"messages", "POST", "/v1/messages", `{"model":"chat-old","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}`, "messages", named, map[string]string{"replacement": "chat-latest"}},
		{"responses", "POST", "/v1/responses", `{"model":"chat-old","input":"hi"}`, "chat", named, map[string]string{"replacement": "chat-latest"}},
		{"gemini", "POST", "/v1beta/models/chat-old:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`, "google", named, map[string]string{"replacement": "chat-latest"}},
		{"token count", "POST", "/v1/messages/count_tokens", `{"model":"chat-old","messages":[{"role":"user","content":"hi"}]}`, "messages", named, map[string]string{"replacement": "chat-latest"}},
		{"model record", "GET", "/v1/models/chat-old", "", "chat", named, map[string]string{"replacement": "chat-latest"}},
		{"gemini model record", "GET", "/v1beta/models/chat-old", "", "google", named, map[string]string{"replacement": "chat-latest"}},
		{"embeddings", "POST", "/v1/embeddings", `{"model":"embed-v1","input":"x"}`, "chat", `the model "embed-v1" has been removed; use "embed" instead`, map[string]string{"replacement": "embed"}},
		{"no replacement", "POST", "/v1/chat/completions", `{"model":"gone","messages":[{"role":"user","content":"hi"}]}`, "chat",
			`the model "gone" has been removed from this gateway; GET /v1/models lists the models this key can use`, map[string]string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Do(c.method, c.path, env.Key, c.body)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != http.StatusNotFound {
				t.Fatalf("%d, want 404: %s", resp.StatusCode, raw)
			}
			e := readEnvelope(t, raw)
			if e.Format != c.format || e.Message != c.message || !reflect.DeepEqual(e.Fields, c.fields) || !strings.Contains(e.Code, "model_not_found") {
				t.Fatalf("%s envelope %q (%s) %v; want %s %q %v", e.Format, e.Message, e.Code, e.Fields, c.format, c.message, c.fields)
			}
		})
	}
	if n := env.Sim.Calls("a") + env.Sim.Calls("b") + env.Sim.Calls("e"); n != 0 {
		t.Fatalf("calls to removed models reached an upstream %d times", n)
	}

	t.Run("lists", func(t *testing.T) {
		lists := []struct{ path, list, name, want string }{
			{"/v1/models", "data", "id", "chat,chat-dep,embed,gem,gimg,img,msg,open-only,resp,vid"},
			{"/v1beta/models", "models", "name", "models/chat,models/chat-dep,models/gem,models/msg,models/open-only,models/resp"},
		}
		for _, l := range lists {
			var out map[string][]map[string]any
			json.Unmarshal(nodetest.Read(t, env.Do("GET", l.path, env.Key, "")), &out)
			var names []string
			for _, m := range out[l.list] {
				names = append(names, m[l.name].(string))
			}
			if got := strings.Join(names, ","); got != l.want {
				t.Errorf("%s lists %s, want %s", l.path, got, l.want)
			}
		}
	})
	t.Run("deprecated keeps its headers", func(t *testing.T) {
		resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat-dep","messages":[{"role":"user","content":"hi"}]}`)
		nodetest.Read(t, resp)
		h := resp.Header
		if resp.StatusCode != 200 || h.Get("Deprecation") != "@1801353600" || h.Get("Sunset") != "Sun, 31 Jan 2027 00:00:00 GMT" ||
			h.Get("Link") != `</v1/models/chat>; rel="successor-version"` {
			t.Fatalf("%d Deprecation %q Sunset %q Link %q", resp.StatusCode, h.Get("Deprecation"), h.Get("Sunset"), h.Get("Link"))
		}
	})
}
