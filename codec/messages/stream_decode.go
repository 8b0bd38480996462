package messages

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// NewStreamDecoder reads a messages stream into IR events: message_start → EvStart with the
// input usage; blocks → text, reasoning, signature, redacted and tool events, tool calls
// counted 0, 1, 2… apart from block indices; message_delta is remembered; message_stop →
// EvFinish and done. An error event becomes EvError and also ends the stream (done).
func (format) NewStreamDecoder() ir.StreamDecoder {
	return &streamDecoder{blocks: map[int]*blockState{}}
}

type streamDecoder struct {
	started bool
	done    bool
	blocks  map[int]*blockState // by the wire's block index
	tools   int                 // tool calls seen
	usage   wireUsage           // latest value of each count
	stop    string
	stopSeq string
	strs    jsonw.Strings // the events' strings
	evs     []ir.Event    // the last Decode's events, reused
}

type blockState struct {
	kind    string
	tool    int
	input   json.RawMessage // a tool_use block's start input, used if no deltas come
	gotArgs bool
}

type inEvent struct {
	Type         string         `json:"type"`
	Message      *inMessageResp `json:"message"`
	Index        int            `json:"index"`
	ContentBlock *inBlockResp   `json:"content_block"`
	Delta        *inDelta       `json:"delta"`
	Usage        *wireUsage     `json:"usage"`
	Error        *wireError     `json:"error"`
}

