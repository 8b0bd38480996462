package catalog

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/codec/reasoning"
)

func TestLoadValid(t *testing.T) {
	t.Setenv("CATALOG_TEST_KEY", "secret")
	c, err := LoadFile("../../testdata/catalog/valid.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, ok := c.Lookup("chat-a-latest")
	if !ok || m.ID != "chat-a" {
		t.Fatalf("alias lookup = %v, %v", m, ok)
	}
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"prompt price", m.Pricing.Prompt, money.Amount(2_500_000)},
		{"completion price", m.Pricing.Completion, money.Amount(10_000_000)},
		{"cache read", m.Pricing.CacheRead, money.Amount(1_250_000)},
		{"cache write defaults to prompt", m.Pricing.CacheWrite, money.Amount(2_500_000)},
		{"efforts sorted", strings.Join(m.Reasoning.Efforts, ","), "low,high"},
		{"adaptive thinking", m.Reasoning.Adaptive, true},
		{"context rule default", m.ContextRule, ContextSharedWindow},
		{"multiplier", m.QuotaMultiplier, 1.5},
		{"modality default", m.Architecture.Modality, "text->text"},
		{"base url trimmed", m.Routes[0].BaseURL, "http://127.0.0.1:1/v1"},
		{"weight", m.Routes[0].Weight, 3},
		{"default weight", m.Routes[1].Weight, 1},
		{"upstream default", m.Routes[1].UpstreamModel, "chat-a"},
		{"credential", m.Routes[0].Credential(), "secret"},
		{"zdr", m.HasZDRRoute(), true},
		{"connect override", m.Routes[1].Effective(c.Server).Connect, 2 * time.Second},
		{"first byte from server", m.Routes[1].Effective(c.Server).FirstByte, 30 * time.Second},
		{"idle default", m.Routes[1].Effective(c.Server).IdleStream, DefaultIdleStreamTimeout},
		{"max call default", c.Server.MaxCallDuration, DefaultMaxCallDuration},
		{"body limit", c.Server.MaxBodyBytes, int64(1048576)},
		{"embedding modality", c.Models()[1].Architecture.OutputModalities[0], "embeddings"},
		{"route count", len(c.Routes()), 3},
	}
	for _, ck := range checks {
		if ck.got != ck.want {
			t.Errorf("%s = %v, want %v", ck.name, ck.got, ck.want)
		}
	}
}

func TestValidationErrorsNameFileModelAndField(t *testing.T) {
	base := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
	cases := []struct {
		name string
		yaml string
		want string
	}{
		{"unknown field", "models:\n  - id: m1\n    kind: chat\n    colour: red\n", `f.yaml: line 4: models[0]: unknown field "colour" (docs/catalog.md lists the fields)`},
		{"no models", "server: {}\n", "f.yaml: models: at least one model is required"},
		{"bad kind", strings.Replace(base, "kind: chat", "kind: audio", 1), "f.yaml: model m1: kind: \"audio\" must be chat, embedding, image or video"},
		{"bad price", base + "    pricing: {prompt: '1e-6'}\n", "f.yaml: model m1: pricing.prompt: amount \"1e-6\" is not a plain non-negative decimal number"},
		{"bad format", strings.Replace(base, "format: chat", "format: soap", 1), "f.yaml: model m1: routes[0].format: \"soap\" must be chat, messages, gemini or responses"},
		{"bad url", strings.Replace(base, "http://x", "ftp://x", 1), "f.yaml: model m1: routes[0].base_url"},
		{"secret in file", strings.Replace(base, "base_url", "credential_env: sk-abc, base_url", 1), "routes[0].credential_env: must name an environment variable"},
		{"unset env", strings.Replace(base, "base_url", "credential_env: CATALOG_UNSET_VAR, base_url", 1), "environment variable CATALOG_UNSET_VAR is not set"},
		{"no routes", "models:\n  - id: m1\n    kind: chat\n", "f.yaml: model m1: routes: at least one route is required"},
		{"dup alias", base + "    aliases: [m1]\n", "\"m1\" is used by more than one model or alias"},
		{"bad effort", base + "    reasoning: {class: effort, efforts: [extreme]}\n", "reasoning.efforts: \"extreme\" must be low, medium, high or max"},
		{"adaptive without effort or toggle", base + "    reasoning: {class: always_on, adaptive: true}\n", "f.yaml: model m1: reasoning.adaptive: only models of class effort or toggle take adaptive thinking"},
		{"output too big", base + "    context_length: 10\n    max_output_tokens: 20\n", "max_output_tokens: 20 exceeds context_length 10"},
		{"bad duration", strings.Replace(base, "base_url", "timeouts: {connect: soon}, base_url", 1), "routes[0].timeouts.connect: \"soon\" is not a positive duration"},
		{"multiplier below 1", base + "    quota_multiplier: 0.5\n", "quota_multiplier: 0.5 must be between 1 and 1000"},
		{"unknown replacement", base + "    replacement: m9\n", "replacement: model \"m9\" is not in the catalog"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("f.yaml", []byte(c.yaml))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	_, err := LoadFile("/nonexistent/catalog.yaml")
	if err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Fatalf("err = %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// A model's reasoning block reaches codec/reasoning whole: Reasoning.Model carries each
// field the YAML sets (the codec reads no catalog record of its own).
func TestReasoningModelCarriesTheBlock(t *testing.T) {
	cases := []struct {
		name  string
		block string
		want  reasoning.Model
	}{
		{"none by default", "", reasoning.Model{Class: reasoning.ClassNone}},
		{"effort, sorted, adaptive", "{class: effort, efforts: [max, low], adaptive: true}",
			reasoning.Model{Class: reasoning.ClassEffort, Efforts: []string{"low", "max"}, Adaptive: true}},
		{"always on, inline", "{class: always_on, inline: true}", reasoning.Model{Class: reasoning.ClassAlwaysOn, Inline: true}},
		{"toggle", "{class: toggle}", reasoning.Model{Class: reasoning.ClassToggle}},
	}
	for _, c := range cases {
		yaml := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
		if c.block != "" {
			yaml += "    reasoning: " + c.block + "\n"
		}
		cat, err := Parse("f.yaml", []byte(yaml))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		m, _ := cat.Lookup("m1")
		got := m.Reasoning.Model()
		if got.Class != c.want.Class || !slices.Equal(got.Efforts, c.want.Efforts) || got.Inline != c.want.Inline || got.Adaptive != c.want.Adaptive {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
