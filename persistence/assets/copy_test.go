package assets

import (
	"bytes"
	"errors"
	"testing"
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
