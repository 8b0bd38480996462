// Package assets keeps the files the gateway generated (images, videos) on disk under
// unguessable ids, with their metadata in Pebble, so their public URLs stay valid across
// restarts.
//
// Layout: <data>/assets/<kind>/<id>.<ext> (kinds "gen" for images, "vid" for videos), with
// the metadata at asset/<id> (msgpack). A file is written to <data>/assets/tmp, fsynced,
// renamed into place and its directory fsynced before its metadata is written (synced): an
// asset with metadata always has its whole file. A crash in between leaves at most a file
// without metadata, which is never served (and a temp file, removed at the next New).
package assets

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/codec/media"
	"github.com/modelgate/modelgate/internal/randid"
	"github.com/modelgate/modelgate/persistence"
)

// Kinds of asset; each is served under /assets/<kind>/.
const (
	KindImage = "gen"
	KindVideo = "vid"
)

// IDLen is the length of an asset id: base62 from crypto/rand, about 190 bits.
const IDLen = 32

// Errors. Returned errors wrap one of these.
var (
	ErrNotFound = errors.New("assets: not found")
	ErrInvalid  = errors.New("assets: invalid")
	ErrTooLarge = errors.New("assets: too large")
)

// extensions are the content types each kind holds, with their file extension. QuickTime is
// still read, served and copied between nodes, but Put takes only the types of stored.
var extensions = map[string]map[string]string{
	KindImage: {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"},
	KindVideo: {"video/mp4": "mp4", "video/webm": "webm", "video/quicktime": "mov"},
}

// stored are the content types Put takes for a new file of each kind: what codec/media tells
// from the bytes.
var stored = map[string][]string{KindImage: media.Images, KindVideo: media.Videos}

// KV is the part of *persistence.Store the asset store uses.
type KV interface {
	GetRaw(key []byte) ([]byte, error)
	SetRaw(key, value []byte) error
}

// spaceChecker is the full-disk guard of a KV that has one (*persistence.Store): the files
// share its disk, so a file must not eat the reserve the store keeps for its own writes.
type spaceChecker interface{ CheckWritable() error }

// spaceCheckEvery is how many bytes of a file are written between two looks at the disk.
const spaceCheckEvery = 4 << 20

// Config tunes the store. Zero values take the defaults.
type Config struct {
	MaxImageBytes int64            // default 64 MiB
	MaxVideoBytes int64            // default 512 MiB
	Now           func() time.Time // default time.Now
}

// Store is the asset store. It is safe for concurrent use.
type Store struct {
	kv   KV
	root string // <data>/assets
	cfg  Config
}

// Asset is one stored file.
type Asset struct {
	ID          string
	Kind        string // KindImage or KindVideo
	ContentType string
	Size        int64
	SHA256      string // hex
	Account     string // the owner
	Created     time.Time
	// Path is the public path, /assets/<kind>/<id>.<ext> (not stored: derived).
	Path string
}

// record is the metadata as stored at asset/<id>.
type record struct {
	Kind        string `msgpack:"k"`
	ContentType string `msgpack:"ct"`
	Size        int64  `msgpack:"n"`
	SHA256      string `msgpack:"sha"`
	Account     string `msgpack:"acct"`
	Created     int64  `msgpack:"c"` // unix seconds UTC
}

// New opens the asset store under <dataDir>/assets, creating its directories and removing
// temp files a crash left behind.
func New(kv KV, dataDir string, cfg Config) (*Store, error) {
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = 64 << 20
	}
	if cfg.MaxVideoBytes <= 0 {
		cfg.MaxVideoBytes = 512 << 20
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Store{kv: kv, root: filepath.Join(dataDir, "assets"), cfg: cfg}
	if err := os.RemoveAll(s.tmpDir()); err != nil {
		return nil, fmt.Errorf("assets: clear temp files: %w", err)
	}
	for _, d := range []string{s.tmpDir(), filepath.Join(s.root, KindImage), filepath.Join(s.root, KindVideo)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("assets: %w", err)
		}
	}
	return s, nil
}

func (s *Store) tmpDir() string { return filepath.Join(s.root, "tmp") }

// Ext is the file extension of a content type of a kind ("" when the kind does not take it).
func Ext(kind, contentType string) string { return extensions[kind][contentType] }

