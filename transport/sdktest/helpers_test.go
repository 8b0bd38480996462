package sdktest

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// modelIDs are the catalog models under test, one per upstream format: chat (chat
// completions), msg (Anthropic messages), gem (Gemini), resp (OpenAI responses); and one per
// cloud route (nodetest.CloudModels): bdr (Claude on Bedrock), cnv (Bedrock's Converse), vgem
// and vmsg (Gemini and Claude on Vertex AI), az and azr (Azure OpenAI chat and responses).
var modelIDs = []string{"chat", "msg", "gem", "resp", "bdr", "cnv", "vgem", "vmsg", "az", "azr"}

// model is what a test needs to know about one catalog model.
type model struct {
	ID        string
	Format    string   // the upstream format of its routes
	Provider  string   // the cloud of its routes ("" for the format's own API)
	Upstreams []string // the upstream model ids its routes ask for ("Simulated reply from <it>.")
	Routes    []string // its route ids (simulator routes of the same name)
	Reasoning catalog.Reasoning
}

// thinks reports whether the model returns reasoning text when asked to think. Chat-format
// upstreams never return reasoning text (OpenAI hides it), and non-reasoning models ignore
// thinking controls.
func (m model) thinks() bool {
	return m.Reasoning.Class != catalog.ReasoningNone && m.Reasoning.Class != "" && m.Format != catalog.FormatChat
}

// startEnv starts one simulator and gateway node for a top-level test.
func startEnv(t *testing.T) *nodetest.Env {
	t.Helper()
	return nodetest.Start(t, nodetest.CloudCatalog, nodetest.Options{})
}

// bug reports a gateway bug found by a test.
func bug(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Fatalf("BUG: "+format, args...)
}

// forEachModel runs f as a subtest for every model of modelIDs; a model the catalog does not
// have (yet) is skipped with a message.
func forEachModel(t *testing.T, env *nodetest.Env, f func(t *testing.T, m model)) {
	t.Helper()
	cat := env.Node.Catalog.Load()
	for _, id := range modelIDs {
		t.Run(id, func(t *testing.T) {
			cm, ok := cat.Lookup(id)
			if !ok {
				t.Fatalf("model %q is not in nodetest.CloudCatalog", id)
			}
			m := model{ID: id, Reasoning: cm.Reasoning}
			for _, rt := range cm.Routes {
				m.Format, m.Provider = rt.Format, rt.Provider
				m.Upstreams = append(m.Upstreams, rt.UpstreamModel)
				m.Routes = append(m.Routes, rt.ID)
			}
			f(t, m)
		})
	}
}

// ctx is a per-request deadline, so a hung gateway fails the test instead of the run.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

// openaiClient is openai-go pointed at the gateway with key.
func openaiClient(env *nodetest.Env, key string) openai.Client {
	return openai.NewClient(ooption.WithBaseURL(env.Node.URL+"/v1/"), ooption.WithAPIKey(key),
		ooption.WithMaxRetries(0), ooption.WithHTTPClient(env.Client))
}

// anthropicClient is anthropic-sdk-go pointed at the gateway with key.
func anthropicClient(env *nodetest.Env, key string) anthropic.Client {
	return anthropic.NewClient(aoption.WithBaseURL(env.Node.URL), aoption.WithAPIKey(key),
		aoption.WithMaxRetries(0), aoption.WithHTTPClient(env.Client))
}

// Simulator answer shapes (simulator/answer.go, simulator/text.go).
var fillerWords = strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india " +
	"juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor " +
	"whiskey xray yankee zulu")

// prefixed is the first n words of head followed by the simulator's filler words.
func prefixed(head string, n int) string {
	words := strings.Fields(head)
	if n < len(words) {
		return strings.Join(words[:n], " ")
	}
	for i := 0; len(words) < n; i++ {
		words = append(words, fillerWords[i%len(fillerWords)])
	}
	return strings.Join(words, " ")
}

// replyText is the simulator's n-word text answer from upstream model up.
func replyText(up string, n int) string { return prefixed("Simulated reply from "+up+".", n) }

// reasoningText is the simulator's reasoning when thinking is on.
var reasoningText = prefixed("Simulated reasoning.", 8)

// checkReply asserts got is the simulator's n-word answer from one of m's upstream models,
// and returns that upstream model id ("" after a failure).
func checkReply(t *testing.T, m model, got string, n int) string {
	t.Helper()
	const head = "Simulated reply from "
	if !strings.HasPrefix(got, head) {
		t.Errorf("reply = %q, want it to start with %q", got, head)
		return ""
	}
	up, _, _ := strings.Cut(strings.TrimPrefix(got, head), " ")
	up = strings.TrimSuffix(up, ".")
	if !slices.Contains(m.Upstreams, up) {
		t.Errorf("reply = %q names upstream model %q, want one of %q", got, up, m.Upstreams)
		return ""
	}
	if want := replyText(up, n); got != want {
		t.Errorf("reply = %q (%d words), want %q (%d words)", got, len(strings.Fields(got)), want, n)
		return ""
	}
	return up
}

// sameReply asserts a second answer (streamed) equals the first (plain) one; the model's
// routes may differ between the two requests, so the upstream model name is normalized.
func sameReply(t *testing.T, m model, got, want string, n int) {
	t.Helper()
	up := checkReply(t, m, got, n)
	wantUp := checkReply(t, m, want, n)
	if up == "" || wantUp == "" {
		return
	}
	if strings.Replace(want, wantUp, up, 1) != got {
		t.Errorf("streamed reply %q differs from the plain reply %q", got, want)
	}
}

// Two tools with parameters in alphabetical order (the SDKs marshal schema maps sorted), so
// the simulator's sample arguments have one exact JSON text.
var (
	weatherSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city": map[string]any{"type": "string"},
			"days": map[string]any{"type": "integer"},
		},
		"required": []string{"city", "days"},
	}
	timeSchema = map[string]any{
		"type": "object",
		"properties": map[string]any{
			"exact": map[string]any{"type": "boolean"},
			"zone":  map[string]any{"type": "string"},
		},
		"required": []string{"exact", "zone"},
	}
)

// wantCall is one tool call the simulator makes for the two tools above.
type wantCall struct {
	name string
	args string // the exact JSON text
}

var wantCalls = []wantCall{
	{"get_weather", `{"city":"sample","days":1}`},
	{"get_time", `{"exact":false,"zone":"sample"}`},
}

// parallelPrompt asks for both tools at once.
const parallelPrompt = "Call both tools in parallel please."

// checkArgs asserts got is the JSON text want: exactly, and as parsed values.
func checkArgs(t *testing.T, name, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("%s arguments %q are not JSON: %v", name, got, err)
		return
	}
	_ = json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s arguments = %s, want %s", name, got, want)
	} else if got != want {
		t.Errorf("%s arguments = %q, want exactly %q (same value, different text)", name, got, want)
	}
}

// checkDistinct asserts the ids are non-empty and distinct.
func checkDistinct(t *testing.T, what string, ids []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range ids {
		if id == "" {
			t.Errorf("%s: empty id in %q", what, ids)
		}
		if seen[id] {
			t.Errorf("%s: duplicate id %q in %q", what, id, ids)
		}
		seen[id] = true
	}
}

// rawString decodes a raw JSON string value ("" when absent or not a string).
func rawString(raw string) string {
	var s string
	_ = json.Unmarshal([]byte(raw), &s)
	return s
}
