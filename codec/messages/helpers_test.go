package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/messages")

const testdata = "../../testdata/messages"

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

// golden compares got with testdata/messages/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(testdata, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking)\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

type frame struct{ name, data string }

func readFrames(t *testing.T, b []byte) []frame {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(b))
	var out []frame
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, frame{string(ev.Name), string(ev.Data)})
	}
}

// decodeStream runs the stream decoder over SSE text.
func decodeStream(t *testing.T, b []byte) ([]ir.Event, bool) {
	t.Helper()
	d := Format.NewStreamDecoder()
	var events []ir.Event
	done := false
	for _, f := range readFrames(t, b) {
		evs, fin, err := d.Decode([]byte(f.name), []byte(f.data))
		if err != nil {
			t.Fatal(err)
		}
		events = append(events, evs...)
		done = done || fin
	}
	return events, done
}

// encodeStream runs the stream encoder over events (then Close) and returns the SSE text.
func encodeStream(t *testing.T, events []ir.Event, model string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := Format.NewStreamEncoder(sse.NewWriter(&buf, nil), &ir.Request{Stream: true}, model)
	for _, ev := range events {
		if err := enc.Encode(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ptr[T any](v T) *T { return &v }
