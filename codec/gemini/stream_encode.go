package gemini

import (
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// NewStreamEncoder renders IR events as streamGenerateContent?alt=sse: data-only events, each
// a whole GenerateContentResponse holding only the new parts, no event names, no comments and
// no terminator. Text and thoughts go out as they come; a function call goes out whole, with
// args as an object, once its arguments are complete (before the next text, or with the
// finishReason). The last chunk carries the finishReason and the full usageMetadata. An error
// is a data event {"error":{…}}, which the Google SDKs raise.
func (format) NewStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	e := &streamEncoder{out: out, model: model}
	e.buf = e.bufArr[:0]
	if req != nil {
		e.thoughts = req.Thinking.IncludeText
	}
	return e
}

type streamEncoder struct {
	out      ir.Frames
	model    string
	id       string
	thoughts bool // the client asked for thought parts
	usage    codec.Usage
	calls    []*outCall // by IR index
	sent     int        // calls before this index have been written
	ended    bool
	err      error
	parts    []streamPart // the chunk being written, reused
	buf      []byte       // the frame being written, reused
	bufArr   [512]byte    // buf's first array, allocated with the encoder
}

// streamPart is one part of a streamed chunk: text (a thought when thought is set), a
// function call, or a signature alone.
type streamPart struct {
	text    string
	hasText bool
	thought bool
	call    *outCall
	sig     string
}

type outCall struct {
	id, name, sig string
	args          []byte
}

func (e *streamEncoder) Encode(ev ir.Event) error {
	if e.ended || e.err != nil {
		return e.err
	}
	if e.id == "" {
		e.id = responseID(ev.ID)
	}
	switch ev.Kind {
	case ir.EvStart, ir.EvUsage:
		if ev.Usage.Known() {
			e.usage = ev.Usage
		}
	case ir.EvText:
		sig := ""
		if ev.Format == signatureFormat {
			sig = ev.Signature
		}
		if ev.Text != "" || sig != "" {
			e.completeCalls(true)
			e.write(streamPart{text: ev.Text, hasText: true, sig: sig}, "")
		}
	case ir.EvReasoning:
		if e.thoughts && ev.Text != "" {
			e.completeCalls(true)
			e.write(streamPart{text: ev.Text, hasText: true, thought: true}, "")
		}
	case ir.EvSignature:
		if e.thoughts && ev.Format == signatureFormat && ev.Text != "" {
			e.parts = e.parts[:0]
			e.write(streamPart{hasText: true, thought: true, sig: ev.Text}, "")
		}
	case ir.EvToolStart:
		c := e.call(ev.Index)
		c.id, c.name = ev.ID, ev.Name
		if ev.Format == signatureFormat {
			c.sig = ev.Signature
		}
	case ir.EvToolArgs:
		c := e.call(ev.Index)
		c.args = append(c.args, ev.Text...)
		if e.completeCalls(false) {
			e.write(streamPart{}, "")
		}
	case ir.EvFinish:
		if ev.Usage.Known() {
			e.usage = ev.Usage
		}
		e.finish(ev.Stop)
	case ir.EvError:
		e.fail(ev.Err)
	}
	return e.err
}

func (e *streamEncoder) call(i int) *outCall {
	for len(e.calls) <= i {
		e.calls = append(e.calls, nil)
	}
	if e.calls[i] == nil {
		e.calls[i] = &outCall{}
	}
	return e.calls[i]
}

// completeCalls starts e.parts with the calls whose arguments are whole, in index order and
// stopping at the first that is not (all of them when all is set), as functionCall parts, and
// reports whether there were any. A JSON object is valid only once it is closed, so a valid
// one is complete.
func (e *streamEncoder) completeCalls(all bool) bool {
	e.parts = e.parts[:0]
	for ; e.sent < len(e.calls); e.sent++ {
		c := e.calls[e.sent]
		if all && (c == nil || c.name == "") {
			continue // arguments of a call never started: nothing a client could run
		}
		if c == nil || c.name == "" || !jsonscan.Valid(c.args) && !all {
			break
		}
		e.parts = append(e.parts, streamPart{call: c, sig: c.sig})
	}
	return len(e.parts) > 0
}

