package responses

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// NewStreamDecoder reads a route's Responses SSE. The stream ends at response.completed,
// response.incomplete or response.done (the ChatGPT backend's variant), or fails at
// response.failed or an error event.
//
// Items are known by output_index, and by item id only for events without one: Copilot-style
// endpoints send a new item id on every event of the same item.
func (format) NewStreamDecoder() ir.StreamDecoder {
	return &streamDecoder{byIndex: map[int]*decodedItem{}, byID: map[string]*decodedItem{}}
}

// decodedItem is one output item of the stream: what a message or reasoning item streamed,
// so a done event adds only what the deltas did not carry, and a tool call's state.
type decodedItem struct {
	id           string // the first id it was seen with: the one its events carry on
	streamed     bool
	summaryIndex int
	call         *decodedCall // function_call and custom_tool_call items
}

// decodedCall is a tool call of the stream.
type decodedCall struct {
	index  int // counted 0, 1, 2… per call
	custom bool
	sent   bool // some arguments were emitted
	closed bool
}

type streamDecoder struct {
	started     bool
	ended       bool
	byIndex     map[int]*decodedItem    // by output_index
	byID        map[string]*decodedItem // by every item id seen, for events without output_index
	calls       []*decodedCall          // in index order
	toolUsed    bool
	strs        jsonw.Strings // the events' strings
	outputIndex int           // the output_index of the event decodeFast reads
	evs         []ir.Event    // the last Decode's events, reused
}

// streamEvent is every field of the events this decoder reads.
type streamEvent struct {
	Type         string          `json:"type"`
	Response     *readResponse   `json:"response"`
	Item         *readItem       `json:"item"`
	ItemID       string          `json:"item_id"`
	OutputIndex  *int            `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Code         json.RawMessage `json:"code"`
	Message      string          `json:"message"`
	Param        json.RawMessage `json:"param"`
	Error        *streamError    `json:"error"`
}

// streamError is the error of an error event.
type streamError struct {
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Param   json.RawMessage `json:"param"`
}

func (d *streamDecoder) Decode(name, data []byte) ([]ir.Event, bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
		return nil, d.ended, nil
	}
	if d.ended {
		return nil, true, nil
	}
	if out, ok := d.decodeFast(name, data, d.evs[:0]); ok {
		d.evs = out
		return out, d.ended, nil
	}
	return d.decodeSlow(name, data)
}

// decodeSlow reads any event with encoding/json.
func (d *streamDecoder) decodeSlow(name, data []byte) ([]ir.Event, bool, error) {
	var ev streamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, false, fmt.Errorf("responses stream: bad %q event: %w", name, err)
	}
	if ev.Type == "" {
		ev.Type = string(name)
	}
	return d.handle(&ev, nil), d.ended, nil
}

// handle turns one event, read either way, into IR events appended to out.
func (d *streamDecoder) handle(ev *streamEvent, out []ir.Event) []ir.Event {
	start := func(r *readResponse) {
		if !d.started {
			d.started = true
			s := ir.Event{Kind: ir.EvStart}
			if r != nil {
				s.ID, s.Model = r.ID, r.Model
				if r.Usage != nil {
					s.Usage = r.Usage.normalize()
				}
			}
			out = append(out, s)
		}
	}
	switch ev.Type {
	case "response.created", "response.in_progress", "response.queued":
		start(ev.Response)
	case "response.output_text.delta", "response.refusal.delta":
		start(nil)
		d.item(ev.OutputIndex, ev.ItemID).streamed = true
		if ev.Delta != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		start(nil)
		it := d.item(ev.OutputIndex, ev.ItemID)
		text := ev.Delta
		if it.streamed && ev.SummaryIndex > it.summaryIndex {
			text = "\n\n" + text // a new summary part
		}
		it.summaryIndex = ev.SummaryIndex
		if text != "" {
			it.streamed = true
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: text, ID: it.id})
		}
	case "response.output_item.added":
		start(nil)
		out, _ = d.itemAdded(out, *ev)
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		start(nil)
		if it := d.find(ev.OutputIndex, ev.ItemID); it != nil && it.call != nil && !it.call.closed && ev.Delta != "" {
			out = append(out, d.args(it.call, ev.Delta))
		}
	case "response.output_item.done":
		start(nil)
		out = d.itemDone(out, *ev)
	case "response.completed", "response.incomplete", "response.done":
		start(ev.Response)
		out = d.terminal(out, ev.Response)
	case "response.failed":
		start(ev.Response)
		out = append(out, ir.Event{Kind: ir.EvError, Err: failedError(ev.Response)})
		d.ended = true
	case "error":
		// OpenAI nests the error ({"type":"error","error":{…}}); the spec shows it flat.
		e := streamError{Code: ev.Code, Message: ev.Message, Param: ev.Param}
		if ev.Error != nil {
			e = *ev.Error
		}
		if e.Message == "" {
			e.Message = "the upstream stream failed"
		}
		out = append(out, ir.Event{Kind: ir.EvError,
			Err: responseError(e.Type, check.ScalarText(e.Code), e.Message, check.ScalarText(e.Param))})
		d.ended = true
	}
	return out
}

// find is the item an event belongs to: by its output_index, else by its item id. Each id
// and index seen is remembered for the item, so events that carry only one of them find it.
func (d *streamDecoder) find(outputIndex *int, id string) *decodedItem {
	var it *decodedItem
	if outputIndex != nil {
		it = d.byIndex[*outputIndex]
	}
	if it == nil && id != "" {
		it = d.byID[id]
		if it != nil && outputIndex != nil {
			if _, taken := d.byIndex[*outputIndex]; !taken {
				d.byIndex[*outputIndex] = it
			}
		}
	}
	if it != nil && id != "" && d.byID[id] == nil {
		d.byID[id] = it
	}
	return it
}

// item finds an event's item, or starts one.
func (d *streamDecoder) item(outputIndex *int, id string) *decodedItem {
	if it := d.find(outputIndex, id); it != nil {
		return it
	}
	it := &decodedItem{id: id}
	if outputIndex != nil {
		d.byIndex[*outputIndex] = it
	}
	if id != "" {
		d.byID[id] = it
	}
	return it
}

// args is an arguments fragment; a custom call's raw input is streamed as the inside of the
// JSON string of {"input": …}, opened by its first fragment and closed at its done event.
func (d *streamDecoder) args(c *decodedCall, frag string) ir.Event {
	if c.custom {
		q, _ := json.Marshal(frag)
		frag = string(q[1 : len(q)-1])
		if !c.sent {
			frag = `{"input":"` + frag
		}
	}
	c.sent = true
	return ir.Event{Kind: ir.EvToolArgs, Index: c.index, Text: frag}
}

