package api

import (
	"io"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/sse"
)

// holdLimit is how long a stream's opening frames (messages' message_start and ping,
// responses' response.created, chat's role chunk) may wait for the answer's first content
// before they go out anyway, so a client sees a slow-thinking answer begin.
const holdLimit = time.Second

// streamOut is the client's event stream. It holds the opening frames until the answer has
// content (commit): an upstream that fails right after it opened its stream — Anthropic's
// overloaded_error after message_start, a response.failed after response.created — is then
// still failed over invisibly, as one that failed before answering is. Only the first frame
// arriving after holdLimit commits without content.
//
// It holds the stream's last frames as well, from the answer's finish (or its error) on
// (ending): they go out only once the call is recorded (settle.go, sendTail), so the client never has the
// end of a stream — chat's data: [DONE], messages' message_stop, the responses terminal
// event, gemini's last chunk — whose charge and log entry a crash could still lose.
type streamOut struct {
	w       http.ResponseWriter
	frames  *sse.Writer
	started bool             // the headers and the held frames are out
	enc     ir.StreamEncoder // the client format's encoder of a converted stream, to end it
	held    []ir.Frame       // frames written before commit
	since   time.Time        // when the first frame was held
	// begun is told once, at commit, before the status line: the answer has begun (the
	// pump's hook: route health, the exchange's status and first byte, the headers that
	// describe the translation).
	begun  func()
	ending bool // the answer finished: frames wait in tail for the record
	tail   []ir.Frame
	// Flushes wait for the upstream (upstreamBody): frames written since the last read of
	// the upstream go out in one flush when the relay is about to read again, so a burst of
	// events that arrived together leaves together, as a plain proxy's one read and one
	// write would, and never later than the relay's next wait for the network.
	flusher  http.Flusher
	deferred bool // flush only before reading the upstream
	dirty    bool // written since the last flush
}

func newStreamOut(w http.ResponseWriter, begun func()) *streamOut {
	o := &streamOut{w: w, begun: begun}
	o.flusher, _ = w.(http.Flusher)
	o.frames = sse.NewWriter(w, o.flush)
	return o
}

// flush sends what was written, now or, with deferred flushes, before the next upstream read.
func (o *streamOut) flush() {
	if o.deferred {
		o.dirty = true
		return
	}
	if o.flusher != nil {
		o.flusher.Flush()
	}
}

// flushPending sends the frames written since the last flush.
func (o *streamOut) flushPending() {
	if o.dirty && o.flusher != nil {
		o.flusher.Flush()
	}
	o.dirty = false
}

// upstreamBody is the upstream's stream for the relay to read: each read of it first flushes
// the frames already written, so they never wait on the network.
func (o *streamOut) upstreamBody(body io.Reader) io.Reader {
	o.deferred = true
	return flushBeforeRead{body, o}
}

type flushBeforeRead struct {
	r io.Reader
	o *streamOut
}

func (f flushBeforeRead) Read(p []byte) (int, error) {
	f.o.flushPending()
	return f.r.Read(p)
}

// finishing says the answer is finishing: the frames from now on are its end.
func (o *streamOut) finishing() { o.ending = true }

// takeTail is the held end of the stream, which the caller now sends (settle.go's
// sendTail); frames written from now on go out as they come.
func (o *streamOut) takeTail() []ir.Frame {
	tail := o.tail
	o.tail, o.ending = nil, false
	return tail
}

// sendTail sends the end of the stream, and the stream's start if it had not begun.
func (o *streamOut) sendTail(tail []ir.Frame) {
	if o.commit() != nil {
		return
	}
	for _, f := range tail {
		if o.frames.Write(f.Name, f.Data) != nil {
			return
		}
	}
	o.flushPending()
}

// Write implements ir.Frames.
func (o *streamOut) Write(name string, data []byte) error {
	if o.ending {
		o.tail = append(o.tail, ir.Frame{Name: name, Data: append([]byte(nil), data...)})
		return nil
	}
	if o.started {
		return o.frames.Write(name, data)
	}
	if o.since.IsZero() {
		o.since = time.Now()
	}
	o.held = append(o.held, ir.Frame{Name: name, Data: append([]byte(nil), data...)})
	if time.Since(o.since) < holdLimit {
		return nil
	}
	return o.commit()
}

// commit starts the client's stream: the headers, then every held frame.
func (o *streamOut) commit() error {
	if o.started {
		return nil
	}
	o.started = true
	o.begun()
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.dirty = true // the status line goes out with the next flush, frames or none
	held := o.held
	o.held = nil
	for _, f := range held {
		if err := o.frames.Write(f.Name, f.Data); err != nil {
			return err
		}
	}
	return nil
}
