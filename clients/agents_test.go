package clients

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// agentsFixture holds the User-Agent (and identifying headers) each CLI sent on its model
// calls; persistence/catalog's classification tests read it. CLIENTS_UPDATE_AGENTS=1
// rewrites it from a run.
const agentsFixture = "../testdata/clients/user-agents.json"

type agentEntry struct {
	Client    string `json:"client"`
	Version   string `json:"version"` // the pinned npm version
	Endpoint  string `json:"endpoint"`
	UserAgent string `json:"user_agent"`
	Signals   string `json:"signals,omitempty"`
}

type agentsFile struct {
	Note    string       `json:"note"`
	Clients []agentEntry `json:"clients"`
	Generic []agentEntry `json:"generic"` // clients that identify only as a generic SDK
}

// checkAgents compares the captured User-Agents with the fixture by product and version
// (e.g. "claude-cli/2.1.331"): the platform part varies by machine.
func checkAgents(t *testing.T, cells []*cell) {
	captured := map[string]agentEntry{}
	for _, c := range cells {
		for _, ex := range c.rec.modelCalls() {
			if _, seen := captured[c.client.name]; !seen && ex.userAgent != "" {
				captured[c.client.name] = agentEntry{Client: c.client.name, Version: pinned(c.client.name),
					Endpoint: endpointOf(ex.path), UserAgent: ex.userAgent, Signals: ex.signals}
			}
		}
	}
	for _, name := range sortedKeys(captured) {
		e := captured[name]
		t.Logf("captured %-8s %s  UA %q %s", name, e.Endpoint, e.UserAgent, e.Signals)
	}
	var file agentsFile
	b, err := os.ReadFile(agentsFixture)
	if err == nil {
		err = json.Unmarshal(b, &file)
	}
	if os.Getenv("CLIENTS_UPDATE_AGENTS") == "1" {
		file.Clients = nil
		for _, cl := range allClients {
			if e, ok := captured[cl.name]; ok {
				file.Clients = append(file.Clients, e)
			}
		}
		out, _ := json.MarshalIndent(file, "", "  ")
		if err := os.WriteFile(agentsFixture, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: %v (CLIENTS_UPDATE_AGENTS=1 writes it)", agentsFixture, err)
	}
	for _, want := range file.Clients {
		got, ok := captured[want.Client]
		if !ok {
			continue // the client made no model call, a failure reported above
		}
		if product(got.UserAgent) != product(want.UserAgent) {
			t.Errorf("%s sent User-Agent %q; %s has %q (CLIENTS_UPDATE_AGENTS=1 rewrites it)",
				want.Client, got.UserAgent, agentsFixture, want.UserAgent)
		}
	}
}

// product is the UA's name/version, e.g. "GeminiCLI-tui/0.61.0" of
// "GeminiCLI-tui/0.61.0/sim-chat (linux; x64; terminal)" (Gemini CLI adds the model).
func product(ua string) string {
	p, _, _ := strings.Cut(ua, " ")
	parts := strings.SplitN(p, "/", 3)
	return strings.Join(parts[:min(2, len(parts))], "/")
}

func endpointOf(path string) string {
	p, _, _ := strings.Cut(path, "?")
	if i := strings.Index(p, "/models/"); i >= 0 && strings.HasPrefix(p, "/v1beta") {
		if j := strings.LastIndex(p, ":"); j > i {
			return "/v1beta/models/{model}" + p[j:]
		}
	}
	return p
}

// pinned is the client's version in package.json.
func pinned(client string) string {
	pkgs := map[string]string{"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex",
		"gemini": "@google/gemini-cli", "opencode": "opencode-ai", "qwen": "@qwen-code/qwen-code"}
	var pj struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, _ := os.ReadFile("package.json")
	_ = json.Unmarshal(b, &pj)
	return pj.Dependencies[pkgs[client]]
}
