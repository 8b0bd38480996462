package catalog

import (
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
)

func TestClientClassification(t *testing.T) {
	r := DefaultClientRules()
	cases := []struct {
		ua      string
		headers map[string]string
		want    bool
	}{
		{"claude-cli/2.1.92 (external, cli)", nil, true},
		{"codex_cli_rs/0.132.0 (Windows 10.0.26100; x86_64) WindowsTerminal", nil, true},
		{"GeminiCLI/0.9.0/gemini-2.5-pro (linux; x64; terminal)", nil, true},
		{"Cline/4.1.16 ai-sdk/openai-compatible/3.0.30", nil, true},
		{"opencode/0.15.2 ai-sdk/anthropic/2.0.1", nil, true},
		{"kilo-code/4.1", nil, true}, // case-insensitive
		{"", nil, false},
		{"curl/8.5.0", nil, false},
		{"python-requests/2.32.3", nil, false},
		{"Go-http-client/1.1", nil, false},
		{"OpenAI/JS 5.1.0", nil, false},
		{"Anthropic/Go 1.60.0", nil, false},
		{"MyScript/1.0", nil, false}, // unknown
		{"OpenAI/JS 4.0", map[string]string{"X-Title": "Cline"}, true},
		{"", map[string]string{"originator": "codex_exec"}, true},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.ua != "" {
			h.Set("User-Agent", c.ua)
		}
		for k, v := range c.headers {
			h.Set(k, v)
		}
		if got := r.IsInteractive(h); got != c.want {
			t.Errorf("%q %v: interactive=%v, want %v", c.ua, c.headers, got, c.want)
		}
	}
}

// The exact requests of the five CLIs `make test-clients` runs (captured by its recorder,
// testdata/clients/user-agents.json) are admitted; clients that send only a generic SDK
// User-Agent are not, whatever runtime they run on.
func TestCapturedCodingClientsAndGenericSDKs(t *testing.T) {
	r := DefaultClientRules()
	cases := []struct {
		name    string
		headers map[string]string
		want    bool
	}{
		{"Claude Code 2.1.331", map[string]string{"User-Agent": "claude-cli/2.1.331 (external, sdk-cli)"}, true},
		{"Codex 0.169.0 exec", map[string]string{"User-Agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64) dumb (codex_exec; 0.169.0)",
			"originator": "codex_exec"}, true},
		{"Codex UA alone", map[string]string{"User-Agent": "codex_exec/0.169.0 (Debian 12.0.0; x86_64) dumb (codex_exec; 0.169.0)"}, true},
		{"Gemini CLI 0.61.0", map[string]string{"User-Agent": "GeminiCLI-tui/0.61.0/sim-chat (linux; x64; terminal)"}, true},
		{"opencode 1.18.33 (AI SDK on bun)", map[string]string{"User-Agent": "opencode/1.18.33 ai-sdk/provider-utils/4.0.23 runtime/bun/1.3.14"}, true},
		{"Qwen Code 0.24.4", map[string]string{"User-Agent": "QwenCode/0.24.4 (linux; x64)"}, true},
		// pi calls OpenAI-compatible endpoints through openai-node, unchanged.
		{"pi (openai-node)", map[string]string{"User-Agent": "OpenAI/JS 5.23.2"}, false},
		// cline's CLI: the AI SDK's own UA and nothing else.
		{"cline CLI (AI SDK on bun)", map[string]string{"User-Agent": "ai-sdk/openai-compatible/1.0.28 ai-sdk/provider-utils/3.0.17 runtime/bun/1.3.2"}, false},
		{"AI SDK on node", map[string]string{"User-Agent": "ai-sdk/anthropic/2.0.45 ai-sdk/provider-utils/3.0.17 runtime/node.js/v22.21.0"}, false},
		{"bare Bun fetch", map[string]string{"User-Agent": "Bun/1.3.2"}, false},
		{"bare Deno fetch", map[string]string{"User-Agent": "Deno/2.5.6"}, false},
		// The documented ways in for such a client: an app title, or a recognised User-Agent.
		{"cline CLI with X-Title", map[string]string{"User-Agent": "ai-sdk/openai-compatible/1.0.28 runtime/bun/1.3.2", "X-Title": "Cline"}, true},
		{"pi with a User-Agent override", map[string]string{"User-Agent": "opencode/1.18.33"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range c.headers {
				h.Set(k, v)
			}
			if got := r.IsInteractive(h); got != c.want {
				t.Errorf("%v: interactive=%v, want %v", c.headers, got, c.want)
			}
		})
	}
}

// TestCapturedAgentsFixture keeps the classification in step with what the pinned CLIs send:
// `make test-clients` rewrites the fixture (CLIENTS_UPDATE_AGENTS=1) when a CLI is upgraded.
func TestCapturedAgentsFixture(t *testing.T) {
	b, err := os.ReadFile("../../testdata/clients/user-agents.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Clients []agentFixture `json:"clients"`
		Generic []agentFixture `json:"generic"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Clients) != 5 || len(f.Generic) == 0 {
		t.Fatalf("fixture has %d clients and %d generic agents, want the 5 CLIs and at least one generic", len(f.Clients), len(f.Generic))
	}
	r := DefaultClientRules()
	for _, set := range []struct {
		entries []agentFixture
		want    bool
	}{{f.Clients, true}, {f.Generic, false}} {
		for _, e := range set.entries {
			if got := r.IsInteractive(e.header()); got != set.want {
				t.Errorf("%s %q %q: interactive=%v, want %v", e.Client, e.UserAgent, e.Signals, got, set.want)
			}
		}
	}
}

type agentFixture struct {
	Client    string `json:"client"`
	UserAgent string `json:"user_agent"`
	Signals   string `json:"signals"` // "Name: value; Name: value"
}

func (e agentFixture) header() http.Header {
	h := http.Header{"User-Agent": {e.UserAgent}}
	for _, kv := range strings.Split(e.Signals, ";") {
		if k, v, ok := strings.Cut(kv, ":"); ok {
			h.Set(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

func TestClientRulesFromFile(t *testing.T) {
	base := "models:\n  - id: m1\n    kind: chat\n    routes: [{id: r1, format: chat, base_url: 'http://x'}]\n"
	c, err := Parse("f.yaml", []byte(base+"clients:\n  interactive: [my-agent/]\n"))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{"User-Agent": {"my-agent/1"}}
	if !c.Clients.IsInteractive(h) || c.Clients.IsInteractive(http.Header{"User-Agent": {"claude-cli/1"}}) {
		t.Fatal("interactive list not replaced")
	}
	if len(c.Clients.Automated) == 0 {
		t.Fatal("automated defaults lost")
	}
	_, err = Parse("f.yaml", []byte(base+"clients:\n  interactive: ['']\n"))
	if err == nil || !strings.Contains(err.Error(), "f.yaml: clients.interactive: an empty prefix would match every client") {
		t.Fatalf("err = %v", err)
	}
}
