package catalog

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// ClientRules classify a request's client from its metadata. Plans without allow_automated
// admit only interactive coding clients; everything else gets 403 "coding agent required".
// Rules are data: the operator's `clients:` section replaces any list it names.
type ClientRules struct {
	// Interactive are User-Agent prefixes of interactive coding clients (case-insensitive).
	Interactive []string
	// Automated are User-Agent prefixes of generic runtimes, SDKs used bare and automation.
	// They win over Interactive: a UA that starts like both is automated.
	Automated []string
	// Signals are headers whose value (by prefix) marks an interactive coding client whatever
	// the User-Agent, e.g. Codex's `originator` or the app titles Cline and Roo send.
	Signals map[string][]string
}

// DefaultClientRules is what a catalog without `clients:` uses.
func DefaultClientRules() ClientRules {
	return ClientRules{
		Interactive: []string{
			"claude-cli/", "codex_cli_rs/", "codex_exec/", "codex_vscode/", "codex_sdk_ts/",
			"opencode/", "QwenCode/", "Cline/", "RooCode/", "Kilo-Code/", "GeminiCLI",
			"Continue/", "Continue-CLI/", "aider/",
		},
		Automated: []string{
			"curl/", "Wget/", "python-requests/", "python-httpx/", "aiohttp/", "Go-http-client/",
			"node-fetch", "undici", "axios/", "okhttp/", "PostmanRuntime/", "litellm/",
			"OpenAI/", "AsyncOpenAI/", "AzureOpenAI/", "Anthropic/", "AsyncAnthropic/", "google-genai-sdk/",
			// The Vercel AI SDK's own UA (ai-sdk/<provider>/<v> … runtime/<name>/<v>) and bare
			// JS runtimes: clients built on them that add no name of their own (cline's CLI).
			// opencode puts "opencode/<v>" first, so it still matches Interactive.
			"ai-sdk/", "Bun/", "Deno/",
		},
		Signals: map[string][]string{
			"originator": {"codex_"},
			"x-title":    {"Cline", "Roo Code", "Kilo Code"},
		},
	}
}

// IsInteractive reports whether the request comes from an interactive coding client.
func (r ClientRules) IsInteractive(h http.Header) bool {
	for name, prefixes := range r.Signals {
		if v := h.Get(name); v != "" && hasPrefixFold(v, prefixes) {
			return true
		}
	}
	ua := strings.TrimSpace(h.Get("User-Agent"))
	if ua == "" || hasPrefixFold(ua, r.Automated) {
		return false
	}
	return hasPrefixFold(ua, r.Interactive)
}

func hasPrefixFold(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

type clientsDoc struct {
	Interactive []string            `yaml:"interactive"`
	Automated   []string            `yaml:"automated"`
	Signals     map[string][]string `yaml:"signals"`
}

func (v *validator) clients(d *clientsDoc) ClientRules {
	r := DefaultClientRules()
	if d == nil {
		return r
	}
	check := func(field string, list []string) {
		for _, p := range list {
			if strings.TrimSpace(p) == "" {
				v.fail("", "clients."+field, "an empty prefix would match every client")
			}
		}
	}
	if d.Interactive != nil {
		check("interactive", d.Interactive)
		r.Interactive = d.Interactive
	}
	if d.Automated != nil {
		check("automated", d.Automated)
		r.Automated = d.Automated
	}
	if d.Signals != nil {
		for _, name := range slices.Sorted(maps.Keys(d.Signals)) { // errors in the same order each time
			check(fmt.Sprintf("signals.%s", name), d.Signals[name])
		}
		r.Signals = d.Signals
	}
	return r
}
