package responses

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/ir"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/responses")

// fixture reads testdata/responses/<name> at the repository root.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixturePath(name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixturePath(name string) string {
	return filepath.Join("..", "..", "testdata", "responses", name)
}

// golden compares got with a golden file, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(fixturePath(name), got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := fixture(t, name)
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", name, lineDiff(string(want), string(got)))
	}
}

// fixedIDs makes minted ids (prefix + 3-digit counter) and the clock deterministic.
func fixedIDs(t *testing.T) {
	t.Helper()
	oldID, oldNow := newID, now
	n := 0
	newID = func(prefix string) string { n++; return fmt.Sprintf("%s%03d", prefix, n) }
	now = func() time.Time { return time.Unix(1741476777, 0) }
	t.Cleanup(func() { newID, now = oldID, oldNow })
}

// canonical re-encodes JSON with sorted keys and indentation, for comparison and diffs.
func canonical(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

// sameJSON compares two documents (bytes or values) after canonicalization.
func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, w := canonical(t, toJSON(t, got)), canonical(t, toJSON(t, want))
	if g != w {
		t.Errorf("%s differs (-want +got):\n%s", what, lineDiff(w, g))
	}
}

func toJSON(t testing.TB, v any) []byte {
	switch b := v.(type) {
	case []byte:
		return b
	case string:
		return []byte(b)
	case json.RawMessage:
		return b
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lineDiff is a small line diff: the first differing region with context.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(wl) && i < len(gl) && wl[i] == gl[i] {
		i++
	}
	j, k := len(wl)-1, len(gl)-1
	for j >= i && k >= i && wl[j] == gl[k] {
		j--
		k--
	}
	var b strings.Builder
	from := max(i-3, 0)
	for _, l := range wl[from:i] {
		b.WriteString("  " + l + "\n")
	}
	for _, l := range wl[i : j+1] {
		b.WriteString("- " + l + "\n")
	}
	for _, l := range gl[i : k+1] {
		b.WriteString("+ " + l + "\n")
	}
	return b.String()
}

// Constructors that keep the test tables short.

func text(s string) ir.Part { return ir.Part{Kind: ir.PartText, Text: s} }

func textMsg(role ir.Role, s string) ir.Message {
	return ir.Message{Role: role, Parts: []ir.Part{text(s)}}
}

func call(id, name, args string) ir.Part {
	return ir.Part{Kind: ir.PartToolCall, ToolCall: &ir.ToolCall{ID: id, Name: name, Arguments: args}}
}

func result(id, name string, content ...ir.Part) ir.Part {
	return ir.Part{Kind: ir.PartToolResult, ToolResult: &ir.ToolResult{CallID: id, Name: name, Content: content}}
}

func reasoningPart(r ir.Reasoning) ir.Part {
	return ir.Part{Kind: ir.PartReasoning, Reasoning: &r}
}

func image(img ir.Image) ir.Part { return ir.Part{Kind: ir.PartImage, Image: &img} }

func ptr[T any](v T) *T { return &v }
