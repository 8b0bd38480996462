package responses

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelgate/modelgate/codec/ir"
)

// NewStreamDecoder reads a route's Responses SSE. The stream ends at response.completed,
// response.incomplete or response.done (the ChatGPT backend's variant), or fails at
// response.failed or an error event.
func (format) NewStreamDecoder() ir.StreamDecoder {
	return &streamDecoder{calls: map[string]*decodedCall{}, items: map[string]*decodedItem{}}
}

// decodedCall is a tool call of the stream, by item id.
type decodedCall struct {
	index  int
	custom bool
	sent   bool // some arguments were emitted
	closed bool
}

// decodedItem remembers what a message or reasoning item streamed, so a done event adds only
// what the deltas did not carry.
type decodedItem struct {
	streamed     bool
	summaryIndex int
}

type streamDecoder struct {
	started  bool
	ended    bool
	calls    map[string]*decodedCall
	byOutput map[int]string // output_index → item id, for deltas without item_id
	items    map[string]*decodedItem
	next     int // next tool call index
	toolUsed bool
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
}

func (d *streamDecoder) Decode(name, data []byte) ([]ir.Event, bool, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || bytes.Equal(data, []byte("[DONE]")) {
		return nil, d.ended, nil
	}
	if d.ended {
		return nil, true, nil
	}
	var ev streamEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, false, fmt.Errorf("responses stream: bad %q event: %w", name, err)
	}
	if ev.Type == "" {
		ev.Type = string(name)
	}
	var out []ir.Event
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
		d.item(ev.ItemID).streamed = true
		if ev.Delta != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: ev.Delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		start(nil)
		it := d.item(ev.ItemID)
		text := ev.Delta
		if it.streamed && ev.SummaryIndex > it.summaryIndex {
			text = "\n\n" + text // a new summary part
		}
		it.summaryIndex = ev.SummaryIndex
		if text != "" {
			it.streamed = true
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: text, ID: ev.ItemID})
		}
	case "response.output_item.added":
		start(nil)
		out = d.itemAdded(out, ev)
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		start(nil)
		if c := d.call(ev); c != nil && !c.closed && ev.Delta != "" {
			out = append(out, d.args(c, ev.Delta))
		}
	case "response.output_item.done":
		start(nil)
		out = d.itemDone(out, ev)
	case "response.completed", "response.incomplete", "response.done":
		start(ev.Response)
		out = d.terminal(out, ev.Response)
	case "response.failed":
		start(ev.Response)
		code, msg := "server_error", "the upstream failed to generate a response"
		if ev.Response != nil && ev.Response.Error != nil {
			code, msg = ev.Response.Error.Code, ev.Response.Error.Message
		}
		out = append(out, ir.Event{Kind: ir.EvError, Err: responseError(code, msg, "")})
		d.ended = true
	case "error":
		msg := ev.Message
		if msg == "" {
			msg = "the upstream stream failed"
		}
		out = append(out, ir.Event{Kind: ir.EvError,
			Err: responseError(scalarText(ev.Code), msg, scalarText(ev.Param))})
		d.ended = true
	}
	return out, d.ended, nil
}

func (d *streamDecoder) item(id string) *decodedItem {
	it, ok := d.items[id]
	if !ok {
		it = &decodedItem{}
		d.items[id] = it
	}
	return it
}

// call finds the call a delta belongs to, by item id or else by output index.
func (d *streamDecoder) call(ev streamEvent) *decodedCall {
	id := ev.ItemID
	if id == "" && ev.OutputIndex != nil {
		id = d.byOutput[*ev.OutputIndex]
	}
	return d.calls[id]
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

func (d *streamDecoder) itemAdded(out []ir.Event, ev streamEvent) []ir.Event {
	it := ev.Item
	if it == nil || (it.Type != "function_call" && it.Type != "custom_tool_call") {
		return out
	}
	c := &decodedCall{index: d.next, custom: it.Type == "custom_tool_call"}
	d.next++
	d.toolUsed = true
	key := it.ID
	if key == "" {
		key = it.CallID
	}
	d.calls[key] = c
	if ev.OutputIndex != nil {
		if d.byOutput == nil {
			d.byOutput = map[int]string{}
		}
		d.byOutput[*ev.OutputIndex] = key
	}
	out = append(out, ir.Event{Kind: ir.EvToolStart, Index: c.index, ID: it.CallID, Name: it.Name})
	if frag := it.Arguments + it.Input; frag != "" {
		out = append(out, d.args(c, frag))
	}
	return out
}

// itemDone completes an item: what its deltas did not carry, the closing of a custom call's
// input, and a reasoning item's encrypted content (EvSignature, Format "responses").
func (d *streamDecoder) itemDone(out []ir.Event, ev streamEvent) []ir.Event {
	it := ev.Item
	if it == nil {
		return out
	}
	switch it.Type {
	case "function_call", "custom_tool_call":
		key := it.ID
		if key == "" {
			key = it.CallID
		}
		c := d.calls[key]
		if c == nil { // a call announced only by its done event
			out = d.itemAdded(out, streamEvent{Item: &readItem{Type: it.Type, ID: key,
				CallID: it.CallID, Name: it.Name}, OutputIndex: ev.OutputIndex})
			c = d.calls[key]
		}
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
		if !d.item(it.ID).streamed {
			parts, _ := itemParts(*it)
			for _, p := range parts {
				out = append(out, ir.Event{Kind: ir.EvText, Text: p.Text})
			}
		}
	case "reasoning":
		if text := reasoningText(*it); text != "" && !d.item(it.ID).streamed {
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: text, ID: it.ID})
		}
		if it.EncryptedContent != "" {
			out = append(out, ir.Event{Kind: ir.EvSignature, Format: SignatureFormat,
				Text: it.EncryptedContent, ID: it.ID})
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
			code, msg := "server_error", "the upstream failed to generate a response"
			if r.Error != nil {
				code, msg = r.Error.Code, r.Error.Message
			}
			return append(out, ir.Event{Kind: ir.EvError, Err: responseError(code, msg, "")})
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
	open := make([]*decodedCall, d.next)
	n := 0
	for _, c := range d.calls {
		if !c.closed {
			open[c.index] = c
			n++
		}
	}
	out := make([]*decodedCall, 0, n)
	for _, c := range open {
		if c != nil {
			out = append(out, c)
		}
	}
	return out
}
