package conversion

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/gemini"
)

// checkClientStream asserts what every stream of a client format must look like whatever the
// case, so a golden cannot enshrine a stream the official SDKs would reject.
func checkClientStream(t *testing.T, client string, fs []frame) {
	t.Helper()
	if len(fs) == 0 {
		t.Fatal("the client got an empty stream")
	}
	last := fs[len(fs)-1]
	for i, f := range fs {
		var ev struct {
			Type           string            `json:"type"`
			SequenceNumber *int              `json:"sequence_number"`
			Choices        []json.RawMessage `json:"choices"`
		}
		if f.data != "[DONE]" && json.Unmarshal([]byte(f.data), &ev) != nil {
			t.Errorf("frame %d: data is not JSON: %s", i, f.data)
			continue
		}
		switch client {
		case "chat":
			if f.name != "" {
				t.Errorf("frame %d: chat frames carry no event line, got %q", i, f.name)
			}
			if strings.Contains(f.data, `"id":null`) || strings.Contains(f.data, `"name":null`) {
				t.Errorf("frame %d: null id or name on a continuation delta: %s", i, f.data)
			}
		case "messages", "responses":
			if f.name == "" || f.name != ev.Type {
				t.Errorf("frame %d: event %q does not name its type %q", i, f.name, ev.Type)
			}
		case "gemini":
			checkGeminiChunk(t, i, f)
		}
		if client == "responses" && (ev.SequenceNumber == nil || *ev.SequenceNumber != i) {
			t.Errorf("frame %d: sequence_number %v, want %d", i, ev.SequenceNumber, i)
		}
	}
	switch client {
	case "chat":
		if !strings.Contains(fs[0].data, `"role":"assistant"`) {
			t.Errorf("the first chat chunk has no role: %s", fs[0].data)
		}
		if last.data != "[DONE]" && !strings.HasPrefix(last.data, `{"error":`) {
			t.Errorf("the chat stream ends with neither [DONE] nor an error: %s", last.data)
		}
	case "messages":
		if fs[0].name != "message_start" || last.name != "message_stop" && last.name != "error" {
			t.Errorf("the messages stream runs %s … %s", fs[0].name, last.name)
		}
	case "gemini":
		if !strings.Contains(last.data, `"finishReason"`) && !strings.HasPrefix(last.data, `{"error":`) {
			t.Errorf("the gemini stream ends with neither a finishReason nor an error: %s", last.data)
		}
	case "responses":
		if fs[0].name != "response.created" || !slices.Contains([]string{"response.completed", "response.incomplete", "response.failed"}, last.name) {
			t.Errorf("the responses stream runs %s … %s", fs[0].name, last.name)
		}
	}
}

// checkGeminiChunk: go-genai reads only data lines, each a whole GenerateContentResponse (or
// an error); every chunk names the client's model and one response id.
func checkGeminiChunk(t *testing.T, i int, f frame) {
	t.Helper()
	if f.name != "" {
		t.Errorf("frame %d: gemini frames carry no event line, got %q", i, f.name)
	}
	var chunk struct {
		Candidates   []json.RawMessage `json:"candidates"`
		Error        json.RawMessage   `json:"error"`
		ModelVersion string            `json:"modelVersion"`
		ResponseID   string            `json:"responseId"`
	}
	_ = json.Unmarshal([]byte(f.data), &chunk)
	switch {
	case chunk.Error != nil:
	case len(chunk.Candidates) != 1 || chunk.ModelVersion != "house-model" || chunk.ResponseID == "":
		t.Errorf("frame %d: not a one-candidate chunk of house-model with a responseId: %s", i, f.data)
	}
}

