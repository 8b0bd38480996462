package gemini

import (
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of the chunk nearly every frame of a Gemini stream is: one
// candidate of text and thought parts (signed or not), a finishReason, usageMetadata, the
// model version and response id. Anything else — a function call or another part kind, an
// error, promptFeedback, more than one candidate, a key encoding/json might read differently,
// a repeated member — gives up (ok false) and the chunk is read again with encoding/json
// (decodeSlow), so both read every chunk alike.

var (
	chunkKeys     = []string{"candidates", "usageMetadata", "modelVersion", "responseId", "createTime", "promptFeedback", "error"}
	candidateKeys = []string{"content", "finishReason", "index"}
	contentKeys   = []string{"role", "parts"}
	partKeys      = []string{"text", "thought", "thoughtSignature", "inlineData", "fileData", "functionCall", "functionResponse"}
	usageKeys     = []string{"promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount", "toolUsePromptTokenCount"}
)

// fastChunk is what readFast took from a chunk, before any of it changes the decoder.
type fastChunk struct {
	id, model string
	usage     *usageMetadata
	meta      usageMetadata
	candidate bool
	finish    string
	parts     []fastPart
}

type fastPart struct {
	text    string
	hasText bool
	thought bool
	sig     string
}

func (d *streamDecoder) decodeFast(data []byte, evs []ir.Event) ([]ir.Event, bool) {
	c := &d.fast
	*c = fastChunk{parts: c.parts[:0]}
	if !d.readFast(data, c) {
		return evs, false
	}
	evs, usageChanged := d.open(evs, c.usage, c.id, c.model)
	for _, p := range c.parts {
		evs = textEvents(evs, p.text, p.hasText, p.thought, p.sig)
	}
	if c.finish != "" {
		d.reason = c.finish
	}
	return d.usageEvent(evs, usageChanged), true
}

func (d *streamDecoder) readFast(data []byte, c *fastChunk) bool {
	var top [7]jsonscan.Span
	if !jsonw.Members(data, chunkKeys, top[:]) || jsonw.Present(top[5]) || jsonw.Present(top[6]) {
		return false
	}
	var ok1, ok2, ok3 bool
	c.model, ok1 = d.strs.Str(data, top[2])
	c.id, ok2 = d.strs.Str(data, top[3])
	_, ok3 = jsonw.Plain(orEmpty(data, top[4]))
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	if u := top[1]; jsonw.Present(u) {
		m := &c.meta
		var v [5]jsonscan.Span
		text := data[u.Start:u.End]
		if !jsonw.MembersOf(text, usageKeys, v[:]) || !jsonw.Ints(text, v[:], &m.PromptTokenCount,
			&m.CandidatesTokenCount, &m.ThoughtsTokenCount, &m.CachedContentTokenCount, &m.ToolUsePromptTokenCount) {
			return false
		}
		c.usage = m
	}
	cands := top[0]
	if !jsonw.Present(cands) {
		return true
	}
	ok := data[cands.Start] == '['
	walked := jsonw.ElementsOf(data[cands.Start:cands.End], func(v jsonscan.Span) bool {
		ok = !c.candidate && d.candidateFast(data[cands.Start+v.Start:cands.Start+v.End], c)
		return ok
	})
	return ok && walked
}

// orEmpty is the member's text, or an empty string's when it is absent.
func orEmpty(text []byte, v jsonscan.Span) []byte {
	if !jsonw.Present(v) {
		return emptyString
	}
	return text[v.Start:v.End]
}

var emptyString = []byte(`""`)

// candidateFast reads the one candidate (index 0; another index gives up).
func (d *streamDecoder) candidateFast(text []byte, c *fastChunk) bool {
	var v [3]jsonscan.Span
	if !jsonw.MembersOf(text, candidateKeys, v[:]) {
		return false
	}
	if jsonw.Present(v[2]) {
		if i, ok := jsonw.IntAt(text, v[2]); !ok || i != 0 {
			return false
		}
	}
	c.candidate = true
	var ok bool
	if c.finish, ok = d.strs.Str(text, v[1]); !ok {
		return false
	}
	if !jsonw.Present(v[0]) {
		return true
	}
	content := text[v[0].Start:v[0].End]
	var cv [2]jsonscan.Span
	if !jsonw.MembersOf(content, contentKeys, cv[:]) {
		return false
	}
	if _, ok := jsonw.Plain(orEmpty(content, cv[0])); !ok {
		return false
	}
	parts := cv[1]
	if !jsonw.Present(parts) {
		return true
	}
	ok = content[parts.Start] == '['
	walked := jsonw.ElementsOf(content[parts.Start:parts.End], func(p jsonscan.Span) bool {
		ok = d.partFast(content[parts.Start+p.Start:parts.Start+p.End], c)
		return ok
	})
	return ok && walked
}

func (d *streamDecoder) partFast(text []byte, c *fastChunk) bool {
	var v [7]jsonscan.Span
	if !jsonw.MembersOf(text, partKeys, v[:]) {
		return false
	}
	for _, s := range v[3:] {
		if jsonw.Present(s) {
			return false
		}
	}
	var p fastPart
	var ok1, ok2 bool
	p.hasText = jsonw.Present(v[0])
	p.text, ok1 = d.strs.Str(text, v[0])
	p.sig, ok2 = d.strs.Str(text, v[2])
	if !ok1 || !ok2 {
		return false
	}
	if t := v[1]; jsonw.Present(t) {
		switch string(text[t.Start:t.End]) {
		case "true":
			p.thought = true
		case "false":
		default:
			return false
		}
	}
	c.parts = append(c.parts, p)
	return true
}
