// Package sse reads and writes Server-Sent Events frames without buffering whole streams.
package sse

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// Event is one frame. Data is the joined data lines; it aliases the reader's buffer and is
// valid only until the next call to Next.
type Event struct {
	Name []byte
	Data []byte
}

// MaxLine bounds what one upstream event may hold: a line, not counting its ending ("\n" or
// "\r\n"), and an event's name and data together. 8 MiB is well above any provider's largest
// event (an image in base64 is a few MiB) and keeps a stream's memory bounded whatever the
// upstream sends: the reader holds no more than the limit and one read of a line.
const MaxLine = 8 << 20

// ErrTooLong ends a stream whose line, or event, is over MaxLine: the reader stops there, as
// at a broken connection, without reading the rest of it.
var ErrTooLong = fmt.Errorf("sse: an upstream line or event over %d MiB", MaxLine>>20)

// readSize is the reader's buffer: a line that fits is read in place, a longer one collected.
const readSize = 16 << 10

// Reader splits a stream into events. Comments (keep-alives) are skipped.
type Reader struct {
	r     *bufio.Reader
	data  []byte
	name  []byte
	long  []byte // a line longer than the buffer, collected (kept for the stream's next one)
	limit int    // MaxLine
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, readSize), limit: MaxLine}
}

// Next returns the next event, or io.EOF at the end. The last event is delivered even when
// the stream ends without the blank line after it (providers close the connection right
// after their last event's data line): whether an answer is whole is for the format's
// decoder to say (ir.EndingDecoder), and an event cut inside its data does not decode. A
// line or an event over the limit is ErrTooLong.
func (r *Reader) Next() (Event, error) {
	r.data = r.data[:0]
	r.name = r.name[:0]
	have := false
	dataLines := 0
	for {
		line, err := r.line()
		atEOF := err == io.EOF
		if err != nil && !atEOF {
			return Event{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if have {
				return Event{Name: r.name, Data: r.data}, nil
			}
		case line[0] == ':': // a comment (keep-alive)
		case line[0] == '{' && !have:
			// A bare JSON line: how Gemini reports an error in the middle of an SSE stream.
			r.data = appendWithin(r.data, line, r.limit)
			return Event{Data: r.data}, nil
		default:
			if err := r.field(line, &dataLines); err != nil {
				return Event{}, err
			}
			have = true
		}
		if atEOF {
			if have { // the last event, without its blank line
				return Event{Name: r.name, Data: r.data}, nil
			}
			return Event{}, io.EOF
		}
	}
}

// line reads the next line with its ending: in place when it fits the buffer, else collected
// in r.long, which never grows past the limit, a "\r" and one read. A line over the limit is
// ErrTooLong as soon as it is known to be.
func (r *Reader) line() ([]byte, error) {
	line, err := r.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		r.long = r.long[:0]
		for err == bufio.ErrBufferFull {
			r.long = appendWithin(r.long, line, r.limit+1+readSize)
			if lineLength(r.long) > r.limit {
				return nil, ErrTooLong
			}
			line, err = r.r.ReadSlice('\n')
		}
		r.long = appendWithin(r.long, line, r.limit+1+readSize)
		line = r.long
	}
	if lineLength(line) > r.limit {
		return nil, ErrTooLong
	}
	return line, err
}

// lineLength is a line's length without its ending ("\n" or "\r\n"; a "\r" at the end of
// a line still being read may be the start of one).
func lineLength(line []byte) int {
	n := len(line)
	if n > 0 && line[n-1] == '\n' {
		n--
	}
	if n > 0 && line[n-1] == '\r' {
		n--
	}
	return n
}

var newline = []byte{'\n'}

// appendWithin appends p to b, growing b to at most bound bytes of capacity (the caller
// keeps len(b)+len(p) within it): append's own growth could double a buffer near the limit.
func appendWithin(b, p []byte, bound int) []byte {
	if need := len(b) + len(p); need > cap(b) {
		grown := make([]byte, len(b), min(max(2*cap(b), need), max(bound, need)))
		copy(grown, b)
		b = grown
	}
	return append(b, p...)
}

// field takes one "name: value" line of the event being read; an event whose name and data
// would go over the limit is ErrTooLong.
func (r *Reader) field(line []byte, dataLines *int) error {
	field, value, _ := bytes.Cut(line, []byte(":"))
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(field) {
	case "data":
		sep := min(*dataLines, 1) // a "\n" joins the lines
		if len(r.name)+len(r.data)+sep+len(value) > r.limit {
			return ErrTooLong
		}
		r.data = appendWithin(r.data, newline[:sep], r.limit)
		r.data = appendWithin(r.data, value, r.limit)
		*dataLines++
	case "event":
		if len(r.name)+len(r.data)+len(value) > r.limit {
			return ErrTooLong
		}
		r.name = appendWithin(r.name, value, r.limit)
	}
	// id:, retry: — carried by no format we speak; the frame still counts.
	return nil
}

// Writer writes frames and flushes each one, so a client sees every event as it happens.
type Writer struct {
	w     io.Writer
	flush func()
	buf   []byte
}

// NewWriter writes to w and calls flush after each frame (flush may be nil).
func NewWriter(w io.Writer, flush func()) *Writer {
	return &Writer{w: w, flush: flush}
}

// Write sends one frame; name may be empty (the chat and gemini formats write no event line).
func (w *Writer) Write(name string, data []byte) error {
	b := w.buf[:0]
	if name != "" {
		b = append(b, "event: "...)
		b = append(b, name...)
		b = append(b, '\n')
	}
	b = append(b, "data: "...)
	b = append(b, data...)
	b = append(b, '\n', '\n')
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	if w.flush != nil {
		w.flush()
	}
	return nil
}