// TestUpstreamPaths: the route-relative paths of the upstream formats, plain and streamed.
func TestUpstreamPaths(t *testing.T) {
	want := map[string][2]string{
		"chat":      {"/chat/completions", "/chat/completions"},
		"messages":  {"/messages", "/messages"},
		"gemini":    {"/models/gemini-2.5-flash:generateContent", "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"},
		"responses": {"/responses", "/responses"},
		"converse": {"/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse",
			"/model/anthropic.claude-sonnet-4-5-20250929-v1:0/converse-stream"},
	}
	for _, u := range upstreams {
		if got := [2]string{u.format.Path(u.model, false), u.format.Path(u.model, true)}; got != want[u.name] {
			t.Errorf("%s paths %q, want %q", u.name, got, want[u.name])
		}
	}
	if got := gemini.Format.Path("models/gemini-2.5-flash", true); got != want["gemini"][1] {
		t.Errorf("gemini path of models/…: %q", got)
	}
}

var goldenName = regexp.MustCompile(`^(client\.(chat|messages|responses|gemini)\.json|` +
	`upstream\.(chat|messages|gemini|responses|converse)(\.from-(chat|messages|responses|gemini))?\.json|` +
	`answer\.(chat|messages|gemini|responses|converse)\.(json|sse)|` +
	`expect\.(chat|messages|responses|gemini)(\.from-(chat|messages|gemini|responses|converse))?\.(json|sse)|` +
	`loss\.(chat|messages|responses|gemini)-(chat|messages|gemini|responses|converse)\.txt|notes\.md)$`)

// TestGoldenFiles keeps testdata/conversion tidy: one directory per case, every file a case
// needs, no stray or redundant file, and a notes.md wherever an override exists.
func TestGoldenFiles(t *testing.T) {
	if *update {
		t.Skip("-update rewrites the files")
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]testCase{}
	for _, tc := range cases {
		known[tc.name] = tc
	}
	for _, e := range entries {
		if e.Name() == "streams" {
			continue // one-upstream stream cases: TestUpstreamStreams keeps them tidy
		}
		if _, ok := known[e.Name()]; !ok {
			t.Errorf("%s: a directory without a case in cases_test.go", e.Name())
		}
	}
	for _, tc := range cases {
		dir := filepath.Join(root, tc.name)
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Errorf("case %s: %v", tc.name, err)
			continue
		}
		have := map[string]bool{}
		overrides := 0
		for _, f := range files {
			have[f.Name()] = true
			if !goldenName.MatchString(f.Name()) {
				t.Errorf("%s/%s: not a golden file name", tc.name, f.Name())
			}
			if strings.Contains(f.Name(), ".from-") {
				overrides++
			}
		}
		var need []string
		for _, c := range clients {
			need = append(need, "client."+c.name+".json", "expect."+c.name+".sse")
			if !tc.streamOnly {
				need = append(need, "expect."+c.name+".json")
			}
		}
		for _, u := range upstreams {
			need = append(need, "upstream."+u.name+".json", "answer."+u.name+".sse")
			if !tc.streamOnly {
				need = append(need, "answer."+u.name+".json")
			}
		}
		for _, n := range need {
			if !have[n] {
				t.Errorf("%s: missing %s", tc.name, n)
			}
		}
		if overrides > 0 && !have["notes.md"] {
			t.Errorf("%s: %d overrides and no notes.md saying why", tc.name, overrides)
		}
		for name := range have {
			base, ok := sharedOf(name)
			if !ok {
				continue
			}
			a, _ := os.ReadFile(filepath.Join(dir, name))
			b, _ := os.ReadFile(filepath.Join(dir, base))
			same := sameCanonicalJSON
			if strings.HasSuffix(name, ".sse") {
				same = sameFrames
			}
			if same(a, b) {
				t.Errorf("%s/%s: the same as %s; delete it", tc.name, name, base)
			}
		}
	}
}

// sharedOf is the shared golden an override stands in for.
func sharedOf(name string) (string, bool) {
	head, rest, ok := strings.Cut(name, ".from-")
	if !ok {
		return "", false
	}
	_, ext, _ := strings.Cut(rest, ".")
	return head + "." + ext, true
}
