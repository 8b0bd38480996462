package api_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence/assets"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestServedAssetsAreInert: every answer under /assets/ tells the browser to take the type as
// given and never run the file (nosniff, a sandboxing CSP) while pages of other origins may
// embed it (CORP cross-origin): a generated image, and files stored before their type was
// their bytes' (a QuickTime video, an HTML page stored as image/png) that are still served.
func TestServedAssetsAreInert(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	var made imageResult
	if raw := nodetest.Read(t, env.Post("/v1/images/generations", env.Key, `{"model":"img","prompt":"a fox"}`)); json.Unmarshal(raw, &made) != nil || len(made.Data) != 1 {
		t.Fatalf("image: %s", raw)
	}
	files, err := assets.New(env.Node.Store, env.DataDir, assets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	storedBefore := func(id, kind, contentType, body string) string {
		sum := sha256.Sum256([]byte(body))
		a, err := files.Copy(assets.Asset{ID: strings.Repeat(id, assets.IDLen), Kind: kind, ContentType: contentType, Account: env.Account.ID,
			SHA256: hex.EncodeToString(sum[:]), Created: time.Now()}, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return env.Node.URL + a.Path
	}
	cases := []struct {
		name, method, url string
		status            int
		contentType       string
	}{
		{"a generated image", http.MethodGet, made.Data[0].URL, 200, "image/png"},
		{"its HEAD", http.MethodHead, made.Data[0].URL, 200, "image/png"},
		{"a QuickTime video stored before", http.MethodGet, storedBefore("Q", assets.KindVideo, "video/quicktime", "\x00\x00\x00\x14ftypqt  "), 200, "video/quicktime"},
		{"a page stored as image/png before", http.MethodGet, storedBefore("H", assets.KindImage, "image/png", "<html><script>alert(1)</script>"), 200, "image/png"},
		{"no such asset", http.MethodGet, env.Node.URL + "/assets/gen/nope.png", 404, "application/json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, c.url, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			h := resp.Header
			got := []string{h.Get("X-Content-Type-Options"), h.Get("Content-Security-Policy"), h.Get("Cross-Origin-Resource-Policy")}
			want := []string{"nosniff", "default-src 'none'; sandbox", "cross-origin"}
			if resp.StatusCode != c.status || !strings.HasPrefix(h.Get("Content-Type"), c.contentType) || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("%d %q %q; want %d %q %q", resp.StatusCode, h.Get("Content-Type"), got, c.status, c.contentType, want)
			}
		})
	}
}
