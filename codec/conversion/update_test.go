package conversion

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder collects what the codecs produce under -update and writes the goldens once every
// pair has run: the output most pairs share becomes the shared file, the others overrides.
type recorder struct {
	upstreams map[string]map[string][]byte // "case/upstream" → client → request
	expects   map[string]map[string][]byte // "case/client/ext" → upstream → answer
	losses    map[string][]string          // "case/client/upstream" → fields
}

func newRecorder() *recorder {
	return &recorder{upstreams: map[string]map[string][]byte{}, expects: map[string]map[string][]byte{}, losses: map[string][]string{}}
}

func (r *recorder) upstream(tc, upstream, client string, b []byte) {
	k := tc + "/" + upstream
	if r.upstreams[k] == nil {
		r.upstreams[k] = map[string][]byte{}
	}
	r.upstreams[k][client] = b
}

func (r *recorder) expect(tc, client, ext, upstream string, b []byte) {
	k := tc + "/" + client + "/" + ext
	if r.expects[k] == nil {
		r.expects[k] = map[string][]byte{}
	}
	r.expects[k][upstream] = b
}

func (r *recorder) loss(tc, client, upstream string, fields []string) {
	r.losses[tc+"/"+client+"/"+upstream] = fields
}

// Tie-breaks: the shared file is the output of the first of these that most pairs agree on.
var (
	clientOrder   = []string{"chat", "messages", "responses", "gemini"}
	upstreamOrder = []string{"messages", "responses", "chat", "gemini", "converse"}
)

func (r *recorder) write(t *testing.T) {
	for k, byClient := range r.upstreams {
		tc, upstream, _ := strings.Cut(k, "/")
		dir := filepath.Join(root, tc)
		writeShared(t, dir, "upstream."+upstream+".json", byClient, clientOrder, func(client string) string {
			return "upstream." + upstream + ".from-" + client + ".json"
		}, sameCanonicalJSON)
	}
	for k, byUpstream := range r.expects {
		parts := strings.Split(k, "/")
		tc, client, ext := parts[0], parts[1], parts[2]
		dir := filepath.Join(root, tc)
		same := sameCanonicalJSON
		if ext == "sse" {
			same = sameFrames
		}
		writeShared(t, dir, "expect."+client+"."+ext, byUpstream, upstreamOrder, func(upstream string) string {
			return "expect." + client + ".from-" + upstream + "." + ext
		}, same)
	}
	for k, fields := range r.losses {
		parts := strings.Split(k, "/")
		name := filepath.Join(root, parts[0], "loss."+parts[1]+"-"+parts[2]+".txt")
		if len(fields) == 0 {
			os.Remove(name)
			continue
		}
		writeGolden(t, name, []byte(strings.Join(fields, "\n")))
	}
}

// writeShared writes the shared golden and the overrides of the variants that differ from it.
// An existing shared file stays when some variant still matches it.
func writeShared(t *testing.T, dir, shared string, byVariant map[string][]byte, order []string, override func(string) string, same func(a, b []byte) bool) {
	base, keep := []byte(nil), false
	if old, err := os.ReadFile(filepath.Join(dir, shared)); err == nil {
		for _, b := range byVariant {
			if same(b, old) {
				base, keep = b, true
			}
		}
	}
	if !keep {
		best := 0
		for _, v := range order {
			b, ok := byVariant[v]
			if !ok {
				continue
			}
			n := 0
			for _, o := range byVariant {
				if same(o, b) {
					n++
				}
			}
			if n > best {
				base, best = b, n
			}
		}
		writeGolden(t, filepath.Join(dir, shared), base)
	}
	for v, b := range byVariant {
		name := filepath.Join(dir, override(v))
		if same(b, base) {
			os.Remove(name)
		} else {
			writeGolden(t, name, b)
		}
	}
}

func writeGolden(t *testing.T, name string, b []byte) {
	t.Helper()
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: review it before keeping it", name)
}

func sameCanonicalJSON(a, b []byte) bool {
	ca, errA := canonical(a)
	cb, errB := canonical(b)
	return errA == nil && errB == nil && ca == cb
}

func sameFrames(a, b []byte) bool {
	fa, errA := canonicalFrames(a)
	fb, errB := canonicalFrames(b)
	return errA == nil && errB == nil && diffFrames(fa, fb) == ""
}
