package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReferenceReadersAgreeWithHandWrittenFacts: where a recording exists to prove one bug,
// its meta states the facts a person read off it, and the reference reader must derive
// exactly those (so a reader bug cannot hide a gateway bug).
func TestReferenceReadersAgreeWithHandWrittenFacts(t *testing.T) {
	for _, rec := range loadRecordings(t) {
		t.Run(rec.Key, func(t *testing.T) {
			a, err := reference(rec)
			if err != nil {
				t.Fatalf("reference reader: %v", err)
			}
			if a.Err == nil && a.Finish == "" {
				t.Errorf("the reference reader found no finish in a successful recording")
			}
			e := rec.Meta.Expect
			if e == nil {
				return
			}
			if e.Text != nil && a.Text != *e.Text {
				t.Errorf("text = %q, the meta says %q", a.Text, *e.Text)
			}
			if e.Reasoning != nil && a.Reasoning != *e.Reasoning {
				t.Errorf("reasoning = %q, the meta says %q", a.Reasoning, *e.Reasoning)
			}
			if e.Finish != "" && a.Finish != e.Finish {
				t.Errorf("finish = %q, the meta says %q", a.Finish, e.Finish)
			}
			if e.Usage != nil && (a.Usage == nil || *a.Usage != *e.Usage) {
				t.Errorf("usage = %+v, the meta says %+v", a.Usage, *e.Usage)
			}
			if e.ToolCalls != nil {
				got := make([]toolCall, len(a.Calls))
				for i, c := range a.Calls {
					got[i] = toolCall{ID: c.ID, Name: c.Name, Args: c.Args}
				}
				if len(got) != len(e.ToolCalls) {
					t.Fatalf("tool calls = %+v, the meta says %+v", got, e.ToolCalls)
				}
				for i := range got {
					if w := (toolCall{ID: e.ToolCalls[i].ID, Name: e.ToolCalls[i].Name, Args: canonicalJSON(e.ToolCalls[i].Args)}); got[i] != w {
						t.Errorf("tool call %d = %+v, the meta says %+v", i, got[i], w)
					}
				}
			}
		})
	}
}

// providerFormats are the upstream formats each provider serves ("" the formats' own APIs).
var providerFormats = map[string][]string{"": {"chat", "messages", "responses", "gemini"},
	"bedrock": {"messages", "converse"}, "vertex": {"gemini", "messages"}, "azure": {"chat", "responses"}}

// TestRecordingsAreDocumented: every recording is listed in the README with its
// provenance, offers the tools it calls, and names an upstream format its provider serves
// (and a Bedrock stream how its file is framed).
func TestRecordingsAreDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(recordedDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range loadRecordings(t) {
		m := rec.Meta
		if file := rec.Key + m.ext(); !strings.Contains(string(readme), "`"+file+"`") {
			t.Errorf("%s is not listed in testdata/recorded/README.md", file)
		}
		if !contains(providerFormats[m.Provider], m.Format) {
			t.Errorf("%s: provider %q does not serve format %q", rec.Key, m.Provider, m.Format)
		}
		if (m.Framing != "") != (m.Provider == "bedrock" && m.Stream) || (m.Framing != "" && m.Framing != framingEventStream && m.Framing != framingLines) {
			t.Errorf("%s: framing %q; a Bedrock stream needs %q or %q, nothing else takes one", rec.Key, m.Framing, framingEventStream, framingLines)
		}
		a, _ := reference(rec)
		for _, c := range a.Calls {
			if !contains(rec.Meta.Tools, c.Name) {
				t.Errorf("%s calls %q, which its meta's tools %q do not offer", rec.Key, c.Name, rec.Meta.Tools)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
