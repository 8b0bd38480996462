package gemini

import (
	"encoding/json"
	"net/http"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
)

// The stream encoder as it was before it wrote its JSON by hand (encoding/json over structs):
// the reference the differential test holds the hand-written one to.
func newRefStreamEncoder(out ir.Frames, req *ir.Request, model string) ir.StreamEncoder {
	e := &refStreamEncoder{out: out, model: model}
	if req != nil {
		e.thoughts = req.Thinking.IncludeText
	}
	return e
}

type refStreamEncoder struct {
	out      ir.Frames
	model    string
	id       string
	thoughts bool // the client asked for thought parts
	usage    codec.Usage
	calls    []*refOutCall // by IR index
	sent     int           // calls before this index have been written
	ended    bool
	err      error
}

type refOutCall struct {
	id, name, sig string
	args          []byte
}

func (e *refStreamEncoder) Encode(ev ir.Event) error {
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
			e.chunk(e.completeCalls(true), part{Text: strptr(ev.Text), ThoughtSignature: sig})
		}
	case ir.EvReasoning:
		if e.thoughts && ev.Text != "" {
			e.chunk(e.completeCalls(true), part{Text: strptr(ev.Text), Thought: true})
		}
	case ir.EvSignature:
		if e.thoughts && ev.Format == signatureFormat && ev.Text != "" {
			e.chunk(nil, part{Text: strptr(""), Thought: true, ThoughtSignature: ev.Text})
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
		if calls := e.completeCalls(false); len(calls) > 0 {
			e.chunk(calls)
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

func (e *refStreamEncoder) call(i int) *refOutCall {
	for len(e.calls) <= i {
		e.calls = append(e.calls, nil)
	}
	if e.calls[i] == nil {
		e.calls[i] = &refOutCall{}
	}
	return e.calls[i]
}

// completeCalls takes the calls whose arguments are whole, in index order and stopping at
// the first that is not (all of them when all is set), as functionCall parts. A JSON
// object is valid only once it is closed, so a valid one is complete.
func (e *refStreamEncoder) completeCalls(all bool) []part {
	var parts []part
	for ; e.sent < len(e.calls); e.sent++ {
		c := e.calls[e.sent]
		if all && (c == nil || c.name == "") {
			continue // arguments of a call never started: nothing a client could run
		}
		if c == nil || c.name == "" || !json.Valid(c.args) && !all {
			break
		}
		args, _ := argsObject(string(c.args))
		parts = append(parts, part{FunctionCall: &functionCall{ID: c.id, Name: c.name, Args: args}, ThoughtSignature: c.sig})
	}
	return parts
}

// chunk writes one GenerateContentResponse with the given parts.
func (e *refStreamEncoder) chunk(first []part, more ...part) {
	e.write(append(first, more...), "")
}

func (e *refStreamEncoder) write(parts []part, finish string) {
	if e.err != nil {
		return
	}
	r := outResponse{Candidates: []outCandidate{{Content: outContent{Parts: parts, Role: "model"},
		FinishReason: finish}}, ModelVersion: e.model, ResponseID: e.id}
	if e.usage.Known() || finish != "" {
		r.UsageMetadata = usageOut(e.usage)
	}
	e.err = e.out.Write("", marshal(r))
}

func (e *refStreamEncoder) finish(stop ir.StopReason) {
	e.ended = true
	e.write(e.completeCalls(true), finishReason(stop))
}

func (e *refStreamEncoder) fail(err *ir.Error) {
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
func (e *refStreamEncoder) Close() error {
	if !e.ended {
		e.fail(&ir.Error{Status: http.StatusBadGateway, Kind: ir.ErrServer, Code: "stream_interrupted",
			Message: "the upstream stream ended before the answer was complete"})
	}
	return e.err
}
