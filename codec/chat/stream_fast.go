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

// readFast reads the chunk in one pass (jsonscan.Reader).
func (d *streamDecoder) readFast(data []byte, c *fastChunk) bool {
	r := jsonscan.NewReader(data)
	c.emptyChoices = true
	read := jsonw.Object(&r, chunkKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0: // id and model: only the start event has them
			c.id, ok = d.strs.ReadIf(&r, !d.started)
		case 1:
			c.model, ok = d.strs.ReadIf(&r, !d.started)
		case 2:
			ok = r.Array(func() bool {
				c.emptyChoices = false
				return !c.choice && d.choiceFast(&r, c)
			})
		case 3:
			c.hasUsage = true
			ok = usageFast(&r, &c.usage)
		}
		return ok // error and x_groq: the slow path's
	})
	return read && r.End()
}

// choiceFast reads the one choice the decoder reads (index 0; another index gives up).
func (d *streamDecoder) choiceFast(r *jsonscan.Reader, c *fastChunk) bool {
	read := jsonw.Object(r, choiceKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			var index int64
			index, ok = jsonw.ReadInt64(r)
			ok = ok && index == 0
		case 1:
			c.delta = true
			ok = d.deltaFast(r, c)
		case 2:
			c.finishText, ok = d.strs.Read(r)
			c.finish = &c.finishText
		}
		return ok // usage in a choice: the slow path's
	})
	c.choice = read
	return read
}

func (d *streamDecoder) deltaFast(r *jsonscan.Reader, c *fastChunk) bool {
	var reasoning string // OpenRouter's name, read when reasoning_content is empty
	read := jsonw.Object(r, deltaKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			c.content, ok = d.strs.Read(r)
		case 1:
			c.reasoning, ok = d.strs.Read(r)
		case 2:
			reasoning, ok = d.strs.Read(r)
		case 4:
			ok = r.Array(func() bool { return d.toolCallFast(r, c) })
		}
		return ok // thinking_blocks: the slow path's
	})
	if c.reasoning == "" {
		c.reasoning = reasoning
	}
	return read
}

func (d *streamDecoder) toolCallFast(r *jsonscan.Reader, c *fastChunk) bool {
	var tc fastCall
	read := jsonw.Object(r, toolCallKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			tc.up, ok = jsonw.ReadInt(r)
		case 1:
			tc.id, ok = d.strs.Read(r)
		case 2:
			ok = jsonw.Object(r, functionKeys, func(k int) bool {
				var ok bool
				if k == 0 {
					tc.name, ok = d.strs.Read(r)
				} else {
					tc.args, ok = d.strs.Read(r)
				}
				return ok
			})
		case 4: // type: read by encoding/json as a string
			_, _, ok = r.String()
		}
		return ok // custom: the slow path's
	})
	c.calls = append(c.calls, tc)
	return read
}

func usageFast(r *jsonscan.Reader, w *wireUsage) bool {
	return jsonw.Object(r, usageKeys, func(k int) bool {
		var ok bool
		switch k {
		case 0:
			w.PromptTokens, ok = jsonw.ReadInt64(r)
		case 1:
			w.CompletionTokens, ok = jsonw.ReadInt64(r)
		case 2:
			w.TotalTokens, ok = jsonw.ReadInt64(r)
		case 3:
			ok = jsonw.Object(r, promptKeys, func(k int) bool {
				var ok bool
				if k == 0 {
					w.PromptTokensDetails.CachedTokens, ok = jsonw.ReadInt64(r)
				} else {
					w.PromptTokensDetails.CacheWriteTokens, ok = jsonw.ReadInt64(r)
				}
				return ok
			})
		case 4:
			ok = jsonw.Object(r, outputKeys, func(int) bool {
				var ok bool
				w.CompletionTokensDetails.ReasoningTokens, ok = jsonw.ReadInt64(r)
				return ok
			})
		}
		return ok
	})
}
