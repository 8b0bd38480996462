package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
)

// errDropped ends a stream that Behavior.DropAfterChunks cut off.
var errDropped = errors.New("simulator: stream dropped by behaviour")

// framing is how a format delimits streamed events on the wire.
type framing int

const (
	// framingSSE: optional "event: <name>" line, "data: <json>", blank line; every SSE format
	// except Gemini's.
	framingSSE framing = iota
	// framingSSECRLF: "data: <json>" then "\r\n\r\n", never an event line (Gemini alt=sse).
	framingSSECRLF
	// framingJSONArray: one JSON array written element by element (Gemini without alt=sse).
	framingJSONArray
	// framingEventStream: AWS event-stream binary messages (Bedrock's streams), one per
	// event; see eventstream.go.
	framingEventStream
)

// sseEvent is one streamed event.
type sseEvent struct {
	name string // the "event:" line; "" for none. Event streams: the event or exception type
	data any    // marshalled to JSON
	bare bool   // written without "data: " (a Gemini mid-stream error object)
	// exception marks an event-stream exception message (Bedrock's mid-stream errors).
	exception bool
}

// sseStream writes a streamed response for every format: one event per call, flushed at once
// (a gateway must see chunks as they are produced, not when a buffer fills), paced by
// TokensPerSecond and cut by DropAfterChunks.
type sseStream struct {
	w         http.ResponseWriter
	r         *http.Request
	rc        *http.ResponseController
	framing   framing
	start     time.Time
	interval  time.Duration
	dropAfter int
	sent      int
	buf       bytes.Buffer
	longLine  int // Behavior.LongLineBytes, sent once before chunk longAfter+1
	longAfter int
	events    *eventstream.Encoder // framingEventStream's encoder
}

// startSSE sends the 200 and event-stream headers for a "\n\n"-framed stream.
func startSSE(w http.ResponseWriter, r *http.Request, b Behavior) *sseStream {
	return startStream(w, r, b, framingSSE)
}

// startStream sends the 200 and the headers the framing needs.
func startStream(w http.ResponseWriter, r *http.Request, b Behavior, f framing) *sseStream {
	h := w.Header()
	switch f {
	case framingJSONArray:
		h.Set("Content-Type", "application/json; charset=UTF-8")
	case framingEventStream:
		h.Set("Content-Type", eventStreamContentType)
	default:
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
	}
	w.WriteHeader(http.StatusOK)
	s := &sseStream{w: w, r: r, rc: http.NewResponseController(w), framing: f, start: time.Now(),
		interval: b.chunkInterval(), dropAfter: b.DropAfterChunks, longLine: b.LongLineBytes, longAfter: b.LongLineAfterChunks}
	if f == framingEventStream {
		s.events = eventstream.NewEncoder()
	}
	_ = s.rc.Flush()
	return s
}

// send writes one event: an "event:" line when name is set (Anthropic, Responses), then
// "data: <payload as JSON>". It returns an error when the stream must stop: the client went
// away, or the behaviour dropped the connection.
func (s *sseStream) send(name string, payload any) error {
	return s.emit(sseEvent{name: name, data: payload})
}

// emit writes one event in the stream's framing, paced and counted.
func (s *sseStream) emit(ev sseEvent) error {
	// Chunk i is due i intervals after the first, so pacing does not drift with write time.
	if s.interval > 0 {
		due := s.start.Add(time.Duration(s.sent) * s.interval)
		if !sleepCtx(s.r.Context(), time.Until(due)) {
			return s.r.Context().Err()
		}
	}
	if err := s.sendLongLine(); err != nil {
		return err
	}
	data, err := marshalJSON(ev.data)
	if err != nil {
		return err
	}
	s.buf.Reset()
	switch s.framing {
	case framingEventStream:
		if err := encodeEventMessage(s.events, &s.buf, ev, data); err != nil {
			return err
		}
	case framingJSONArray:
		if s.sent == 0 {
			s.buf.WriteString("[")
		} else {
			s.buf.WriteString(",\r\n")
		}
		s.buf.Write(data)
	case framingSSECRLF:
		if !ev.bare {
			s.buf.WriteString("data: ")
		}
		s.buf.Write(data)
		s.buf.WriteString("\r\n\r\n")
	default:
		if ev.name != "" {
			s.buf.WriteString("event: " + ev.name + "\n")
		}
		if !ev.bare {
			s.buf.WriteString("data: ")
		}
		s.buf.Write(data)
		s.buf.WriteString("\n\n")
	}
	if err := s.write(s.buf.Bytes()); err != nil {
		return err
	}
	s.sent++
	if s.dropAfter > 0 && s.sent >= s.dropAfter {
		s.drop()
		return errDropped
	}
	return nil
}

