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

// TestRecordingsAreDocumented: every recording is listed in the README with its
// provenance, offers the tools it calls, and names the upstream format it is served as.
func TestRecordingsAreDocumented(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(recordedDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range loadRecordings(t) {
		ext := ".json"
		if rec.Meta.Stream {
			ext = ".sse"
		}
		if !strings.Contains(string(readme), "`"+rec.Key+ext+"`") {
			t.Errorf("%s%s is not listed in testdata/recorded/README.md", rec.Key, ext)
		}
		if upstreamPath(rec.Meta.Format, "m", rec.Meta.Stream) == "" {
			t.Errorf("%s: unknown format %q", rec.Key, rec.Meta.Format)
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