type inDelta struct {
	Type         string  `json:"type"`
	Text         string  `json:"text"`
	PartialJSON  string  `json:"partial_json"`
	Thinking     string  `json:"thinking"`
	Signature    string  `json:"signature"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
}

func (d *streamDecoder) Decode(name, data []byte) ([]ir.Event, bool, error) {
	if d.done {
		return nil, true, nil
	}
	if out, ok := d.decodeFast(name, data, d.evs[:0]); ok {
		d.evs = out
		return out, d.done, nil
	}
	return d.decodeSlow(name, data)
}

// decodeSlow reads any event with encoding/json.
func (d *streamDecoder) decodeSlow(name, data []byte) ([]ir.Event, bool, error) {
	var ev inEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, false, fmt.Errorf("messages stream: undecodable %q event: %w", name, err)
	}
	kind := string(name)
	if kind == "" {
		kind = ev.Type
	}
	var out []ir.Event
	if !d.started && kind != "ping" && kind != "error" {
		d.started = true
		start := ir.Event{Kind: ir.EvStart}
		if kind == "message_start" && ev.Message != nil {
			start.ID, start.Model = ev.Message.ID, ev.Message.Model
			d.merge(ev.Message.Usage)
			start.Usage = d.usage.normalize()
			start.Usage.Output, start.Usage.Reasoning = 0, 0 // a placeholder until message_delta
		}
		out = append(out, start)
	}
	switch kind {
	case "content_block_start":
		if ev.ContentBlock != nil {
			out = d.blockStart(out, ev.Index, ev.ContentBlock)
		}
	case "content_block_delta":
		if ev.Delta != nil {
			out = d.blockDelta(out, ev.Index, ev.Delta)
		}
	case "content_block_stop":
		if b := d.blocks[ev.Index]; b != nil && b.kind == "tool_use" && !b.gotArgs && len(b.input) > 0 {
			out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: string(b.input)})
		}
		delete(d.blocks, ev.Index)
	case "message_delta":
		if ev.Delta != nil {
			if ev.Delta.StopReason != nil {
				d.stop = *ev.Delta.StopReason
			}
			if ev.Delta.StopSequence != nil {
				d.stopSeq = *ev.Delta.StopSequence
			}
		}
		d.merge(ev.Usage)
	case "message_stop":
		d.done = true
		out = append(out, d.finish())
	case "error":
		d.done = true
		e := &ir.Error{Kind: ir.ErrServer, Message: "the upstream stream failed"}
		if ev.Error != nil {
			if k, ok := kindOfType[ev.Error.Type]; ok {
				e.Kind = k
			}
			if ev.Error.Message != "" {
				e.Message = ev.Error.Message
			}
		}
		e.Status = statusOfKind(e.Kind)
		out = append(out, ir.Event{Kind: ir.EvError, Err: e})
	}
	return out, d.done, nil
}

func (d *streamDecoder) finish() ir.Event {
	stop := stopFrom(d.stop, d.tools > 0)
	fin := ir.Event{Kind: ir.EvFinish, Stop: stop, Usage: d.usage.normalize()}
	if stop == ir.StopSequence {
		fin.StopSequence = d.stopSeq
	}
	return fin
}

var _ ir.EndingDecoder = (*streamDecoder)(nil)

// End completes an answer whose message_delta gave its stop_reason before the stream stopped
// without message_stop.
func (d *streamDecoder) End() ([]ir.Event, *ir.Frame, bool) {
	if d.done || d.stop == "" {
		return nil, nil, false
	}
	d.done = true
	return []ir.Event{d.finish()}, &ir.Frame{Name: "message_stop", Data: []byte(`{"type":"message_stop"}`)}, true
}

func (d *streamDecoder) blockStart(out []ir.Event, i int, b *inBlockResp) []ir.Event {
	st := &blockState{kind: b.Type}
	d.blocks[i] = st
	switch b.Type {
	case "text":
		if b.Text != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: b.Text})
		}
	case "thinking":
		if b.Thinking != "" {
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: b.Thinking})
		}
		if b.Signature != "" {
			out = append(out, ir.Event{Kind: ir.EvSignature, Text: b.Signature, Format: SignatureFormat})
		}
	case "redacted_thinking":
		out = append(out, ir.Event{Kind: ir.EvRedacted, Text: b.Data, Format: SignatureFormat})
	case "tool_use":
		st.tool = d.tools
		d.tools++
		if args, ok := compactObject(b.Input); ok && args != "{}" {
			st.input = json.RawMessage(args)
		}
		out = append(out, ir.Event{Kind: ir.EvToolStart, Index: st.tool, ID: b.ID, Name: b.Name})
	}
	return out
}

func (d *streamDecoder) blockDelta(out []ir.Event, i int, delta *inDelta) []ir.Event {
	b := d.blocks[i]
	if b == nil {
		return out // a delta for no open block: nothing to attach it to
	}
	switch {
	case delta.Type == "text_delta" && b.kind == "text" && delta.Text != "":
		out = append(out, ir.Event{Kind: ir.EvText, Text: delta.Text})
	case delta.Type == "thinking_delta" && b.kind == "thinking" && delta.Thinking != "":
		out = append(out, ir.Event{Kind: ir.EvReasoning, Text: delta.Thinking})
	case delta.Type == "signature_delta" && b.kind == "thinking" && delta.Signature != "":
		out = append(out, ir.Event{Kind: ir.EvSignature, Text: delta.Signature, Format: SignatureFormat})
	case delta.Type == "input_json_delta" && b.kind == "tool_use" && delta.PartialJSON != "":
		b.gotArgs = true
		out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: delta.PartialJSON})
	}
	return out
}

// merge keeps the latest value of every count present: message_delta counts are
// cumulative and may repeat the input counts of message_start.
func (d *streamDecoder) merge(w *wireUsage) {
	if w == nil {
		return
	}
	set := func(dst **int64, src *int64) {
		if src != nil {
			v := *src
			*dst = &v
		}
	}
	set(&d.usage.InputTokens, w.InputTokens)
	set(&d.usage.CacheReadInputTokens, w.CacheReadInputTokens)
	set(&d.usage.CacheCreationInputTokens, w.CacheCreationInputTokens)
	set(&d.usage.OutputTokens, w.OutputTokens)
	if w.OutputTokensDetails != nil && w.OutputTokensDetails.ThinkingTokens != nil {
		d.usage.OutputTokensDetails = w.OutputTokensDetails
	}
}

// StreamUsage follows a messages stream's usage without decoding its content events, for
// pass-through: Observe every event, read Usage at the end.
type StreamUsage struct {
	d streamDecoder
}

var usageEvents = [][]byte{[]byte("message_start"), []byte("message_delta")}

// Observe reads the usage of a message_start or message_delta event; others are skipped
// without parsing.
func (s *StreamUsage) Observe(name, data []byte) {
	if !bytes.Equal(name, usageEvents[0]) && !bytes.Equal(name, usageEvents[1]) {
		return
	}
	var ev struct {
		Message *struct {
			Usage *wireUsage `json:"usage"`
		} `json:"message"`
		Usage *wireUsage `json:"usage"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return
	}
	if ev.Message != nil {
		s.d.merge(ev.Message.Usage)
	}
	s.d.merge(ev.Usage)
}

// Usage is the normalized usage so far.
func (s *StreamUsage) Usage() codec.Usage { return s.d.usage.normalize() }
