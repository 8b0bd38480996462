package simulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// errDropped ends a stream that Behavior.DropAfterChunks cut off.
var errDropped = errors.New("simulator: stream dropped by behaviour")

// sseStream writes Server-Sent Events for every format: one event per call, flushed at once
// (a gateway must see chunks as they are produced, not when a buffer fills), paced by
// TokensPerSecond and cut by DropAfterChunks.
type sseStream struct {
	w         http.ResponseWriter
	r         *http.Request
	rc        *http.ResponseController
	start     time.Time
	interval  time.Duration
	dropAfter int
	sent      int
	buf       bytes.Buffer
}

// startSSE sends the 200 and event-stream headers.
func startSSE(w http.ResponseWriter, r *http.Request, b Behavior) *sseStream {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	s := &sseStream{w: w, r: r, rc: http.NewResponseController(w), start: time.Now(),
		interval: b.chunkInterval(), dropAfter: b.DropAfterChunks}
	_ = s.rc.Flush()
	return s
}

// send writes one event: an "event:" line when name is set (Anthropic, Responses), then
// "data: <payload as JSON>". It returns an error when the stream must stop: the client went
// away, or the behaviour dropped the connection.
func (s *sseStream) send(name string, payload any) error {
	// Chunk i is due i intervals after the first, so pacing does not drift with write time.
	if s.interval > 0 {
		due := s.start.Add(time.Duration(s.sent) * s.interval)
		if !sleepCtx(s.r.Context(), time.Until(due)) {
			return s.r.Context().Err()
		}
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	s.buf.Reset()
	if name != "" {
		s.buf.WriteString("event: " + name + "\n")
	}
	s.buf.WriteString("data: ")
	s.buf.Write(data)
	s.buf.WriteString("\n\n")
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