// Put stores r's bytes as a new asset of account, durably, and returns it. contentType is
// what the caller found the bytes to be (media.Sniff). More than the kind's size cap is
// ErrTooLarge (nothing is kept); a kind or content type the store does not take for a new
// file is ErrInvalid.
func (s *Store) Put(kind, account, contentType string, r io.Reader) (Asset, error) {
	if ct, _, err := mime.ParseMediaType(contentType); err == nil {
		contentType = ct
	}
	if extensions[kind] != nil && !slices.Contains(stored[kind], contentType) {
		return Asset{}, fmt.Errorf("%w: content type %q for a new file of kind %q", ErrInvalid, contentType, kind)
	}
	return s.put(randid.Base62(IDLen), kind, account, contentType, time.Unix(s.cfg.Now().Unix(), 0).UTC(), "", r)
}

// Copy stores another node's asset a (its id, kind, type, account and time) from r, durably
// (cluster nodes hold copies of videos). The bytes must hash to a.SHA256; a mismatch is
// ErrInvalid and keeps nothing. An asset held already is kept as it is.
func (s *Store) Copy(a Asset, r io.Reader) (Asset, error) {
	if !validID(a.ID) {
		return Asset{}, fmt.Errorf("%w: asset id %q", ErrInvalid, a.ID)
	}
	if have, f, err := s.Open(a.ID); err == nil {
		f.Close()
		return have, nil
	}
	if a.SHA256 == "" {
		return Asset{}, fmt.Errorf("%w: asset %s: no hash to check a copy against", ErrInvalid, a.ID)
	}
	return s.put(a.ID, a.Kind, a.Account, a.ContentType, a.Created.UTC().Truncate(time.Second), a.SHA256, r)
}

// put writes r as asset id; wantSHA, when set, is the hash the bytes must have.
func (s *Store) put(id, kind, account, contentType string, created time.Time, wantSHA string, r io.Reader) (Asset, error) {
	if ct, _, err := mime.ParseMediaType(contentType); err == nil {
		contentType = ct // lower case, without parameters
	}
	ext := Ext(kind, contentType)
	switch {
	case extensions[kind] == nil:
		return Asset{}, fmt.Errorf("%w: kind %q (want %q or %q)", ErrInvalid, kind, KindImage, KindVideo)
	case ext == "":
		return Asset{}, fmt.Errorf("%w: content type %q for kind %q", ErrInvalid, contentType, kind)
	case account == "":
		return Asset{}, fmt.Errorf("%w: no account", ErrInvalid)
	}
	limit := s.cfg.MaxImageBytes
	if kind == KindVideo {
		limit = s.cfg.MaxVideoBytes
	}
	if err := s.checkSpace(); err != nil {
		return Asset{}, fmt.Errorf("assets: %w", err)
	}
	final := filepath.Join(s.root, kind, id+"."+ext)
	size, sum, err := writeFile(s.tmpDir(), final, r, limit, s.checkSpace)
	if errors.Is(err, syscall.ENOSPC) {
		s.checkSpace() // the store learns it at once, before its own next write
		err = fmt.Errorf("%w (%w)", persistence.ErrFull, err)
	}
	if err != nil {
		return Asset{}, err
	}
	if wantSHA != "" && sum != wantSHA {
		os.Remove(final)
		return Asset{}, fmt.Errorf("%w: asset %s: the bytes hash to %s, not %s", ErrInvalid, id, sum, wantSHA)
	}
	a := Asset{ID: id, Kind: kind, ContentType: contentType, Size: size, SHA256: sum, Account: account,
		Created: created, Path: "/assets/" + kind + "/" + id + "." + ext}
	val, err := msgpack.Marshal(&record{Kind: kind, ContentType: contentType, Size: size, SHA256: sum, Account: account, Created: a.Created.Unix()})
	if err == nil {
		err = s.kv.SetRaw(metaKey(id), val)
	}
	if err != nil {
		os.Remove(final)
		return Asset{}, fmt.Errorf("assets: metadata of %s: %w", id, err)
	}
	return a, nil
}

// checkSpace is nil, or the KV's full-disk refusal.
func (s *Store) checkSpace() error {
	if g, ok := s.kv.(spaceChecker); ok {
		return g.CheckWritable()
	}
	return nil
}

