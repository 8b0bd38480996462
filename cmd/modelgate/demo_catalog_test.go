package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// The demo's auto model may pick every chat model of the demo, in the file's order, and
// counts one call; every chat model of the demo takes images.
func TestDemoAutoModelCoversEveryChatModel(t *testing.T) {
	for _, kv := range demoSimEnv() {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	dir := t.TempDir()
	sa := filepath.Join(dir, "sa.json")
	path := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(sa, []byte(`{"type":"service_account"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := writeDemoCatalog(path, "http://127.0.0.1:1", sa, ""); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var chat []string
	for _, m := range c.Models() {
		if m.Kind == catalog.KindChat && !m.IsAuto() {
			chat = append(chat, m.ID)
			if !m.AcceptsImages() { // the simulator reads images in every format
				t.Errorf("%s: input_modalities %v, want image among them", m.ID, m.Architecture.InputModalities)
			}
		}
	}
	auto, ok := c.Lookup("auto")
	if !ok || !auto.IsAuto() {
		t.Fatalf("the demo has no auto model \"auto\": %+v", auto)
	}
	var got []string
	for _, m := range c.Candidates(auto) {
		got = append(got, m.ID)
	}
	if want := []string{"sim-chat", "sim-messages", "sim-gemini", "sim-responses", "sim-bedrock-claude", "sim-converse",
		"sim-vertex-gemini", "sim-vertex-claude", "sim-azure"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	if slices.Sort(got); !slices.Equal(got, chat) { // Models() is sorted by id
		t.Fatalf("candidates %v, chat models %v", got, chat)
	}
	if auto.Auto.Policy != catalog.AutoOrdered || auto.QuotaMultiplier != 1 || auto.ContextLength != 1_000_000 {
		t.Fatalf("auto: policy %s, multiplier %v, context %d", auto.Auto.Policy, auto.QuotaMultiplier, auto.ContextLength)
	}
}
