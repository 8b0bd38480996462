package gemini

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// DecodeResponse parses a whole generateContent answer: the first candidate, its stop
// reason (StopToolUse when it called a function) and the normalized usage.
func (format) DecodeResponse(body []byte) (*ir.Response, error) {
	var r response
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, badAnswer("the answer is not a GenerateContentResponse: " + err.Error())
	}
	if r.Error != nil {
		return nil, r.Error.toIR(0)
	}
	out := &ir.Response{ID: r.ResponseID, Model: r.ModelVersion, Stop: ir.StopEnd}
	if t, err := time.Parse(time.RFC3339Nano, r.CreateTime); err == nil {
		out.Created = t.Unix()
	}
	if r.UsageMetadata != nil {
		out.Usage = r.UsageMetadata.usage()
	}
	c := r.candidate0()
	if c == nil {
		if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
			out.Stop = ir.StopContentFilter // the prompt was blocked: an empty answer
		}
		return out, nil
	}
	sawCall := false
	pending := -1 // the latest reasoning part still without a signature
	var parts []part
	if c.Content != nil {
		parts = c.Content.Parts
	}
	var calls callJoiner
	for _, p := range parts {
		sig := p.ThoughtSignature
		var ip ir.Part
		switch {
		case p.FunctionCall != nil:
			tc, err := calls.add(p.FunctionCall, sig)
			if err != nil {
				return nil, badAnswer(err.Error())
			}
			if tc != nil {
				sawCall = true
				out.Parts = append(out.Parts, ir.Part{Kind: ir.PartToolCall, ToolCall: named(tc)})
			}
			continue
		case p.Thought:
			text := deref(p.Text)
			if text == "" && sig != "" && pending >= 0 {
				out.Parts[pending].Reasoning.Signature = sig // a signature-only thought closes the reasoning before it
				pending = -1
				continue
			}
			if text == "" && sig == "" {
				continue
			}
			out.Parts = append(out.Parts, ir.Part{Kind: ir.PartReasoning, Reasoning: &ir.Reasoning{
				Text: text, Signature: sig, SignatureFormat: signatureFormat}})
			pending = -1
			if sig == "" {
				pending = len(out.Parts) - 1
			}
			continue
		case p.Text != nil:
			if *p.Text == "" && sig == "" {
				continue
			}
			ip = ir.Part{Kind: ir.PartText, Text: *p.Text}
		case p.InlineData != nil:
			ip = mediaFromWire(p.InlineData.MimeType, p.InlineData.Data, "")
		case p.FileData != nil:
			ip = mediaFromWire(p.FileData.MimeType, "", p.FileData.FileURI)
		default:
			continue
		}
		// Gemini 3 signs text and media parts too: the signature stays on its part, which
		// is where a gemini client must send it back (docs/conversion.md, "Signatures").
		if sig != "" {
			ip.Signature, ip.SignatureFormat = sig, signatureFormat
		}
		out.Parts = append(out.Parts, ip)
	}
	if tc := calls.flush(); tc != nil {
		sawCall = true
		out.Parts = append(out.Parts, ir.Part{Kind: ir.PartToolCall, ToolCall: named(tc)})
	}
	out.Stop = stopReason(c.FinishReason, sawCall)
	return out, nil
}

// named gives a call that came without an id a minted one.
func named(tc *ir.ToolCall) *ir.ToolCall {
	if tc.ID == "" {
		tc.ID = newCallID()
	}
	return tc
}

func mediaFromWire(mimeType, data, uri string) ir.Part {
	if isImageType(mimeType) {
		return ir.Part{Kind: ir.PartImage, Image: &ir.Image{MediaType: mimeType, Data: data, URL: uri}}
	}
	return ir.Part{Kind: ir.PartFile, File: &ir.File{MediaType: mimeType, Data: data, URL: uri}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func badAnswer(msg string) *ir.Error {
	return &ir.Error{Status: http.StatusBadGateway, Kind: ir.ErrServer, Message: "gemini: " + msg}
}

// NewStreamDecoder parses streamGenerateContent?alt=sse: each data event is a whole
// GenerateContentResponse holding only the new parts. Gemini sends no terminator; the
// chunk that carries finishReason ends the answer (done).
func (format) NewStreamDecoder() ir.StreamDecoder {
	d := &streamDecoder{}
	d.evs = d.evBuf[:0]
	return d
}

type streamDecoder struct {
	started  bool
	finished bool
	sawCall  bool // across the whole stream: the call and STOP can be chunks apart
	tools    int
	calls    callJoiner // a call streamed in pieces spans chunks
	usage    codec.Usage
	// reason is the latest finishReason. It does not end the answer: Gemini sends no end
	// marker and may go on after it (a code-execution stream says STOP on a middle chunk and
	// then gives its result and the final usage), so the answer ends where the stream does
	// (End).
	reason string
	strs   jsonw.Strings // the events' strings
	evs    []ir.Event    // the last Decode's events, reused
	fast   fastChunk
	evBuf  [8]ir.Event // evs' first array, allocated with the decoder: a chunk of three calls fits
}

func (d *streamDecoder) Decode(_, data []byte) ([]ir.Event, bool, error) {
	if d.finished {
		return nil, true, nil
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, false, nil
	}
	if bytes.Equal(data, []byte("[DONE]")) {
		// Not Gemini's, but some Gemini-compatible proxies end streams this way: the answer
		// ends here (a start is owed if nothing came before).
		var evs []ir.Event
		if !d.started {
			evs = append(evs, ir.Event{Kind: ir.EvStart})
		}
		return d.finish(evs, ""), true, nil
	}
	if evs, ok := d.decodeFast(data, d.evs[:0]); ok {
		d.evs = evs
		return evs, false, nil
	}
	return d.decodeSlow(data)
}

// decodeSlow reads any chunk with encoding/json.
func (d *streamDecoder) decodeSlow(data []byte) ([]ir.Event, bool, error) {
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, false, badAnswer("a stream chunk is not a GenerateContentResponse: " + err.Error())
	}
	if r.Error != nil {
		d.finished = true
		return []ir.Event{{Kind: ir.EvError, Err: r.Error.toIR(0)}}, true, nil
	}
	evs, usageChanged := d.open(nil, r.UsageMetadata, r.ResponseID, r.ModelVersion)
	c := r.candidate0()
	if c != nil {
		if c.Content != nil {
			for _, p := range c.Content.Parts {
				var err error
				if evs, err = d.part(evs, p); err != nil {
					return nil, false, badAnswer(err.Error())
				}
			}
		}
		if c.FinishReason != "" {
			d.reason = c.FinishReason
		}
	} else if r.PromptFeedback != nil && r.PromptFeedback.BlockReason != "" {
		d.finished = true
		return append(evs, ir.Event{Kind: ir.EvFinish, Stop: ir.StopContentFilter, Usage: d.usage}), true, nil
	}
	return d.usageEvent(evs, usageChanged), false, nil
}

// open takes a chunk's usage and, for the first chunk, gives EvStart; usageChanged reports a
// usage that changed after the start.
func (d *streamDecoder) open(evs []ir.Event, meta *usageMetadata, id, model string) (_ []ir.Event, usageChanged bool) {
	if meta != nil {
		u := meta.usage()
		usageChanged = u != d.usage
		d.usage = u
	}
	if !d.started {
		d.started = true
		evs = append(evs, ir.Event{Kind: ir.EvStart, ID: id, Model: model, Usage: d.usage})
		usageChanged = false
	}
	return evs, usageChanged
}

// usageEvent ends a chunk's events with the usage when it changed.
func (d *streamDecoder) usageEvent(evs []ir.Event, usageChanged bool) []ir.Event {
	if usageChanged && d.reason == "" { // after a finishReason, the finish carries the usage
		evs = append(evs, ir.Event{Kind: ir.EvUsage, Usage: d.usage})
	}
	return evs
}

// End implements ir.EndingDecoder: a stream that gave a finishReason is whole where it ends.
func (d *streamDecoder) End() ([]ir.Event, *ir.Frame, bool) {
	if d.finished || d.reason == "" {
		return nil, nil, false
	}
	return d.finish(nil, d.reason), nil, true
}

// Finishing implements ir.FinishingDecoder: after a finishReason the stream may end at any chunk.
func (d *streamDecoder) Finishing() bool { return d.reason != "" }

// finish ends the answer: a streamed call still open goes out as it is, then EvFinish.
func (d *streamDecoder) finish(evs []ir.Event, reason string) []ir.Event {
	d.finished = true
	if tc := d.calls.flush(); tc != nil {
		evs = d.call(evs, tc)
	}
	return append(evs, ir.Event{Kind: ir.EvFinish, Stop: stopReason(reason, d.sawCall), Usage: d.usage})
}

// call emits one whole call: its start, then all its arguments.
func (d *streamDecoder) call(evs []ir.Event, tc *ir.ToolCall) []ir.Event {
	evs = callEvents(evs, tc)
	d.number(evs[len(evs)-2:])
	return evs
}

// callEvents appends the events of a whole call, not numbered yet.
func callEvents(evs []ir.Event, tc *ir.ToolCall) []ir.Event {
	start := ir.Event{Kind: ir.EvToolStart, ID: tc.ID, Name: tc.Name}
	if tc.Signature != "" {
		start.Signature, start.Format = tc.Signature, signatureFormat
	}
	return append(evs, start, ir.Event{Kind: ir.EvToolArgs, Text: tc.Arguments})
}

// number gives the call whose two events are evs its index in the answer, and an id when it
// came without one.
func (d *streamDecoder) number(evs []ir.Event) {
	d.sawCall = true
	if evs[0].ID == "" {
		evs[0].ID = newCallID()
	}
	evs[0].Index, evs[1].Index = d.tools, d.tools
	d.tools++
}

func (d *streamDecoder) part(evs []ir.Event, p part) ([]ir.Event, error) {
	sig := p.ThoughtSignature
	switch {
	case p.FunctionCall != nil:
		// A call streamed in pieces goes out once its last piece is in (streamed_call.go).
		tc, err := d.calls.add(p.FunctionCall, sig)
		if err != nil {
			return evs, err
		}
		if tc != nil {
			evs = d.call(evs, tc)
		}
	default:
		evs = textEvents(evs, deref(p.Text), p.Text != nil, p.Thought, sig)
	}
	return evs, nil
}

// textEvents are the events of a text or thought part (signed or not).
func textEvents(evs []ir.Event, text string, hasText, thought bool, sig string) []ir.Event {
	switch {
	case thought:
		if text != "" {
			evs = append(evs, ir.Event{Kind: ir.EvReasoning, Text: text})
		}
		if sig != "" {
			evs = append(evs, ir.Event{Kind: ir.EvSignature, Text: sig, Format: signatureFormat})
		}
	case hasText:
		// As in DecodeResponse, a signature on a text part stays with that part; a part that
		// holds only a signature (Gemini 3's last chunk) is an empty, signed text event.
		if text != "" || sig != "" {
			ev := ir.Event{Kind: ir.EvText, Text: text}
			if sig != "" {
				ev.Signature, ev.Format = sig, signatureFormat
			}
			evs = append(evs, ev)
		}
	}
	return evs
}