// guardedFile looks at the disk every spaceCheckEvery bytes written to it.
type guardedFile struct {
	*os.File
	check   func() error
	written int64
}

func (g *guardedFile) Write(p []byte) (int, error) {
	if g.written/spaceCheckEvery != (g.written+int64(len(p)))/spaceCheckEvery {
		if err := g.check(); err != nil {
			return 0, err
		}
	}
	n, err := g.File.Write(p)
	g.written += int64(n)
	return n, err
}

// writeFile copies r (at most limit bytes) to a temp file, fsyncs it, renames it to final
// and fsyncs final's directory. check may stop it on the way (the disk is filling).
func writeFile(tmpDir, final string, r io.Reader, limit int64, check func() error) (int64, string, error) {
	f, err := os.CreateTemp(tmpDir, "put-*")
	if err != nil {
		return 0, "", fmt.Errorf("assets: %w", err)
	}
	tmp := f.Name()
	fail := func(err error) (int64, string, error) {
		f.Close()
		os.Remove(tmp)
		return 0, "", err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(&guardedFile{File: f, check: check}, h), io.LimitReader(r, limit+1))
	switch {
	case err != nil:
		return fail(fmt.Errorf("assets: write: %w", err))
	case n > limit:
		return fail(fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit))
	}
	if err := f.Sync(); err != nil {
		return fail(fmt.Errorf("assets: fsync: %w", err))
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return 0, "", fmt.Errorf("assets: close: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return 0, "", fmt.Errorf("assets: %w", err)
	}
	if err := syncDir(filepath.Dir(final)); err != nil {
		os.Remove(final)
		return 0, "", fmt.Errorf("assets: fsync directory: %w", err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// Get returns an asset's metadata.
func (s *Store) Get(id string) (Asset, error) {
	if !validID(id) {
		return Asset{}, fmt.Errorf("%w: asset %q", ErrNotFound, id)
	}
	val, err := s.kv.GetRaw(metaKey(id))
	if errors.Is(err, persistence.ErrNotFound) {
		return Asset{}, fmt.Errorf("%w: asset %s", ErrNotFound, id)
	}
	if err != nil {
		return Asset{}, fmt.Errorf("assets: %s: %w", id, err)
	}
	var rec record
	if err := msgpack.Unmarshal(val, &rec); err != nil {
		return Asset{}, fmt.Errorf("assets: decode %s: %w", id, err)
	}
	ext := Ext(rec.Kind, rec.ContentType)
	return Asset{ID: id, Kind: rec.Kind, ContentType: rec.ContentType, Size: rec.Size, SHA256: rec.SHA256, Account: rec.Account,
		Created: time.Unix(rec.Created, 0).UTC(), Path: "/assets/" + rec.Kind + "/" + id + "." + ext}, nil
}

// Open returns an asset and its file, open for reading (the caller closes it; it is an
// *os.File so http.ServeContent can answer range requests).
func (s *Store) Open(id string) (Asset, *os.File, error) {
	a, err := s.Get(id)
	if err != nil {
		return Asset{}, nil, err
	}
	f, err := os.Open(filepath.Join(s.root, a.Kind, id+"."+Ext(a.Kind, a.ContentType)))
	if errors.Is(err, os.ErrNotExist) {
		return Asset{}, nil, fmt.Errorf("%w: file of asset %s", ErrNotFound, id)
	}
	if err != nil {
		return Asset{}, nil, fmt.Errorf("assets: %w", err)
	}
	return a, f, nil
}

// OpenPath is Open for the last two segments of a public path: kind and "<id>.<ext>" must
// both match the asset (an image is not served under /assets/vid/, nor as .mp4).
func (s *Store) OpenPath(kind, name string) (Asset, *os.File, error) {
	id, ext, _ := strings.Cut(name, ".")
	a, f, err := s.Open(id)
	if err != nil {
		return Asset{}, nil, err
	}
	if a.Kind != kind || Ext(a.Kind, a.ContentType) != ext {
		f.Close()
		return Asset{}, nil, fmt.Errorf("%w: /assets/%s/%s", ErrNotFound, kind, name)
	}
	return a, f, nil
}

func metaKey(id string) []byte { return []byte("asset/" + id) }

func validID(id string) bool { return len(id) == IDLen && randid.Is(id) }
