package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// The demo's auto model may pick every chat model of the demo, in the file's order, and
// counts one call; every chat model of the demo takes images.
func TestDemoAutoModelCoversEveryChatModel(t *testing.T) {
	t.Setenv("MODELGATE_SIM_KEY", "demo")
	c, err := catalog.Parse("demo.yaml", []byte(strings.ReplaceAll(demoCatalog, "{{SIM}}", "http://127.0.0.1:1")))
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
	if want := []string{"sim-chat", "sim-messages", "sim-gemini", "sim-responses"}; !slices.Equal(got, want) {
		t.Fatalf("candidates %v, want %v", got, want)
	}
	if slices.Sort(got); !slices.Equal(got, chat) { // Models() is sorted by id
		t.Fatalf("candidates %v, chat models %v", got, chat)
	}
	if auto.Auto.Policy != catalog.AutoOrdered || auto.QuotaMultiplier != 1 || auto.ContextLength != 1_000_000 {
		t.Fatalf("auto: policy %s, multiplier %v, context %d", auto.Auto.Policy, auto.QuotaMultiplier, auto.ContextLength)
	}
}
