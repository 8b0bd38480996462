package chat

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// streamDecoder reads a chat-format upstream stream into IR events.
type streamDecoder struct {
	started bool
	calls   toolIndexes
	stop    string
	sawTool bool
	usage   codec.Usage
	strs    jsonw.Strings // the events' strings
	evs     []ir.Event    // the last Decode's events, reused
	fast    fastChunk
	evBuf   [2]ir.Event // evs' first array, allocated with the decoder: most chunks' events fit
}

// NewStreamDecoder returns a decoder for one answer.
func NewStreamDecoder() ir.StreamDecoder {
	d := &streamDecoder{}
	d.evs = d.evBuf[:0]
	return d
}

var _ ir.EndingDecoder = (*streamDecoder)(nil)

func (d *streamDecoder) Decode(_, data []byte) ([]ir.Event, bool, error) {
	if IsDone(data) {
		d.evs = append(d.evs[:0], d.finish())
		return d.evs, true, nil
	}
	if len(data) == 0 {
		return nil, false, nil // an empty data line: a keep-alive
	}
	if evs, ok := d.decodeFast(data, d.evs[:0]); ok {
		d.evs = evs
		return evs, false, nil
	}
	return d.decodeSlow(data)
}

// decodeSlow reads any chunk with encoding/json.
func (d *streamDecoder) decodeSlow(data []byte) ([]ir.Event, bool, error) {
	var c streamChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, false, err
	}
	if c.Error != nil {
		return []ir.Event{{Kind: ir.EvError, Err: errorFromWire(0, c.Error)}}, true, nil
	}
	var evs []ir.Event
	if !d.started {
		if len(c.Choices) == 0 && c.usage() == nil {
			return nil, false, nil // Azure's preamble (prompt_filter_results, no id): not the answer yet
		}
		d.started = true
		evs = append(evs, ir.Event{Kind: ir.EvStart, ID: c.ID, Model: c.Model})
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 || ch.Delta == nil {
			if ch.FinishReason != nil && ch.Index == 0 {
				d.stop = *ch.FinishReason
			}
			continue
		}
		evs = d.delta(evs, ch.Delta)
		if ch.FinishReason != nil {
			d.stop = *ch.FinishReason
		}
	}
	if u := c.usage(); u != nil {
		d.usage = u.normalize()
		evs = append(evs, ir.Event{Kind: ir.EvUsage, Usage: d.usage})
	}
	return evs, false, nil
}

// streamChunk is a chunk as the decoder reads it.
type streamChunk struct {
	ID      string        `json:"id"`
	Model   string        `json:"model"`
	Choices []streamDelta `json:"choices"`
	Usage   *wireUsage    `json:"usage"`
	Error   *wireError    `json:"error"`
	XGroq   *struct {
		Usage *wireUsage `json:"usage"`
	} `json:"x_groq"` // Groq's last chunk may carry the usage only here
}

// usage is the chunk's usage wherever the provider put it: top level (OpenAI), in x_groq
// (Groq), in the first choice (Moonshot).
func (c *streamChunk) usage() *wireUsage {
	switch {
	case c.Usage != nil:
		return c.Usage
	case c.XGroq != nil && c.XGroq.Usage != nil:
		return c.XGroq.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index == 0 && ch.Usage != nil {
			return ch.Usage
		}
	}
	return nil
}

type streamDelta struct {
	Index        int        `json:"index"`
	Delta        *deltaBody `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
	Usage        *wireUsage `json:"usage"` // Moonshot puts the usage in the finishing choice
}

type deltaBody struct {
	Content          deltaContent        `json:"content"`
	ReasoningContent *string             `json:"reasoning_content"`
	Reasoning        *string             `json:"reasoning"`
	ThinkingBlocks   []wireThinkingBlock `json:"thinking_blocks"`
	ToolCalls        []wireToolCall      `json:"tool_calls"`
}

// deltaContent is a delta's content: a string, as the format has it, or an array of text and
// thinking parts (Mistral; convention.go), read in order.
type deltaContent struct {
	text   string
	pieces []contentPiece
}

func (c *deltaContent) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		var err error
		c.pieces, err = contentPieces(b, nil)
		return err
	}
	if string(b) == "null" {
		return nil
	}
	return json.Unmarshal(b, &c.text)
}

func (d *streamDecoder) delta(evs []ir.Event, m *deltaBody) []ir.Event {
	if rc := firstNonEmpty(m.ReasoningContent, m.Reasoning); rc != "" {
		evs = append(evs, ir.Event{Kind: ir.EvReasoning, Text: rc})
	}
	for _, b := range m.ThinkingBlocks {
		if b.Signature != "" {
			evs = append(evs, ir.Event{Kind: ir.EvSignature, Text: b.Signature, Format: "messages"})
		}
	}
	if m.Content.text != "" {
		evs = append(evs, ir.Event{Kind: ir.EvText, Text: m.Content.text})
	}
	for _, p := range m.Content.pieces {
		kind := ir.EvText
		if p.reasoning {
			kind = ir.EvReasoning
		}
		evs = append(evs, ir.Event{Kind: kind, Text: p.text})
	}
	for _, tc := range m.ToolCalls {
		up := 0
		if tc.Index != nil {
			up = *tc.Index
		}
		idx, fresh := d.calls.index(up, tc.ID)
		if fresh {
			d.sawTool = true
			ev := ir.Event{Kind: ir.EvToolStart, Index: idx}
			ev.ID, ev.Signature = ir.SplitCallID(tc.ID)
			if ev.Signature != "" {
				ev.Format = "gemini"
			}
			if tc.Function != nil {
				ev.Name = tc.Function.Name
			}
			evs = append(evs, ev)
		}
		if tc.Function != nil && tc.Function.Arguments != "" {
			evs = append(evs, ir.Event{Kind: ir.EvToolArgs, Index: idx, Text: tc.Function.Arguments})
		}
	}
	return evs
}

// End completes an answer whose finish_reason came before the stream stopped without
// data: [DONE] (the usage chunk may be missing then).
func (d *streamDecoder) End() ([]ir.Event, *ir.Frame, bool) {
	if d.stop == "" {
		return nil, nil, false
	}
	return []ir.Event{d.finish()}, &ir.Frame{Data: []byte(doneMarker)}, true
}

func (d *streamDecoder) finish() ir.Event {
	return ir.Event{Kind: ir.EvFinish, Stop: stopFrom(d.stop, d.sawTool), Usage: d.usage}
}
