package sse

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReaderBoundsLinesAndEvents: a line of MaxLine bytes (its ending not counted) and an
// event of MaxLine bytes of name and data pass; one byte more is ErrTooLong, and the reader
// stops there.
func TestReaderBoundsLinesAndEvents(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	data := func(n int) string { return "data: " + x(n-len("data: ")) } // a data line of n bytes
	half := MaxLine / 2
	cases := []struct {
		name    string
		in      string
		wantLen []int // data lengths of the events delivered
		final   error
	}{
		{"a data line at the limit", data(MaxLine) + "\n\n", []int{MaxLine - 6}, io.EOF},
		{"a data line at the limit, ended by \\r\\n", data(MaxLine) + "\r\n\r\n", []int{MaxLine - 6}, io.EOF},
		{"a data line at the limit, the stream's last", data(MaxLine), []int{MaxLine - 6}, io.EOF},
		{"a data line one byte over", data(MaxLine+1) + "\n\n", nil, ErrTooLong},
		{"a data line one byte over, the stream's last", data(MaxLine + 1), nil, ErrTooLong},
		{"a comment at the limit, then an event", ":" + x(MaxLine-1) + "\ndata: ok\n\n", []int{2}, io.EOF},
		{"a comment one byte over", ":" + x(MaxLine) + "\ndata: ok\n\n", nil, ErrTooLong},
		{"a bare JSON line one byte over", "{" + x(MaxLine) + "\n", nil, ErrTooLong},
		{"an event of two lines at the limit", data(half+6) + "\n" + data(half+5) + "\n\n", []int{MaxLine}, io.EOF},
		{"an event of two lines one byte over", data(half+6) + "\n" + data(half+6) + "\n\n", nil, ErrTooLong},
		{"a name and data at the limit", "event: " + x(half) + "\n" + data(half+6) + "\n\n", []int{half}, io.EOF},
		{"a name and data one byte over", "event: " + x(half+1) + "\n" + data(half+6) + "\n\n", nil, ErrTooLong},
		{"an event over the limit after one at it", data(MaxLine) + "\n\n" + data(MaxLine+1) + "\n\n", []int{MaxLine - 6}, ErrTooLong},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in))
			var got []int
			var err error
			for {
				var ev Event
				if ev, err = r.Next(); err != nil {
					break
				}
				got = append(got, len(ev.Data))
			}
			if len(got) != len(c.wantLen) || !errors.Is(err, c.final) {
				t.Fatalf("events of %v bytes, then %v; want %v, then %v", got, err, c.wantLen, c.final)
			}
			for i := range got {
				if got[i] != c.wantLen[i] {
					t.Fatalf("events of %v bytes, want %v", got, c.wantLen)
				}
			}
		})
	}
}

// endless is a stream that never ends: prefix, then pattern again and again. It counts what
// the reader took from it.
type endless struct {
	prefix, pattern string
	off             int
	read            int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if e.prefix != "" {
			k := copy(p[n:], e.prefix)
			e.prefix = e.prefix[k:]
			n += k
			continue
		}
		k := copy(p[n:], e.pattern[e.off:])
		e.off = (e.off + k) % len(e.pattern)
		n += k
	}
	e.read += n
	return n, nil
}

// TestReaderMemoryIsBounded: an upstream that never ends its line, or its event, is stopped
// with ErrTooLong once it is over the limit, and the reader holds no more than the limit and
// one read; of a line, it has not even read more.
func TestReaderMemoryIsBounded(t *testing.T) {
	cases := []struct {
		name string
		src  *endless
		line bool // one line: what was read is what is held (an event's lines pass through)
	}{
		{"a line that never ends", &endless{prefix: "data: ", pattern: strings.Repeat("x", 4096)}, true},
		{"a comment that never ends", &endless{prefix: ":", pattern: strings.Repeat("keep-alive ", 400)}, true},
		{"an event that never ends", &endless{pattern: "data: " + strings.Repeat("y", 1000) + "\n"}, false},
		{"event lines that never end", &endless{pattern: "event: " + strings.Repeat("a", 1000) + "\n"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(c.src)
			if _, err := r.Next(); !errors.Is(err, ErrTooLong) {
				t.Fatalf("Next = %v, want ErrTooLong", err)
			}
			bound := MaxLine + 1 + readSize // the limit, a "\r" and one read
			if c.line && c.src.read > bound {
				t.Errorf("read %d bytes from the upstream, want at most %d", c.src.read, bound)
			}
			if held := cap(r.long) + cap(r.data) + cap(r.name); held > bound {
				t.Errorf("holds %d bytes (line %d, data %d, name %d), want at most %d", held, cap(r.long), cap(r.data), cap(r.name), bound)
			}
		})
	}
}
