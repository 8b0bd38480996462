package assets

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestACopyKeepsTheAssetsIdentityAndRefusesBytesThatDoNotMatchItsHash(t *testing.T) {
	src, dst := newEnv(t), newEnv(t)
	video := bytes.Repeat([]byte("frame"), 100)
	a, err := src.s.Put(KindVideo, "acct", "video/mp4", bytes.NewReader(video))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		asset Asset
		body  []byte
		want  error
	}{
		{"other bytes than the hash says", a, []byte("tampered"), ErrInvalid},
		{"no hash", Asset{ID: a.ID, Kind: a.Kind, ContentType: a.ContentType, Account: a.Account}, video, ErrInvalid},
		{"the asset's bytes", a, video, nil},
		{"again: kept as it is", a, []byte("ignored"), nil},
	}
	for _, tc := range tests {
		got, err := dst.s.Copy(tc.asset, bytes.NewReader(tc.body))
		if !errors.Is(err, tc.want) {
			t.Fatalf("%s: err %v, want %v", tc.name, err, tc.want)
		}
		if err != nil {
			if _, _, err := dst.s.Open(a.ID); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: a refused copy left the asset behind (%v)", tc.name, err)
			}
			continue
		}
		if got != a {
			t.Errorf("%s: copy %+v, want %+v", tc.name, got, a)
		}
		have, f, err := dst.s.OpenPath(KindVideo, a.ID+".mp4")
		if err != nil || have != a || !bytes.Equal(read(t, f), video) {
			t.Errorf("%s: served copy %+v, %v", tc.name, have, err)
		}
	}
}

// TestAQuickTimeVideoStoredBeforeIsStillCopiedAndOpened: Put no longer takes QuickTime, but a
// .mov stored before is a node's to copy and serve like any asset.
func TestAQuickTimeVideoStoredBeforeIsStillCopiedAndOpened(t *testing.T) {
	e := newEnv(t)
	mov := []byte("\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00qt  ")
	sum := sha256.Sum256(mov)
	a := Asset{ID: strings.Repeat("Q", IDLen), Kind: KindVideo, ContentType: "video/quicktime", Account: "acct",
		SHA256: hex.EncodeToString(sum[:]), Created: time.Unix(1700000000, 0).UTC()}
	got, err := e.s.Copy(a, bytes.NewReader(mov))
	if err != nil || got.Path != "/assets/vid/"+a.ID+".mov" {
		t.Fatalf("copy: %+v, %v", got, err)
	}
	have, f, err := e.s.OpenPath(KindVideo, a.ID+".mov")
	if err != nil || have.ContentType != "video/quicktime" || !bytes.Equal(read(t, f), mov) {
		t.Fatalf("open: %+v, %v", have, err)
	}
}