// write writes one GenerateContentResponse with e.parts and last (unless it is empty),
// appended by hand to the reused buffer in outResponse's shape.
func (e *streamEncoder) write(last streamPart, finish string) {
	if e.err != nil {
		return
	}
	if last.hasText || last.call != nil || last.sig != "" {
		e.parts = append(e.parts, last)
	}
	b := append(e.buf[:0], `{"candidates":[{"content":{`...)
	for i, p := range e.parts {
		if i == 0 {
			b = append(b, `"parts":[`...)
		} else {
			b = append(b, ',')
		}
		b = appendPart(b, p)
	}
	if len(e.parts) > 0 {
		b = append(b, "],"...)
	}
	b = append(b, `"role":"model"}`...)
	if finish != "" {
		b = jsonw.String(append(b, `,"finishReason":`...), finish)
	}
	b = append(b, `,"index":0}]`...)
	if e.usage.Known() || finish != "" {
		b = appendUsage(append(b, `,"usageMetadata":`...), usageOut(e.usage))
	}
	b = jsonw.String(append(b, `,"modelVersion":`...), e.model)
	b = jsonw.String(append(b, `,"responseId":`...), e.id)
	e.buf = append(b, '}')
	e.err = e.out.Write("", e.buf)
}

// appendPart writes a part as encoding/json writes the part struct (omitempty members left
// out).
func appendPart(b []byte, p streamPart) []byte {
	b = append(b, '{')
	comma := false
	member := func(name string) {
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = jsonw.Key(b, name)
	}
	if p.hasText {
		member("text")
		b = jsonw.String(b, p.text)
	}
	if p.thought {
		member("thought")
		b = append(b, "true"...)
	}
	if p.call != nil {
		member("functionCall")
		b = append(b, '{')
		if p.call.id != "" {
			b = append(jsonw.String(append(b, `"id":`...), p.call.id), ',')
		}
		b = jsonw.String(append(b, `"name":`...), p.call.name)
		b, _ = appendArgsObject(append(b, `,"args":`...), p.call.args)
		b = append(b, '}')
	}
	if p.sig != "" {
		member("thoughtSignature")
		b = jsonw.String(b, p.sig)
	}
	return append(b, '}')
}

// appendUsage writes outUsage as encoding/json writes it (zero counts left out but the
// prompt and total).
func appendUsage(b []byte, u *outUsage) []byte {
	b = jsonw.Int(append(b, `{"promptTokenCount":`...), u.PromptTokenCount)
	for _, c := range [...]struct {
		name string
		n    int64
	}{{"candidatesTokenCount", u.CandidatesTokenCount}, {"cachedContentTokenCount", u.CachedContentTokenCount},
		{"thoughtsTokenCount", u.ThoughtsTokenCount}} {
		if c.n != 0 {
			b = jsonw.Int(jsonw.Key(append(b, ','), c.name), c.n)
		}
	}
	b = jsonw.Int(append(b, `,"totalTokenCount":`...), u.TotalTokenCount)
	return append(b, '}')
}

func (e *streamEncoder) finish(stop ir.StopReason) {
	e.ended = true
	e.completeCalls(true)
	e.write(streamPart{}, finishReason(stop))
}

func (e *streamEncoder) fail(err *ir.Error) {
	e.ended = true
	if err == nil {
		err = &ir.Error{Status: http.StatusBadGateway, Kind: ir.ErrServer, Message: "the upstream failed"}
	}
	if e.err == nil {
		e.err = e.out.Write("", EncodeErrorDetails(err))
	}
}

// Close ends a stream that got neither a finish nor an error with an error event: Gemini
// streams have no terminator, so a client could otherwise take a cut answer for a whole one.
func (e *streamEncoder) Close() error {
	if !e.ended {
		e.ended = true
		if e.err == nil {
			e.err = e.out.Write("", interruptedFrame)
		}
	}
	return e.err
}

// interruptedFrame is the error Close writes, the same for every stream.
var interruptedFrame = EncodeErrorDetails(&ir.Error{Status: http.StatusBadGateway, Kind: ir.ErrServer,
	Code: "stream_interrupted", Message: "the upstream stream ended before the answer was complete"})
