package converse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

const testdata = "../../testdata/converse"

func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// canon re-encodes JSON with sorted keys and no insignificant space, for exact comparison.
func canon(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return string(marshal(v))
}

func sameJSON(t *testing.T, got []byte, want string) {
	t.Helper()
	if g, w := canon(t, got), canon(t, []byte(want)); g != w {
		t.Errorf("JSON differs\n got: %s\nwant: %s", g, w)
	}
}

type frame struct{ name, data string }

func readFrames(tb testing.TB, b []byte) []frame {
	tb.Helper()
	r := sse.NewReader(bytes.NewReader(b))
	var out []frame
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, frame{string(ev.Name), string(ev.Data)})
	}
}

// decodeFrames runs one stream decoder over frames; the events are copied, as a caller that
// keeps them past the next Decode must.
func decodeFrames(t *testing.T, fs []frame) ([]ir.Event, bool) {
	t.Helper()
	d := Format.NewStreamDecoder()
	var events []ir.Event
	done := false
	for _, f := range fs {
		evs, fin, err := d.Decode([]byte(f.name), []byte(f.data))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, evs...)
		done = done || fin
	}
	return events, done
}

// dump renders events one per line, for failure messages.
func dump(evs []ir.Event) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "\n  %+v", e)
		if e.Err != nil {
			fmt.Fprintf(&b, " err=%+v", *e.Err)
		}
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }
