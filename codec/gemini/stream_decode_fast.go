package gemini

import (
	"bytes"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of the chunk nearly every frame of a Gemini stream is: one
// candidate of text and thought parts (signed or not) and whole function calls, a
// finishReason, usageMetadata, the model version and response id. Anything else — a call
// streamed in pieces (partialArgs, willContinue, or one still open), another part kind, an
// error, promptFeedback, more than one candidate, a key encoding/json might read differently,
// a repeated member — gives up (ok false) and the chunk is read again with encoding/json
// (decodeSlow), so both read every chunk alike.

var (
	chunkKeys     = []string{"candidates", "usageMetadata", "modelVersion", "responseId", "createTime", "promptFeedback", "error"}
	candidateKeys = []string{"content", "finishReason", "index"}
	contentKeys   = []string{"role", "parts"}
	partKeys      = []string{"text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall", "functionResponse"}
	usageKeys     = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount", "toolUsePromptTokenCount"}
	callKeys      = []string{"id", "name", "args", "partialArgs", "willContinue"}
)

// fastChunk is what readFast took from a chunk, before any of it changes the decoder: the
// parts' events, their calls not numbered yet (number).
type fastChunk struct {
	id, model string
	usage     *usageMetadata
	meta      usageMetadata
	candidate bool
	finish    string
	evs       []ir.Event
}

func (d *streamDecoder) decodeFast(data []byte, evs []ir.Event) ([]ir.Event, bool) {
	c := &d.fast
	*c = fastChunk{evs: evs}
	if !d.started {
		c.evs = append(c.evs, ir.Event{}) // the start event's slot, filled once the chunk is read
	}
	if !d.readFast(data, c) {
		return evs, false
	}
	evs = c.evs
	start, usageChanged := d.open(evs[:0], c.usage, c.id, c.model) // into the slot, if owed
	for i := len(start); i < len(evs); i++ {
		if evs[i].Kind == ir.EvToolStart {
			d.number(evs[i : i+2])
			i++
		}
	}
	if c.finish != "" {
		d.reason = c.finish
	}
	return d.usageEvent(evs, usageChanged), true
}

// readFast reads the chunk in one pass (jsonscan.Reader).
func (d *streamDecoder) readFast(data []byte, c *fastChunk) bool {
	r := jsonscan.NewReader(data)
	read := jsonw.Object(&r, chunkKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			ok = r.Array(func() bool { return !c.candidate && d.candidateFast(&r, c) })
		case 1:
			c.usage, ok = &c.meta, usageFast(&r, &c.meta)
		case 2: // modelVersion and responseId: only the start event has them
			c.model, ok = d.strs.ReadIf(&r, !d.started)
		case 3:
			c.id, ok = d.strs.ReadIf(&r, !d.started)
		case 4:
			ok = unescaped(&r)
		}
		return ok // promptFeedback and error: the slow path's
	})
	return read && r.End()
}

// unescaped reads a string without escapes, which the decoder does not keep.
func unescaped(r *jsonscan.Reader) bool {
	raw, _, ok := r.String()
	return ok && bytes.IndexByte(raw, '\\') < 0
}

func usageFast(r *jsonscan.Reader, m *usageMetadata) bool {
	counts := [...]*int64{&m.PromptTokenCount, &m.CandidatesTokenCount, &m.ThoughtsTokenCount,
		&m.CachedContentTokenCount, &m.ToolUsePromptTokenCount}
	return jsonw.Object(r, usageKeys, func(k int) bool {
		var ok bool
		*counts[k], ok = jsonw.ReadInt64(r)
		return ok
	})
}

// candidateFast reads the one candidate (index 0; another index gives up).
func (d *streamDecoder) candidateFast(r *jsonscan.Reader, c *fastChunk) bool {
	read := jsonw.Object(r, candidateKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			ok = jsonw.Object(r, contentKeys, func(k int) bool {
				if k == 0 {
					return unescaped(r) // role
				}
				return r.Array(func() bool { return d.partFast(r, c) })
			})
		case 1:
			c.finish, ok = d.strs.Read(r)
		case 2:
			var index int
			index, ok = jsonw.ReadInt(r)
			ok = ok && index == 0
		}
		return ok
	})
	c.candidate = read
	return read
}

func (d *streamDecoder) partFast(r *jsonscan.Reader, c *fastChunk) bool {
	var text, sig string
	var hasText, thought, fc, call bool
	var tc ir.ToolCall
	read := jsonw.Object(r, partKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			hasText = true
			text, ok = d.strs.Read(r)
		case 1:
			thought, ok = r.Bool()
		case 2:
			sig, ok = d.strs.Read(r)
		case 5:
			fc = true
			call, ok = d.callFast(r, &tc)
		}
		return ok // inlineData, fileData and functionResponse: the slow path's
	})
	switch {
	case !read:
		return false
	case call:
		if sig != "" {
			tc.Signature, tc.SignatureFormat = sig, signatureFormat
		}
		c.evs = callEvents(c.evs, &tc)
	case !fc: // an empty functionCall is no call (callJoiner.add), and the part says nothing else
		c.evs = textEvents(c.evs, text, hasText, thought, sig)
	}
	return true
}

// callFast reads a whole function call as callJoiner.add takes it when no streamed call is
// open; call is false for an empty functionCall, which is no call.
func (d *streamDecoder) callFast(r *jsonscan.Reader, tc *ir.ToolCall) (call, ok bool) {
	if d.calls.open != nil {
		return false, false
	}
	var args jsonscan.Span
	read := jsonw.Object(r, callKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			tc.ID, ok = d.strs.Read(r)
		case 1:
			tc.Name, ok = d.strs.Read(r)
		case 2:
			args, ok = r.Value()
		}
		return ok // partialArgs and willContinue: a call streamed in pieces, the slow path's
	})
	if !read {
		return false, false
	}
	if tc.Name == "" && tc.ID == "" && !jsonw.Present(args) {
		return false, true
	}
	tc.Arguments = "{}" // callArgs: args that are not an object
	if raw := r.Text()[args.Start:args.End]; jsonw.Present(args) && raw[0] == '{' {
		tc.Arguments = d.strs.Compact(raw)
	}
	return true, true
}
