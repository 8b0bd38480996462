package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		want  []string // "name|data"
		final error
	}{
		{"chat frames", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{"|{\"a\":1}", "|[DONE]"}, io.EOF},
		{"named events and ping comment", ": keep-alive\n\nevent: message_start\ndata: {}\n\n", []string{"message_start|{}"}, io.EOF},
		{"crlf framing", "data: x\r\n\r\ndata: y\r\n\r\n", []string{"|x", "|y"}, io.EOF},
		{"multi-line data joined", "data: a\ndata: b\n\n", []string{"|a\nb"}, io.EOF},
		{"no space after colon", "data:{}\n\n", []string{"|{}"}, io.EOF},
		// The last event is delivered without its blank line; a decoder judges whether it is
		// whole (a cut JSON text does not decode).
		{"last event without its blank line", "data: {\"a\":1}\n\ndata: [DONE]\n", []string{"|{\"a\":1}", "|[DONE]"}, io.EOF},
		{"last event without its newline", "event: message_stop\ndata: {\"type\":\"message_stop\"}", []string{"message_stop|{\"type\":\"message_stop\"}"}, io.EOF},
		{"last event with crlf and no blank line", "data: x\r\n\r\ndata: y\r\n", []string{"|x", "|y"}, io.EOF},
		{"cut inside the data", "data: {\"a\":1}\n\ndata: {\"b\"", []string{"|{\"a\":1}", "|{\"b\""}, io.EOF},
		{"cut after an event line", "data: x\n\nevent: ping\n", []string{"|x", "ping|"}, io.EOF},
		{"trailing comment without newline", "data: x\n\n: keep-alive", []string{"|x"}, io.EOF},
		{"bare JSON error line (gemini)", "data: {\"a\":1}\r\n\r\n{\"error\":{\"code\":503}}\n", []string{"|{\"a\":1}", "|{\"error\":{\"code\":503}}"}, io.EOF},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in))
			var got []string
			var err error
			for {
				var ev Event
				ev, err = r.Next()
				if err != nil {
					break
				}
				got = append(got, string(ev.Name)+"|"+string(ev.Data))
			}
			if strings.Join(got, ",") != strings.Join(c.want, ",") || err != c.final {
				t.Fatalf("got %q, %v; want %q, %v", got, err, c.want, c.final)
			}
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	long := strings.Repeat("x", 100_000)
	r := NewReader(strings.NewReader("data: " + long + "\n\n"))
	ev, err := r.Next()
	if err != nil || string(ev.Data) != long {
		t.Fatalf("len %d err %v", len(ev.Data), err)
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	flushes := 0
	w := NewWriter(&b, func() { flushes++ })
	_ = w.Write("", []byte(`{"x":1}`))
	_ = w.Write("message_stop", []byte(`{"type":"message_stop"}`))
	want := "data: {\"x\":1}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	if b.String() != want || flushes != 2 {
		t.Fatalf("got %q flushes %d", b.String(), flushes)
	}
}

type failAfter struct {
	data string
	err  error
}

func (f *failAfter) Read(p []byte) (int, error) {
	if f.data == "" {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// A read error is not an end: it reaches the caller as it is, never as a delivered event.
func TestReaderReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := NewReader(&failAfter{data: "data: x\n\ndata: {\"cut", err: boom})
	if ev, err := r.Next(); err != nil || string(ev.Data) != "x" {
		t.Fatalf("first: %q %v", ev.Data, err)
	}
	if _, err := r.Next(); err != boom {
		t.Fatalf("second: %v, want the read error", err)
	}
}
