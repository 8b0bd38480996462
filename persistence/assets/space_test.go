package assets

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// fillingReader hands out n zero bytes and fills the disk once half of them are out.
type fillingReader struct {
	left, fillAt int64
	free         *atomic.Int64
}

func (r *fillingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), r.left, 1<<16)
	r.left -= k
	if r.left <= r.fillAt {
		r.free.Store(0)
	}
	clear(p[:k])
	return int(k), nil
}

// A file is not written into the reserve the store keeps for its own writes: refused before it
// starts on a full disk, stopped when the disk fills on the way, and nothing (file, temp file,
// metadata) is left behind.
func TestAssetWritesStopAtTheStoresReserve(t *testing.T) {
	const total = 10 << 20
	cases := []struct {
		name   string
		freeAt int64 // free space when the write starts
		body   func(free *atomic.Int64) io.Reader
	}{
		{"disk full before the write", 0, func(*atomic.Int64) io.Reader { return bytes.NewReader(make([]byte, 1024)) }},
		{"disk fills during the write", 1 << 40, func(free *atomic.Int64) io.Reader {
			return &fillingReader{left: total, fillAt: total / 2, free: free}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var free atomic.Int64
			free.Store(1 << 40)
			data := t.TempDir()
			kv, err := persistence.OpenWith(filepath.Join(data, "pebble"), persistence.Options{MinFreeBytes: 1 << 20, BallastBytes: -1,
				RecheckEvery: time.Hour, MeasureEvery: -1, FreeSpace: func(string) (int64, error) { return free.Load(), nil }})
			if err != nil {
				t.Fatal(err)
			}
			defer kv.Close()
			s, err := New(kv, data, Config{MaxVideoBytes: 64 << 20})
			if err != nil {
				t.Fatal(err)
			}
			free.Store(c.freeAt)
			_, err = s.Put(KindVideo, "acct", "video/mp4", c.body(&free))
			if !errors.Is(err, persistence.ErrFull) {
				t.Fatalf("Put = %v, want ErrFull", err)
			}
			for _, kind := range []string{"tmp", KindVideo} {
				if entries, _ := os.ReadDir(filepath.Join(data, "assets", kind)); len(entries) != 0 {
					t.Errorf("%s holds %d files after a refused put", kind, len(entries))
				}
			}
			if kv.Writable() {
				t.Error("the store did not learn that its disk is full")
			}
		})
	}
}