func (d *streamDecoder) itemAdded(out []ir.Event, ev streamEvent) ([]ir.Event, *decodedItem) {
	item := ev.Item
	if item == nil {
		return out, nil
	}
	id := item.ID
	if id == "" {
		id = item.CallID
	}
	it := d.item(ev.OutputIndex, id)
	if item.Type != "function_call" && item.Type != "custom_tool_call" || it.call != nil {
		return out, it
	}
	c := &decodedCall{index: len(d.calls), custom: item.Type == "custom_tool_call"}
	d.calls = append(d.calls, c)
	it.call = c
	d.toolUsed = true
	out = append(out, ir.Event{Kind: ir.EvToolStart, Index: c.index, ID: item.CallID, Name: item.Name})
	if frag := item.Arguments + item.Input; frag != "" {
		out = append(out, d.args(c, frag))
	}
	return out, it
}

// itemDone completes an item: what its deltas did not carry, the closing of a custom call's
// input, and a reasoning item's encrypted content (EvSignature, Format "responses").
func (d *streamDecoder) itemDone(out []ir.Event, ev streamEvent) []ir.Event {
	it := ev.Item
	if it == nil {
		return out
	}
	id := it.ID
	if id == "" {
		id = it.CallID
	}
	switch it.Type {
	case "function_call", "custom_tool_call":
		di := d.find(ev.OutputIndex, id)
		if di == nil || di.call == nil { // a call announced only by its done event
			// (one with neither an output_index nor an id cannot be found again: the item
			// itemAdded made is the one)
			out, di = d.itemAdded(out, streamEvent{Item: &readItem{Type: it.Type, ID: id,
				CallID: it.CallID, Name: it.Name}, OutputIndex: ev.OutputIndex})
		}
		c := di.call
		if c.closed {
			return out
		}
		if !c.sent {
			if frag := it.Arguments + it.Input; frag != "" {
				out = append(out, d.args(c, frag))
			}
		}
		if c.custom {
			closing := `"}`
			if !c.sent {
				closing = `{"input":""}`
			}
			out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: c.index, Text: closing})
		}
		c.closed = true
	case "message":
		if !d.item(ev.OutputIndex, id).streamed {
			parts, _ := itemParts(*it)
			for _, p := range parts {
				out = append(out, ir.Event{Kind: ir.EvText, Text: p.Text})
			}
		}
	case "reasoning":
		di := d.item(ev.OutputIndex, id)
		if text := reasoningText(*it); text != "" && !di.streamed {
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: text, ID: di.id})
		}
		if it.EncryptedContent != "" {
			out = append(out, ir.Event{Kind: ir.EvSignature, Format: SignatureFormat,
				Text: it.EncryptedContent, ID: di.id})
		}
	}
	return out
}

// terminal closes calls still open, then finishes with the stop reason and usage.
func (d *streamDecoder) terminal(out []ir.Event, r *readResponse) []ir.Event {
	d.ended = true
	for _, c := range d.openCalls() {
		if c.custom {
			closing := `"}`
			if !c.sent {
				closing = `{"input":""}`
			}
			out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: c.index, Text: closing})
		}
		c.closed = true
	}
	status, reason := "completed", ""
	fin := ir.Event{Kind: ir.EvFinish}
	if r != nil {
		if r.Status == "failed" {
			return append(out, ir.Event{Kind: ir.EvError, Err: failedError(r)})
		}
		if r.Status != "" {
			status = r.Status
		}
		if r.IncompleteDetails != nil {
			reason = r.IncompleteDetails.Reason
		}
		if r.Usage != nil {
			fin.Usage = r.Usage.normalize()
		}
		if !d.toolUsed {
			for _, it := range r.Output {
				d.toolUsed = d.toolUsed || it.Type == "function_call" || it.Type == "custom_tool_call"
			}
		}
	}
	fin.Stop = stopReason(status, reason, d.toolUsed)
	return append(out, fin)
}

// openCalls are the calls without a done event, in index order.
func (d *streamDecoder) openCalls() []*decodedCall {
	var open []*decodedCall
	for _, c := range d.calls {
		if !c.closed {
			open = append(open, c)
		}
	}
	return open
}
