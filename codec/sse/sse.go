// Package sse reads and writes Server-Sent Events frames without buffering whole streams.
package sse

import (
	"bufio"
	"bytes"
	"io"
)

// Event is one frame. Data is the joined data lines; it aliases the reader's buffer and is
// valid only until the next call to Next.
type Event struct {
	Name []byte
	Data []byte
}

// Reader splits a stream into events. Comments (keep-alives) are skipped.
type Reader struct {
	r    *bufio.Reader
	data []byte
	name []byte
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 16<<10)}
}

// Next returns the next event, or io.EOF at the end. The last event is delivered even when
// the stream ends without the blank line after it (providers close the connection right
// after their last event's data line): whether an answer is whole is for the format's
// decoder to say (ir.EndingDecoder), and an event cut inside its data does not decode.
func (r *Reader) Next() (Event, error) {
	r.data = r.data[:0]
	r.name = r.name[:0]
	have := false
	dataLines := 0
	for {
		line, err := r.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A long line: collect it whole.
			full := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = r.r.ReadSlice('\n')
				full = append(full, line...)
			}
			line = full
		}
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
			r.data = append(r.data, line...)
			return Event{Data: r.data}, nil
		default:
			r.field(line, &dataLines)
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

// field takes one "name: value" line of the event being read.
func (r *Reader) field(line []byte, dataLines *int) {
	field, value, _ := bytes.Cut(line, []byte(":"))
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(field) {
	case "data":
		if *dataLines > 0 {
			r.data = append(r.data, '\n')
		}
		r.data = append(r.data, value...)
		*dataLines++
	case "event":
		r.name = append(r.name, value...)
	}
	// id:, retry: — carried by no format we speak; the frame still counts.
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
