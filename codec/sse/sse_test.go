package sse

import (
	"bytes"
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
		{"cut mid-event", "data: {\"a\":1}\n\ndata: {\"b\"", []string{"|{\"a\":1}"}, io.ErrUnexpectedEOF},
		{"cut after data line before blank", "data: x\n", nil, io.ErrUnexpectedEOF},
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
