package chat

import (
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of the chunk shape nearly every chat stream sends: id, model,
// choices of index, delta (content and reasoning strings, tool calls) and finish_reason, and
// a usage object. It gives up (ok false) on anything else — an error, Groq's x_groq, content
// arrays, thinking blocks, usage inside a choice, a key encoding/json might read differently,
// a repeated member — and the chunk is read again with encoding/json (Decode's slow path), so
// both read every chunk alike.

var (
	chunkKeys    = []string{"id", "model", "choices", "usage", "error", "x_groq"}
	choiceKeys   = []string{"index", "delta", "finish_reason", "usage"}
	deltaKeys    = []string{"content", "reasoning_content", "reasoning", "thinking_blocks", "tool_calls"}
	toolCallKeys = []string{"index", "id", "function", "custom", "type"}
	functionKeys = []string{"name", "arguments"}
	usageKeys    = []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"}
	promptKeys   = []string{"cached_tokens", "cache_write_tokens"}
	outputKeys   = []string{"reasoning_tokens"}
)

func span(text []byte, v jsonscan.Span) []byte { return text[v.Start:v.End] }

func present(v jsonscan.Span) bool { return jsonw.Present(v) }

// fastChunk is what decodeFast read from one chunk, before any of it changes the decoder.
type fastChunk struct {
	id, model    string
	choice       bool // a choice with index 0
	delta        bool
	finish       *string
	finishText   string
	reasoning    string
	content      string
	calls        []fastCall
	usage        wireUsage
	hasUsage     bool
	emptyChoices bool
}

type fastCall struct {
	up       int
	id, name string
	args     string
}

// decodeFast reads a chunk of the common shape into events appended to evs; ok false leaves
// the decoder as it was.
func (d *streamDecoder) decodeFast(data []byte, evs []ir.Event) ([]ir.Event, bool) {
	c := &d.fast
	*c = fastChunk{calls: c.calls[:0]}
	if !d.readFast(data, c) {
		return evs, false
	}
	if !d.started {
		if c.emptyChoices && !c.hasUsage {
			return evs, true // Azure's preamble (prompt_filter_results, no id): not the answer yet
		}
		d.started = true
		evs = append(evs, ir.Event{Kind: ir.EvStart, ID: c.id, Model: c.model})
	}
	if c.choice && c.delta {
		if c.reasoning != "" {
			evs = append(evs, ir.Event{Kind: ir.EvReasoning, Text: c.reasoning})
		}
		if c.content != "" {
			evs = append(evs, ir.Event{Kind: ir.EvText, Text: c.content})
		}
		for _, tc := range c.calls {
			idx, fresh := d.calls.index(tc.up, tc.id)
			if fresh {
				d.sawTool = true
				ev := ir.Event{Kind: ir.EvToolStart, Index: idx, Name: tc.name}
				ev.ID, ev.Signature = ir.SplitCallID(tc.id)
				if ev.Signature != "" {
					ev.Format = "gemini"
				}
				evs = append(evs, ev)
			}
			if tc.args != "" {
				evs = append(evs, ir.Event{Kind: ir.EvToolArgs, Index: idx, Text: tc.args})
			}
		}
	}
	if c.finish != nil {
		d.stop = *c.finish
	}
	if c.hasUsage {
		d.usage = c.usage.normalize()
		evs = append(evs, ir.Event{Kind: ir.EvUsage, Usage: d.usage})
	}
	return evs, true
}

func (d *streamDecoder) readFast(data []byte, c *fastChunk) bool {
	var top [6]jsonscan.Span
	if !jsonw.Members(data, chunkKeys, top[:]) || present(top[4]) || present(top[5]) {
		return false
	}
	var ok1, ok2 bool
	c.id, ok1 = d.strs.Str(data, top[0])
	c.model, ok2 = d.strs.Str(data, top[1])
	if !ok1 || !ok2 {
		return false
	}
	if u := top[3]; present(u) {
		var ok bool
		if c.usage, ok = usageFast(span(data, u)); !ok {
			return false
		}
		c.hasUsage = true
	}
	choices := top[2]
	c.emptyChoices = true
	if !present(choices) {
		return true
	}
	ok := data[choices.Start] == '['
	var vals [4]jsonscan.Span
	walked := jsonw.ElementsOf(span(data, choices), func(v jsonscan.Span) bool {
		c.emptyChoices = false
		ok = !c.choice && d.choiceFast(data[choices.Start+v.Start:choices.Start+v.End], vals[:], c)
		return ok
	})
	return ok && walked
}

// choiceFast reads the one choice the decoder reads (index 0; another index gives up).
func (d *streamDecoder) choiceFast(el []byte, vals []jsonscan.Span, c *fastChunk) bool {
	if !jsonw.MembersOf(el, choiceKeys, vals) || present(vals[3]) {
		return false
	}
	if present(vals[0]) {
		if index, ok := jsonw.Int64(span(el, vals[0])); !ok || index != 0 {
			return false
		}
	}
	c.choice = true
	if present(vals[2]) {
		var ok bool
		if c.finishText, ok = d.strs.Str(el, vals[2]); !ok {
			return false
		}
		c.finish = &c.finishText
	}
	if present(vals[1]) {
		c.delta = true
		return d.deltaFast(span(el, vals[1]), c)
	}
	return true
}

func (d *streamDecoder) deltaFast(text []byte, c *fastChunk) bool {
	var vals [5]jsonscan.Span
	if !jsonw.MembersOf(text, deltaKeys, vals[:]) || present(vals[3]) {
		return false
	}
	var ok1, ok2, ok3 bool
	var r string
	c.content, ok1 = d.strs.Str(text, vals[0])
	c.reasoning, ok2 = d.strs.Str(text, vals[1])
	r, ok3 = d.strs.Str(text, vals[2])
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	if c.reasoning == "" {
		c.reasoning = r
	}
	calls := vals[4]
	if !present(calls) {
		return true
	}
	ok := text[calls.Start] == '['
	walked := jsonw.ElementsOf(span(text, calls), func(v jsonscan.Span) bool {
		ok = d.toolCallFast(text[calls.Start+v.Start:calls.Start+v.End], c)
		return ok
	})
	return ok && walked
}

func (d *streamDecoder) toolCallFast(text []byte, c *fastChunk) bool {
	var vals [5]jsonscan.Span
	if !jsonw.MembersOf(text, toolCallKeys, vals[:]) || present(vals[3]) {
		return false
	}
	var tc fastCall
	if present(vals[0]) {
		up, ok := jsonw.Int64(span(text, vals[0]))
		if !ok || int64(int(up)) != up {
			return false
		}
		tc.up = int(up)
	}
	var ok bool
	if tc.id, ok = d.strs.Str(text, vals[1]); !ok {
		return false
	}
	if _, ok = d.strs.Str(text, vals[4]); !ok { // type: read by encoding/json as a string
		return false
	}
	if present(vals[2]) {
		var fn [2]jsonscan.Span
		f := span(text, vals[2])
		if !jsonw.MembersOf(f, functionKeys, fn[:]) {
			return false
		}
		var ok1, ok2 bool
		tc.name, ok1 = d.strs.Str(f, fn[0])
		tc.args, ok2 = d.strs.Str(f, fn[1])
		if !ok1 || !ok2 {
			return false
		}
	}
	c.calls = append(c.calls, tc)
	return true
}

func usageFast(text []byte) (wireUsage, bool) {
	var w wireUsage
	var vals [5]jsonscan.Span
	if !jsonw.MembersOf(text, usageKeys, vals[:]) {
		return w, false
	}
	var det [2]jsonscan.Span
	ok := jsonw.Ints(text, vals[:3], &w.PromptTokens, &w.CompletionTokens, &w.TotalTokens)
	if ok && present(vals[3]) {
		p := span(text, vals[3])
		ok = jsonw.MembersOf(p, promptKeys, det[:]) && jsonw.Ints(p, det[:2], &w.PromptTokensDetails.CachedTokens, &w.PromptTokensDetails.CacheWriteTokens)
	}
	if ok && present(vals[4]) {
		c := span(text, vals[4])
		ok = jsonw.MembersOf(c, outputKeys, det[:1]) && jsonw.Ints(c, det[:1], &w.CompletionTokensDetails.ReasoningTokens)
	}
	return w, ok
}