// sendLongLine sends Behavior.LongLineBytes' comment line when its chunk is next.
func (s *sseStream) sendLongLine() error {
	if s.longLine == 0 || s.sent != s.longAfter || s.framing == framingJSONArray || s.framing == framingEventStream {
		return nil
	}
	ending := "\n"
	if s.framing == framingSSECRLF {
		ending = "\r\n"
	}
	line := bytes.Repeat([]byte("x"), s.longLine+len(ending))
	line[0] = ':'
	copy(line[s.longLine:], ending)
	s.longLine = 0 // once
	return s.write(line)
}

// finish writes what closes the framing: "]" for a JSON array, nothing for SSE.
func (s *sseStream) finish() error {
	if s.framing != framingJSONArray {
		return nil
	}
	if s.sent == 0 {
		return s.sendRaw("[]")
	}
	return s.sendRaw("]")
}

// sendRaw writes a pre-formatted event such as "data: [DONE]\n\n". It is neither paced nor
// counted: terminators are not data chunks.
func (s *sseStream) sendRaw(event string) error { return s.write([]byte(event)) }

func (s *sseStream) write(p []byte) error {
	if _, err := s.w.Write(p); err != nil {
		return err
	}
	return s.rc.Flush()
}

// drop closes the TCP connection under the stream, so the client sees the body end mid-way
// (a truncated chunked encoding) exactly as when an upstream process dies. Where hijacking is
// impossible (HTTP/2), aborting the handler resets the stream, the nearest equivalent.
func (s *sseStream) drop() {
	conn, _, err := s.rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// playStream sends a laid-out stream in the given framing and closes the framing.
func playStream(ex *exchange, f framing, events []sseEvent) {
	st := startStream(ex.w, ex.r, ex.behavior, f)
	for _, ev := range events {
		if st.emit(ev) != nil {
			return // client gone or connection dropped on purpose
		}
	}
	_ = st.finish()
}

// script lays out a stream before it is sent, so what is sent is decided in one place and how
// it is sent (pacing, dropping) in another. It also injects the mid-stream failure: after
// failAfter content deltas it appends the format's failure events and ignores everything
// added later, as a real stream ends at its error.
type script struct {
	events    []sseEvent
	failAfter int               // content deltas before the failure; 0 never fails
	failure   func() []sseEvent // the format's failure events, built from the state at the cut
	deltas    int
	failed    bool
}

// newScript starts a stream for a; failure is used only if a asks for a mid-stream failure.
func newScript(a answer, failure func() []sseEvent) *script {
	s := &script{failure: failure}
	if a.failMidstream {
		s.failAfter = midstreamFailAfter
	}
	return s
}

// add appends an event that carries no content (openings, closings, usage).
func (s *script) add(name string, data any) {
	if !s.failed {
		s.events = append(s.events, sseEvent{name: name, data: data})
	}
}

// addDelta appends an event that carries content (a word, an argument fragment) and fails
// the stream once failAfter of them are out.
func (s *script) addDelta(name string, data any) {
	if s.failed {
		return
	}
	s.add(name, data)
	s.deltas++
	if s.failAfter > 0 && s.deltas == s.failAfter {
		s.fail()
	}
}

// ending is called before the terminal events: an answer with fewer content deltas than
// failAfter still fails, just before it would have completed.
func (s *script) ending() {
	if s.failAfter > 0 && !s.failed {
		s.fail()
	}
}

func (s *script) fail() {
	s.events = append(s.events, s.failure()...)
	s.failed = true
}

// obj is a JSON object that keeps its keys in the order written, so bodies and events read
// like the providers' own ("type" first) and golden transcripts are stable.
type obj []member

type member struct {
	key   string
	value any
}

// MarshalJSON writes the members in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := marshalJSON(m.key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		v, err := marshalJSON(m.value)
		if err != nil {
			return nil, err
		}
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalJSON is json.Marshal without HTML escaping: bodies are for API clients, not
// browsers, so "<" stays readable, as in writeJSON.
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
