package converse

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// ConverseStream event names, as transport/upstream names each SSE event after its frame.
const (
	evMessageStart      = "messageStart"
	evContentBlockStart = "contentBlockStart"
	evContentBlockDelta = "contentBlockDelta"
	evContentBlockStop  = "contentBlockStop"
	evMessageStop       = "messageStop"
	evMetadata          = "metadata"
)

// NewStreamDecoder reads a ConverseStream answer into IR events: the first event opens the
// answer (EvStart: Converse streams carry no id, model or usage up front); text, reasoning,
// signature and redacted deltas become their events; a tool block's start and input deltas
// become EvToolStart and EvToolArgs, calls counted 0, 1, 2… apart from the block indices;
// messageStop is remembered and metadata, which follows it with the usage, gives EvFinish
// and ends the stream. An exception event (throttlingException, …) becomes EvError and ends
// the stream too.
func (format) NewStreamDecoder() ir.StreamDecoder {
	return &streamDecoder{blocks: map[int]*blockState{}}
}

type streamDecoder struct {
	started  bool
	done     bool
	blocks   map[int]*blockState // tool blocks, by contentBlockIndex
	tools    int                 // tool calls seen
	stopped  bool                // messageStop came
	stop     string
	stopSeq  string
	gotUsage bool // metadata came
	usage    codec.Usage
	strs     jsonw.Strings // the fast path's strings
	evs      []ir.Event    // the last Decode's events, reused
}

type blockState struct {
	tool    int
	gotArgs bool
}

// inEvent is the payload of any ConverseStream event; each event sets its own members.
type inEvent struct {
	ContentBlockIndex int `json:"contentBlockIndex"`
	Start             *struct {
		ToolUse *struct {
			ToolUseID string `json:"toolUseId"`
			Name      string `json:"name"`
		} `json:"toolUse"`
	} `json:"start"`
	Delta                         *inDelta        `json:"delta"`
	StopReason                    string          `json:"stopReason"`
	AdditionalModelResponseFields json.RawMessage `json:"additionalModelResponseFields"`
	Usage                         *wireUsage      `json:"usage"`
}

// inDelta is a ContentBlockDelta: a union of text, toolUse (a piece of the input's JSON
// text) and reasoningContent (itself a union of text, signature and redactedContent).
type inDelta struct {
	Text    *string `json:"text"`
	ToolUse *struct {
		Input string `json:"input"`
	} `json:"toolUse"`
	ReasoningContent *struct {
		Text            string `json:"text"`
		Signature       string `json:"signature"`
		RedactedContent string `json:"redactedContent"`
	} `json:"reasoningContent"`
}

func isException(name string) bool { return strings.HasSuffix(name, "Exception") }

var eventNames = []string{evMessageStart, evContentBlockStart, evContentBlockDelta, evContentBlockStop, evMessageStop, evMetadata}

// unwrap reads an event without a name written as the API's union ({"contentBlockDelta":
// {…}}), as a ConverseStream answer's frames say it in JSON: the one member names the event.
// ok is false for data that is not a JSON object.
func unwrap(data []byte) (name string, inner []byte, ok bool) {
	err := jsonscan.Members(data, func(k []byte, v jsonscan.Span) bool {
		key := jsonscan.Key(k)
		for _, n := range eventNames {
			if key == n {
				name, inner = n, data[v.Start:v.End]
				return false
			}
		}
		if isException(key) {
			name, inner = key, data[v.Start:v.End]
			return false
		}
		return true
	})
	return name, inner, err == nil
}

func (d *streamDecoder) Decode(name, data []byte) ([]ir.Event, bool, error) {
	if d.done {
		return nil, true, nil
	}
	if out, ok := d.decodeFast(name, data, d.evs[:0]); ok {
		d.evs = out
		return out, false, nil
	}
	return d.decodeSlow(string(name), data)
}

