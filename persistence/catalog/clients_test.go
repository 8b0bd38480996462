package catalog

import (
	"net/http"
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
