package ir

import (
	"sort"
	"strings"
	"sync"
)

// Frames writes one SSE frame (name may be empty) and flushes it to the client. data is the
// encoder's reused buffer: valid only during the call, so an implementation that keeps a frame
// copies it.
type Frames interface {
	Write(name string, data []byte) error
}

// ClientFormat is a format clients speak: requests in, answers and errors out.
type ClientFormat interface {
	// DecodeRequest parses and checks a client body. Errors are *Error with Kind
	// ErrInvalidRequest and Param naming the field.
	DecodeRequest(body []byte) (*Request, error)
	// EncodeResponse renders a whole answer; model is the name the client asked for.
	EncodeResponse(r *Response, model string) []byte
	// NewStreamEncoder renders events as this format's SSE frames, including the terminator
	// after EvFinish and the in-band error after EvError. req is the decoded client request
	// (for include_usage and the like); model is the name the client asked for.
	NewStreamEncoder(out Frames, req *Request, model string) StreamEncoder
	// EncodeError renders an error body in this format's envelope.
	EncodeError(e *Error) []byte
}

// StreamEncoder turns events into frames. Encode is called with every event in order;
// Close is called once at the end, also after an error, and must leave the client with a
// well-formed stream end (or the format's error event when EvFinish never came).
type StreamEncoder interface {
	Encode(ev Event) error
	Close() error
}

// UpstreamFormat is a format routes speak: requests out, answers and errors in.
type UpstreamFormat interface {
	// EncodeRequest renders r for the upstream, with the route's model id. What the format
	// cannot express is added to loss.
	EncodeRequest(r *Request, upstreamModel string, loss *Loss) ([]byte, error)
	// Path is appended to the route's base URL (gemini puts the model and the stream mode in it).
	Path(upstreamModel string, stream bool) string
	// DecodeResponse parses a whole 2xx answer.
	DecodeResponse(body []byte) (*Response, error)
	// NewStreamDecoder parses one answer's SSE events.
	NewStreamDecoder() StreamDecoder
	// DecodeError reads a non-2xx answer's body into a neutral error (status kept).
	DecodeError(status int, body []byte) *Error
}

// StreamDecoder turns one upstream SSE event into IR events. done reports the format's
// end-of-stream marker (or an in-band error, which also ends the stream). An upstream that
// stops without it has broken the stream, unless the decoder is an EndingDecoder that says
// the answer had already finished. The returned slice may be the decoder's, reused by the next
// Decode: a caller that keeps events past that copies them (the events' strings stay valid).
type StreamDecoder interface {
	Decode(name, data []byte) (events []Event, done bool, err error)
}

// LossSystemPosition is the loss a format with one system field reports when it hoists a
// system message that came after the conversation began: the text arrives, its place does not.
const LossSystemPosition = "messages[].role=system (position)"

// Loss collects what a translation could not express, for the X-Modelgate-Dropped header and
// the dropped-fields counter. It is never silent.
type Loss struct {
	mu     sync.Mutex
	fields map[string]struct{}
}

// Drop records a field (a dotted path such as "logit_bias" or "messages[].cache_control").
func (l *Loss) Drop(field string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.fields == nil {
		l.fields = map[string]struct{}{}
	}
	l.fields[field] = struct{}{}
	l.mu.Unlock()
}

// Fields returns the dropped fields, sorted.
func (l *Loss) Fields() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.fields))
	for f := range l.fields {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Header is the X-Modelgate-Dropped value ("" when nothing was dropped).
func (l *Loss) Header() string { return strings.Join(l.Fields(), ", ") }
