package node

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminTokenNeeds128Bits: a token given (MODELGATE_ADMIN_TOKEN) or read from the data
// directory's admin-token file must have 128 bits by persistence.SecretBits after an
// mg-admin- prefix, or the node does not start, saying why; a made one has 238.
func TestAdminTokenNeeds128Bits(t *testing.T) {
	const advice = "under the 128 needed: use at least 22 random letters and digits (a repeated character or a run such as abc or 123 adds nothing)"
	for _, c := range []struct {
		name, given, file string
		err               string // "": accepted
	}{
		{name: "a given word", given: "test-admin-token",
			err: "the admin token given (MODELGATE_ADMIN_TOKEN) has about 93 bits of entropy, " + advice},
		{name: "the prefix guesses nothing", given: "mg-admin-clustertest-token",
			err: "the admin token given (MODELGATE_ADMIN_TOKEN) has about 99 bits of entropy, " + advice},
		{name: "a given run", given: strings.Repeat("x", 100),
			err: "the admin token given (MODELGATE_ADMIN_TOKEN) has about 4 bits of entropy, " + advice},
		{name: "22 random base62", given: "Zq8rT2mV9xK4wP7nB3cY6h"},
		{name: "a strong given token", given: "mg-admin-VFeS9MpxpdCopYaYABBu1x85kHKGmlHD"},
		{name: "a weak file", file: "admin\n",
			err: "the admin token in {dir}/admin-token has about 23 bits of entropy, " + advice + "; or delete the file to have one made"},
		{name: "a strong file", file: "  mg-admin-biXqjrUB1HJJEUKR2FvIA75B2wl3whMj\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.file != "" {
				if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte(c.file), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, shown, err := adminToken(dir, c.given)
			want := strings.ReplaceAll(c.err, "{dir}", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case want == "" && shown != strings.TrimSpace(c.given+c.file):
				t.Fatalf("token %q", shown)
			case want != "" && (err == nil || err.Error() != want):
				t.Fatalf("err %v\nwant %s", err, want)
			}
		})
	}
	made := t.TempDir()
	_, token, err := adminToken(made, "")
	if err != nil || !strings.HasPrefix(token, "mg-admin-") || len(token) != len("mg-admin-")+40 {
		t.Fatalf("a made token: %q %v", token, err)
	}
}

// TestNodeRefusesToStartWithAWeakAdminToken: Start fails before opening the store.
func TestNodeRefusesToStartWithAWeakAdminToken(t *testing.T) {
	dir := t.TempDir()
	catPath := filepath.Join(dir, "catalog.yaml")
	if err := os.WriteFile(catPath, []byte("models:\n  - {id: m, kind: chat, routes: [{id: r, format: chat, base_url: \"http://127.0.0.1:1/v1\"}]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := Start(Config{DataDir: filepath.Join(dir, "data"), CatalogPath: catPath, Addr: "127.0.0.1:0", MetricsAddr: "off", AdminToken: "test-admin-token"})
	if err == nil {
		n.Close(t.Context())
		t.Fatal("the node started with a weak admin token")
	}
	if !strings.HasPrefix(err.Error(), "the admin token given (MODELGATE_ADMIN_TOKEN) has about 93 bits of entropy") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "data", "pebble")); !os.IsNotExist(err) {
		t.Fatalf("the store was opened: %v", err)
	}
}
