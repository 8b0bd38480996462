package conversion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/reasoning"
)

// TestUpstreamStreams: streams only one upstream format produces (a provider's quirk, a
// stream that ends early, an in-band failure) through every client format, chained as the
// gateway chains the codecs. testdata/conversion/streams/<case>/answer.<upstream>.sse is the
// route's stream, expect.<client>.sse what each client gets (placeholders as in
// TestConversion), notes.md why. -update rewrites the expect files.
func TestUpstreamStreams(t *testing.T) {
	entries, _ := os.ReadDir(filepath.Join(root, "streams"))
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, "streams", e.Name()))
		}
	}
	if len(dirs) == 0 {
		t.Fatal("no cases under testdata/conversion/streams")
	}
	for _, dir := range dirs {
		answers, _ := filepath.Glob(filepath.Join(dir, "answer.*.sse"))
		if len(answers) != 1 {
			t.Fatalf("%s: want one answer.<upstream>.sse, have %q", dir, answers)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(answers[0]), "answer."), ".sse")
		var u *upstreamSpec
		for i := range upstreams {
			if upstreams[i].name == name {
				u = &upstreams[i]
			}
		}
		if u == nil {
			t.Fatalf("%s: unknown upstream format %q", dir, name)
		}
		files, _ := os.ReadDir(dir)
		if len(files) != 2+len(clients) || !exists(dir, "notes.md") {
			t.Errorf("%s: want answer.%s.sse, notes.md and one expect.<client>.sse per client", dir, name)
		}
		answer := readFile(t, dir, filepath.Base(answers[0]))
		for _, c := range clients {
			t.Run(filepath.Base(dir)+"/"+c.name, func(t *testing.T) {
				req := &ir.Request{Model: "house-model", Stream: true, IncludeUsage: true}
				raw, err := streamChain(c.format, u.format, req, req.Model, reasoning.Decision{}, answer)
				if err != nil {
					t.Fatal(err)
				}
				fs, err := readFrames(raw)
				if err != nil {
					t.Fatalf("the client stream is not well-formed SSE: %v\n%s", err, raw)
				}
				checkClientStream(t, c.name, fs)
				got := formatFrames(newNormalizer().normalizeFrames(fs))
				golden := "expect." + c.name + ".sse"
				if *update {
					if err := os.WriteFile(filepath.Join(dir, golden), got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				g, _ := canonicalFrames(got)
				w, err := canonicalFrames(readFile(t, dir, golden))
				if err != nil {
					t.Fatal(err)
				}
				if d := diffFrames(g, w); d != "" {
					t.Errorf("the %s client stream differs from %s\n%s", c.name, golden, d)
				}
			})
		}
	}
}
