package irtest

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

// HostileChunk is a stream chunk a provider should never send (cut, of the wrong types, out of
// range, not UTF-8, with members no decoder knows) and what the decoder made of it, after the
// chunks before it, as Render writes it.
type HostileChunk struct {
	Name   string
	Before []string // chunks decoded first
	Chunk  string
	Want   string
}

// DecodeHostile runs each case through a fresh decoder from newDec and fails t where the
// rendering of the last chunk's decoding differs from the case's.
func DecodeHostile(t *testing.T, newDec func() ir.StreamDecoder, cases []HostileChunk) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			dec := newDec()
			for _, b := range c.Before {
				if _, _, err := dec.Decode(nil, []byte(b)); err != nil {
					t.Fatalf("chunk before %s: %v", b, err)
				}
			}
			evs, done, err := dec.Decode(nil, []byte(c.Chunk))
			if got := Render(evs, done, err); got != c.Want {
				t.Errorf("%s\n got %s\nwant %s", c.Chunk, got, c.Want)
			}
		})
	}
}

// Render writes a decoding compactly: each event's kind and the fields it sets, then done and
// the error.
func Render(evs []ir.Event, done bool, err error) string {
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "%s", kindNames[e.Kind])
		var f []string
		add := func(name, v string) {
			if v != "" {
				f = append(f, fmt.Sprintf("%s=%q", name, v))
			}
		}
		add("id", e.ID)
		add("model", e.Model)
		add("name", e.Name)
		add("text", e.Text)
		add("sig", e.Signature)
		add("format", e.Format)
		add("stop", string(e.Stop))
		if e.Kind == ir.EvToolStart || e.Kind == ir.EvToolArgs {
			f = append(f, fmt.Sprintf("index=%d", e.Index))
		}
		if e.Usage.Known() {
			f = append(f, fmt.Sprintf("usage=%+v", e.Usage))
		}
		if e.Err != nil {
			f = append(f, fmt.Sprintf("err=%+v", *e.Err))
		}
		fmt.Fprintf(&b, "(%s) ", strings.Join(f, " "))
	}
	if done {
		b.WriteString("done ")
	}
	if err != nil {
		fmt.Fprintf(&b, "error: %v", err)
	}
	return strings.TrimSpace(b.String())
}

var kindNames = map[ir.EventKind]string{ir.EvStart: "start", ir.EvText: "text", ir.EvReasoning: "reasoning",
	ir.EvSignature: "signature", ir.EvRedacted: "redacted", ir.EvToolStart: "tool_start", ir.EvToolArgs: "tool_args",
	ir.EvUsage: "usage", ir.EvFinish: "finish", ir.EvError: "error"}

// Chunks reads the data of every event of an SSE transcript (testdata/sim/…).
func Chunks(t testing.TB, path string) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd := sse.NewReader(bytes.NewReader(raw))
	var out [][]byte
	for {
		ev, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, append([]byte(nil), ev.Data...))
	}
}
