package conversion

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// TestRewriteModelGolden: a same-format answer relayed as it is names the client's model
// wherever its format puts it (whole answers, chat chunks, message_start, response events),
// whatever the upstream's spacing or dated id, and keeps every other byte; a model pair inside
// content is text and stays. testdata/<format>/model/<case>.in.json → <case>.want.json.
func TestRewriteModelGolden(t *testing.T) {
	for _, u := range upstreams {
		if u.name == "gemini" || u.name == formatConverse {
			// gemini answers name no model to rewrite (modelVersion is the provider's), and
			// converse answers no model at all; no client speaks converse either
			continue
		}
		rw, ok := u.format.(ir.ModelRewriter)
		if !ok {
			t.Errorf("%s does not rewrite the model of relayed answers", u.name)
			continue
		}
		ins, _ := filepath.Glob(filepath.Join("..", "..", "testdata", u.name, "model", "*.in.json"))
		if len(ins) == 0 {
			t.Errorf("no golden for %s", u.name)
		}
		for _, in := range ins {
			t.Run(u.name+"/"+filepath.Base(in), func(t *testing.T) {
				src, err := os.ReadFile(in)
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(strings.TrimSuffix(in, ".in.json") + ".want.json")
				if err != nil {
					t.Fatal(err)
				}
				if got := rw.RewriteModel(src, "my-model"); string(got) != string(want) {
					t.Errorf("got  %s\nwant %s", got, want)
				}
			})
		}
	}
}
