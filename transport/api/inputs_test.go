package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// inputsCatalog adds an image model with its own sizes, qualities and styles, and a text-only
// chat model whose catalog fallback takes images.
var inputsCatalog = nodetest.DefaultCatalog + `  - id: img-own
    kind: image
    sizes: [1024x1024, 1536x1024]
    qualities: [low, high]
    styles: [vivid]
    routes:
      - {id: io, format: chat, base_url: "{{SIM}}/r/io/v1", upstream_model: up-io, credential_env: NODETEST_SIM_KEY}
  - id: words
    kind: chat
    fallbacks: [chat]
    routes:
      - {id: w, format: chat, base_url: "{{SIM}}/r/w/v1", upstream_model: up-w, credential_env: NODETEST_SIM_KEY}
`

// TestImageOptionsReachTheRoute: a size, quality and style the model lists go to its chat
// route as the client chose them; auto is the first listed size; the gateway's defaults map
// any other model's size to the closest it makes and send no quality.
func TestImageOptionsReachTheRoute(t *testing.T) {
	env := nodetest.Start(t, inputsCatalog, nodetest.Options{})
	cases := []struct {
		name, body, route string
		want              map[string]any
	}{
		{"listed size, quality and style", `{"model":"img-own","prompt":"a fox","size":"1536x1024","quality":"high","style":"vivid"}`, "io",
			map[string]any{"size": "1536x1024", "quality": "high", "style": "vivid"}},
		{"auto: the first listed size", `{"model":"img-own","prompt":"a fox","size":"auto","quality":"auto"}`, "io",
			map[string]any{"size": "1024x1024", "quality": nil, "style": nil}},
		{"the gateway's defaults", `{"model":"img","prompt":"a fox","size":"4096x2304","quality":"auto"}`, "i",
			map[string]any{"size": "2752x1536", "quality": nil, "style": nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post("/v1/images/generations", env.Key, c.body)
			if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			var got map[string]any
			if err := json.Unmarshal(env.Sim.LastRequest(c.route), &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("upstream %s = %v, want %v (%v)", k, got[k], v, got)
				}
			}
		})
	}
}

// TestImagesGoToAModelThatTakesThem: a request with an image skips a model of its list without
// image input (a catalog fallback or the client's models list serves it) and is refused, naming
// the model, when no model of the list takes images; without an image the first model serves.
func TestImagesGoToAModelThatTakesThem(t *testing.T) {
	env := nodetest.Start(t, inputsCatalog, nodetest.Options{})
	const image = `{"type":"image_url","image_url":{"url":"https://example.com/fox.png"}}`
	body := func(model, extra, part string) string {
		return `{"model":"` + model + `",` + extra + `"messages":[{"role":"user","content":[{"type":"text","text":"what is it?"},` + part + `]}]}`
	}
	cases := []struct {
		name, body string
		status     int
		served     string // X-Modelgate-Model, or the refusal's message
	}{
		{"an image: the catalog fallback serves", body("words", "", image), 200, "chat"},
		{"no image: the model serves", body("words", "", `{"type":"text","text":"hi"}`), 200, "words"},
		{"an image: the client's list serves", body("open-only", `"models":["open-only","chat"],`, image), 200, "chat"},
		{"an image and no model of the list takes it", body("open-only", "", image), 400,
			`model \"open-only\" does not take images (its input_modalities: text): send the request without images, or to a model that takes them`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Post("/v1/chat/completions", env.Key, c.body)
			raw := string(nodetest.Read(t, resp))
			if resp.StatusCode != c.status {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			if c.status != 200 {
				if !strings.Contains(raw, `"message":"`+c.served+`"`) || !strings.Contains(raw, `"param":"model"`) {
					t.Errorf("refusal %s", raw)
				}
				return
			}
			if got := resp.Header.Get("X-Modelgate-Model"); got != c.served {
				t.Errorf("served by %q, want %q", got, c.served)
			}
		})
	}
}
