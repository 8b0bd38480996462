package upstream

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// Bedrock streams in AWS event-stream framing (binary frames with typed headers and CRCs),
// not SSE. eventStreamSSE reads those frames and gives the SSE text the route's format's
// stream decoder reads, so no codec knows the framing:
//
//   - InvokeModel (messages): each `chunk` event's payload is {"bytes": base64 of one
//     Anthropic stream event}; it becomes `event: <its type>` with that event as data, which
//     is Anthropic's own stream.
//   - ConverseStream: each event becomes `event: <:event-type>` with its payload as data.
//   - An exception frame (a throttle, a model error mid-stream) becomes the format's in-band
//     error: Anthropic's `error` event for InvokeModel, `event: <exception type>` for Converse.
type eventStreamSSE struct {
	rc      io.ReadCloser
	frames  frameReader
	chunked bool   // InvokeModel: the events are base64 inside `chunk` frames
	f       frame  // the frame being read
	event   []byte // a chunk's decoded event, reused
	buf     []byte // the SSE text of the last frame
	out     []byte // what of buf is not yet read
	err     error  // the error to return once out is drained
}

func newEventStreamSSE(rc io.ReadCloser, chunked bool) *eventStreamSSE {
	return &eventStreamSSE{rc: rc, frames: frameReader{r: bufio.NewReaderSize(rc, 16<<10)}, chunked: chunked}
}

func (s *eventStreamSSE) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.next()
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

func (s *eventStreamSSE) Close() error { return s.rc.Close() }

// next decodes one frame into s.out, or sets s.err.
func (s *eventStreamSSE) next() {
	if err := s.frames.next(&s.f); err != nil {
		s.err = err
		return
	}
	s.buf = s.buf[:0]
	f := &s.f
	switch string(f.messageType) {
	case "event":
		s.onEvent(f.eventType, f.payload)
	case "exception":
		s.exception(f.exceptionType, f.payload)
	case "error": // a service error: the code and message are headers, not a payload
		msg, _ := json.Marshal(map[string]string{"message": string(f.errorMessage)})
		s.exception(f.errorCode, msg)
	}
	s.out = s.buf
}

func (s *eventStreamSSE) onEvent(name, payload []byte) {
	if !s.chunked {
		s.emit(name, payload)
		return
	}
	if string(name) != "chunk" {
		return // InvokeModel sends nothing else; a future event type is not the messages stream
	}
	ev, err := s.chunkEvent(payload)
	if err != nil {
		s.err = err
		return
	}
	s.emit(eventType(ev), ev)
}

// chunkEvent decodes a chunk's {"bytes": base64} into s.event: directly when the payload is
// laid out as Bedrock writes it, else through encoding/json.
func (s *eventStreamSSE) chunkEvent(payload []byte) ([]byte, error) {
	const head = `{"bytes":"`
	if bytes.HasPrefix(payload, []byte(head)) {
		if end := bytes.IndexByte(payload[len(head):], '"'); end >= 0 {
			b64 := payload[len(head) : len(head)+end]
			if bytes.IndexByte(b64, '\\') < 0 {
				s.event = slices.Grow(s.event[:0], base64.StdEncoding.DecodedLen(len(b64)))
				n, err := base64.StdEncoding.Decode(s.event[:cap(s.event)], b64)
				if err != nil {
					return nil, fmt.Errorf("bedrock chunk: %w", err)
				}
				s.event = s.event[:n]
				return s.event, nil
			}
		}
	}
	var c struct {
		Bytes []byte `json:"bytes"` // base64 in the JSON, decoded by encoding/json
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return nil, fmt.Errorf("bedrock chunk: %w", err)
	}
	return c.Bytes, nil
}

// eventType is an Anthropic stream event's type, the SSE event name Anthropic gives it:
// read from its head when it starts as Anthropic writes it, else through encoding/json.
func eventType(ev []byte) []byte {
	const head = `{"type":"`
	if bytes.HasPrefix(ev, []byte(head)) {
		t := ev[len(head):]
		if end := bytes.IndexByte(t, '"'); end > 0 && bytes.IndexByte(t[:end], '\\') < 0 {
			return t[:end]
		}
	}
	var t struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(ev, &t)
	return []byte(t.Type) // "" when it has none: the messages decoder then goes by the data
}

func (s *eventStreamSSE) exception(kind, payload []byte) {
	if !s.chunked {
		s.emit(kind, payload)
		return
	}
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(payload, &e)
	body, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{
		"type": anthropicErrorType(bedrockExceptionStatus(string(kind))), "message": e.Message,
	}})
	s.emit([]byte("error"), body)
}

// emit appends one SSE event. JSON whose text spans lines is compacted so that it stays
// one data line.
func (s *eventStreamSSE) emit(name, data []byte) {
	if bytes.ContainsAny(data, "\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, data) == nil {
			data = b.Bytes()
		} else {
			data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte("\r"), nil), []byte("\n"), nil)
		}
	}
	if len(name) > 0 {
		s.buf = append(s.buf, "event: "...)
		s.buf = append(s.buf, name...)
		s.buf = append(s.buf, '\n')
	}
	s.buf = append(s.buf, "data: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
}