// decodeSlow reads any event with encoding/json.
func (d *streamDecoder) decodeSlow(name string, data []byte) ([]ir.Event, bool, error) {
	if name == "" {
		var ok bool
		if name, data, ok = unwrap(data); !ok {
			return nil, false, errors.New("converse stream: an event without a name is not a JSON object")
		}
	}
	out := d.evs[:0]
	if isException(name) {
		d.done = true
		d.evs = append(out, ir.Event{Kind: ir.EvError, Err: streamError(name, data)})
		return d.evs, true, nil
	}
	known := false
	for _, n := range eventNames {
		known = known || name == n
	}
	if !known {
		return out, false, nil // an event this decoder does not know carries nothing it reads
	}
	var ev inEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, false, fmt.Errorf("converse stream: undecodable %q event: %w", name, err)
	}
	if !d.started {
		d.started = true
		out = append(out, ir.Event{Kind: ir.EvStart})
	}
	switch name {
	case evContentBlockStart:
		if ev.Start != nil && ev.Start.ToolUse != nil {
			st := &blockState{tool: d.tools}
			d.tools++
			d.blocks[ev.ContentBlockIndex] = st
			out = append(out, ir.Event{Kind: ir.EvToolStart, Index: st.tool, ID: ev.Start.ToolUse.ToolUseID, Name: ev.Start.ToolUse.Name})
		}
	case evContentBlockDelta:
		if ev.Delta != nil {
			out = d.delta(out, ev.ContentBlockIndex, ev.Delta)
		}
	case evContentBlockStop:
		out = d.closeBlock(out, ev.ContentBlockIndex)
	case evMessageStop:
		d.stopped, d.stop = true, ev.StopReason
		d.stopSeq = matchedSequence(ev.AdditionalModelResponseFields)
		if d.gotUsage {
			out = d.finish(out)
		}
	case evMetadata:
		if ev.Usage != nil {
			d.gotUsage, d.usage = true, ev.Usage.normalize()
		}
		if d.stopped {
			out = d.finish(out)
		} else if ev.Usage != nil {
			out = append(out, ir.Event{Kind: ir.EvUsage, Usage: d.usage})
		}
	}
	d.evs = out
	return out, d.done, nil
}

func (d *streamDecoder) delta(out []ir.Event, index int, delta *inDelta) []ir.Event {
	switch {
	case delta.Text != nil:
		if *delta.Text != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: *delta.Text})
		}
	case delta.ToolUse != nil:
		if b := d.blocks[index]; b != nil && delta.ToolUse.Input != "" {
			b.gotArgs = true
			out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: delta.ToolUse.Input})
		}
	case delta.ReasoningContent != nil:
		rc := delta.ReasoningContent
		if rc.Text != "" {
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: rc.Text})
		}
		if rc.Signature != "" {
			out = append(out, ir.Event{Kind: ir.EvSignature, Text: rc.Signature, Format: SignatureFormat})
		}
		if rc.RedactedContent != "" {
			out = append(out, ir.Event{Kind: ir.EvRedacted, Text: redactedData(rc.RedactedContent), Format: SignatureFormat})
		}
	}
	return out
}

// closeBlock ends a block; a tool call whose input never came gets {} (a call without
// arguments, which some models stream without any input delta).
func (d *streamDecoder) closeBlock(out []ir.Event, index int) []ir.Event {
	b := d.blocks[index]
	if b == nil {
		return out
	}
	delete(d.blocks, index)
	if !b.gotArgs {
		out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: "{}"})
	}
	return out
}

// finish ends the answer: tool blocks still open are closed, then EvFinish.
func (d *streamDecoder) finish(out []ir.Event) []ir.Event {
	d.done = true
	open := make([]int, 0, len(d.blocks))
	for i := range d.blocks {
		open = append(open, i)
	}
	slices.Sort(open)
	for _, i := range open {
		out = d.closeBlock(out, i)
	}
	fin := ir.Event{Kind: ir.EvFinish, Stop: stopFrom(d.stop, d.tools > 0), Usage: d.usage}
	if fin.Stop == ir.StopSequence {
		fin.StopSequence = d.stopSeq
	}
	return append(out, fin)
}

var _ ir.EndingDecoder = (*streamDecoder)(nil)

// End completes an answer that gave its messageStop before the stream stopped without the
// metadata event: whole, its usage unknown. No frame stands for the missing event, as no
// client speaks this format.
func (d *streamDecoder) End() ([]ir.Event, *ir.Frame, bool) {
	if d.done || !d.stopped {
		return nil, nil, false
	}
	return d.finish(nil), nil, true
}
