package sse

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// refEvent is an event as the reference splitter sees it; atEnd marks one that only the end
// of the stream delivers (its blank line or its newline never came).
type refEvent struct {
	name, data string
	atEnd      bool
}

// reference splits a whole stream by the rules Reader documents, written the plain way: lines
// end at "\n" and lose their trailing "\r"s and "\n"s; a blank line ends an event that has a
// field; ":" starts a comment; a line starting "{" before any field is an event by itself (a
// Gemini error); "name: value" (one optional space) sets data (lines joined by "\n") or event;
// the last event is delivered without its blank line.
func reference(stream []byte) []refEvent {
	var out []refEvent
	var name, data []string
	have := false
	lines := strings.Split(string(stream), "\n")
	for i, line := range lines {
		last := i == len(lines)-1 // the text after the last newline: a line only when not empty
		if last && line == "" {
			break
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if have {
				out = append(out, refEvent{strings.Join(name, ""), strings.Join(data, "\n"), last})
				name, data, have = nil, nil, false
			}
		case line[0] == ':':
		case line[0] == '{' && !have:
			out = append(out, refEvent{"", line, last})
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "data":
				data = append(data, value)
			case "event":
				name = append(name, value)
			}
			have = true
		}
	}
	if have {
		out = append(out, refEvent{strings.Join(name, ""), strings.Join(data, "\n"), true})
	}
	return out
}

// chunked hands its data out in the short reads sizes say (1 to 256 bytes each, cycling),
// then fails with err (io.EOF for a stream that ends).
type chunked struct {
	data  []byte
	sizes []byte
	n     int
	err   error
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, c.err
	}
	size := 1
	if len(c.sizes) > 0 {
		size = int(c.sizes[c.n%len(c.sizes)]) + 1
		c.n++
	}
	size = min(size, len(p), len(c.data))
	copy(p, c.data[:size])
	c.data = c.data[size:]
	return size, nil
}

var errCut = errors.New("connection reset")

// readAll reads events until an error, copying each (Data aliases the reader's buffer).
func readAll(r *Reader) ([]refEvent, error) {
	var got []refEvent
	for {
		ev, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, refEvent{name: string(ev.Name), data: string(ev.Data)})
	}
}

func sameEvents(got, want []refEvent) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].name != want[i].name || got[i].data != want[i].data {
			return false
		}
	}
	return true
}

// FuzzReader: for any stream and any chunking of it into short reads, Reader delivers exactly
// the events the reference splitter finds, then io.EOF (again on every later call); the bytes
// it delivers are never more than it was given. Cut by a read error after any prefix, it
// delivers the prefix's events that were complete (never one the end of the stream would have
// completed) and then that error, not io.EOF.
func FuzzReader(f *testing.F) {
	for _, dir := range []string{"responses", "messages", filepath.Join("gemini", "stream"), filepath.Join("recorded", "xai")} {
		entries, _ := os.ReadDir(filepath.Join("..", "..", "testdata", dir))
		for _, e := range entries {
			if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", dir, e.Name())); err == nil && bytes.HasSuffix([]byte(e.Name()), []byte(".sse")) {
				f.Add(b, []byte{0, 7, 200}, uint16(len(b)/2))
			}
		}
	}
	for _, s := range []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n", ": keep-alive\n\nevent: message_start\ndata: {}\n\n",
		"data: x\r\n\r\ndata: y\r\n", "data: a\ndata: b\n\n", "data:{}", "event: ping\n", "data: x\n\n: c",
		"data: {\"a\":1}\r\n\r\n{\"error\":{\"code\":503}}\n", "id: 1\nretry: 5\n\n", "data\n\n", "data: x\r\r\n\n",
		"data: " + strings.Repeat("x", 20_000) + "\n\n" + strings.Repeat("{", 17_000),
	} {
		f.Add([]byte(s), []byte{3}, uint16(len(s)/3))
	}
	f.Fuzz(func(t *testing.T, stream, sizes []byte, cut uint16) {
		want := reference(stream)
		r := NewReader(&chunked{data: stream, sizes: sizes, err: io.EOF})
		got, err := readAll(r)
		if err != io.EOF || !sameEvents(got, want) {
			t.Fatalf("got %+v, %v\nwant %+v", got, err, want)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("after the end: %v", err)
		}
		delivered := 0
		for _, e := range got {
			delivered += len(e.name) + len(e.data)
		}
		if delivered > len(stream) {
			t.Fatalf("%d bytes delivered from %d", delivered, len(stream))
		}

		prefix := stream[:int(cut)%(len(stream)+1)]
		var complete []refEvent
		for _, e := range reference(prefix) {
			if !e.atEnd {
				complete = append(complete, e)
			}
		}
		got, err = readAll(NewReader(&chunked{data: prefix, sizes: sizes, err: errCut}))
		if err != errCut || !sameEvents(got, complete) {
			t.Fatalf("cut after %d bytes: got %+v, %v\nwant %+v, then the read error", len(prefix), got, err, complete)
		}
	})
}
