package assets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/randid"
	"github.com/modelgate/modelgate/persistence"
)

var t0 = time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)

type env struct {
	t    *testing.T
	data string
	kv   *persistence.Store
	s    *Store
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, data: t.TempDir()}
	e.open()
	t.Cleanup(func() { e.kv.Close() })
	return e
}

func (e *env) open() {
	kv, err := persistence.Open(filepath.Join(e.data, "pebble"))
	if err != nil {
		e.t.Fatal(err)
	}
	s, err := New(kv, e.data, Config{MaxImageBytes: 1000, MaxVideoBytes: 5000, Now: func() time.Time { return t0 }})
	if err != nil {
		e.t.Fatal(err)
	}
	e.kv, e.s = kv, s
}

func (e *env) restart() {
	e.kv.Close()
	e.open()
}

func read(t *testing.T, f *os.File) []byte {
	t.Helper()
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var idPath = regexp.MustCompile(`^/assets/(gen|vid)/([0-9A-Za-z]{32})\.(png|jpg|mp4|webm)$`)

// A stored asset is served byte for byte under its public path, with its metadata, also
// after a restart; the file sits at <data>/assets/<kind>/<id>.<ext>.
func TestPutOpenAcrossRestart(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		kind, ct, wantCT, ext string
		size                  int
	}{
		{KindImage, "image/png", "image/png", "png", 1000},
		{KindImage, "IMAGE/JPEG; q=1", "image/jpeg", "jpg", 1},
		{KindVideo, "video/mp4", "video/mp4", "mp4", 5000},
		{KindVideo, "video/webm", "video/webm", "webm", 0},
	}
	var stored []Asset
	var contents [][]byte
	for i, c := range cases {
		data := bytes.Repeat([]byte{byte(i + 1)}, c.size)
		a, err := e.s.Put(c.kind, "acct_1", c.ct, bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", c.ct, err)
		}
		sum := sha256.Sum256(data)
		m := idPath.FindStringSubmatch(a.Path)
		if m == nil || m[1] != c.kind || m[2] != a.ID || m[3] != c.ext {
			t.Fatalf("path %q for %+v", a.Path, a)
		}
		want := Asset{ID: a.ID, Kind: c.kind, ContentType: c.wantCT, Size: int64(c.size), SHA256: hex.EncodeToString(sum[:]), Account: "acct_1", Created: t0, Path: a.Path}
		if a != want {
			t.Fatalf("put = %+v\nwant %+v", a, want)
		}
		if _, err := os.Stat(filepath.Join(e.data, "assets", c.kind, a.ID+"."+c.ext)); err != nil {
			t.Fatal(err)
		}
		stored, contents = append(stored, a), append(contents, data)
	}
	e.restart()
	for i, want := range stored {
		a, f, err := e.s.Open(want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if a != want || !bytes.Equal(read(t, f), contents[i]) {
			t.Fatalf("after restart: %+v", a)
		}
		name := want.Path[strings.LastIndexByte(want.Path, '/')+1:]
		a, f, err = e.s.OpenPath(want.Kind, name)
		if err != nil || a != want {
			t.Fatalf("OpenPath(%s, %s) = %+v, %v", want.Kind, name, a, err)
		}
		f.Close()
	}
	entries, _ := os.ReadDir(filepath.Join(e.data, "assets", "tmp"))
	if len(entries) != 0 {
		t.Fatalf("temp files left: %v", entries)
	}
}

func TestPutRejects(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		name, kind, account, ct string
		size                    int
		want                    error
	}{
		{"unknown kind", "doc", "a", "image/png", 1, ErrInvalid},
		{"video type as image", KindImage, "a", "video/mp4", 1, ErrInvalid},
		{"image type as video", KindVideo, "a", "image/png", 1, ErrInvalid},
		{"QuickTime, read but no longer stored", KindVideo, "a", "video/quicktime", 1, ErrInvalid},
		{"an image type the gateway does not store", KindImage, "a", "image/svg+xml", 1, ErrInvalid},
		{"no account", KindImage, "", "image/png", 1, ErrInvalid},
		{"image over the cap", KindImage, "a", "image/png", 1001, ErrTooLarge},
		{"video over the cap", KindVideo, "a", "video/mp4", 5001, ErrTooLarge},
	}
	for _, c := range cases {
		if _, err := e.s.Put(c.kind, c.account, c.ct, bytes.NewReader(make([]byte, c.size))); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	for _, kind := range []string{"tmp", KindImage, KindVideo} {
		if entries, _ := os.ReadDir(filepath.Join(e.data, "assets", kind)); len(entries) != 0 {
			t.Fatalf("%s holds %d files after rejected puts", kind, len(entries))
		}
	}
	// A failing reader keeps nothing either.
	if _, err := e.s.Put(KindImage, "a", "image/png", io.MultiReader(bytes.NewReader([]byte("xx")), errReader{})); err == nil {
		t.Fatal("a failing reader was stored")
	}
	if entries, _ := os.ReadDir(filepath.Join(e.data, "assets", "tmp")); len(entries) != 0 {
		t.Fatalf("temp file kept: %v", entries)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

// Unknown, malformed and mismatched ids are not found; ids are unique.
func TestLookupMisses(t *testing.T) {
	e := newEnv(t)
	img, err := e.s.Put(KindImage, "a", "image/png", strings.NewReader("png"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kind, name string }{
		{KindVideo, img.ID + ".png"},  // wrong kind
		{KindImage, img.ID + ".jpg"},  // wrong extension
		{KindImage, img.ID},           // no extension
		{KindImage, "../../pebble/x"}, // not an id
		{KindImage, strings.Repeat("A", IDLen) + ".png"},
	} {
		if _, _, err := e.s.OpenPath(c.kind, c.name); !errors.Is(err, ErrNotFound) {
			t.Errorf("OpenPath(%q, %q) = %v", c.kind, c.name, err)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id := randid.Base62(IDLen)
		if !validID(id) || seen[id] {
			t.Fatalf("id %q", id)
		}
		seen[id] = true
	}
}

// Temp files a crash left behind are removed when the store opens.
func TestNewClearsTempFiles(t *testing.T) {
	e := newEnv(t)
	stale := filepath.Join(e.data, "assets", "tmp", "put-123")
	if err := os.WriteFile(stale, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.restart()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("stale temp file: %v", err)
	}
}
