package responses

import (
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of the events most frames of a Responses stream are: the text,
// reasoning and argument deltas, and the events this decoder passes over (content parts,
// the *.done events of text). An event that starts, adds or ends an item or the response,
// an error, a member of their shapes, a key encoding/json might read differently or a
// repeated member gives up (ok false), and the event is read again with encoding/json
// (decodeSlow), so both read every event alike.

var eventKeys = []string{"type", "item_id", "output_index", "summary_index", "delta", "message",
	"response", "item", "error", "code", "param"}

// slowEvents are the event types decodeSlow acts on besides the deltas.
var slowEvents = map[string]bool{
	"response.created": true, "response.in_progress": true, "response.queued": true,
	"response.output_item.added": true, "response.output_item.done": true,
	"response.completed": true, "response.incomplete": true, "response.done": true,
	"response.failed": true, "error": true,
}

func (d *streamDecoder) decodeFast(name, data []byte, out []ir.Event) ([]ir.Event, bool) {
	if slowEvents[string(name)] {
		return out, false // named as an event decodeSlow reads (which goes by the type): no need to look
	}
	var v [11]jsonscan.Span
	if !jsonw.Members(data, eventKeys, v[:]) || jsonw.Present(v[6]) || jsonw.Present(v[7]) || jsonw.Present(v[8]) {
		return out, false
	}
	typ := name
	if jsonw.Present(v[0]) {
		t, ok := jsonw.Plain(data[v[0].Start:v[0].End])
		if !ok {
			return out, false
		}
		if len(t) > 0 {
			typ = t
		}
	}
	var outputIndex *int
	index, summary := 0, 0
	if jsonw.Present(v[2]) {
		var ok bool
		if index, ok = jsonw.IntAt(data, v[2]); !ok {
			return out, false
		}
		outputIndex = &index
	}
	if jsonw.Present(v[3]) {
		var ok bool
		if summary, ok = jsonw.IntAt(data, v[3]); !ok {
			return out, false
		}
	}
	for _, s := range []jsonscan.Span{v[1], v[4], v[5]} {
		if jsonw.Present(s) && !jsonw.IsString(data[s.Start:s.End]) {
			return out, false // a type encoding/json would refuse
		}
	}
	switch string(typ) {
	case "response.output_text.delta", "response.refusal.delta":
		out = d.startFast(out)
		d.item(outputIndex, d.str(data, v[1])).streamed = true
		if delta := d.str(data, v[4]); delta != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: delta})
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		out = d.startFast(out)
		it := d.item(outputIndex, d.str(data, v[1]))
		text := d.str(data, v[4])
		if it.streamed && summary > it.summaryIndex {
			text = "\n\n" + text // a new summary part
		}
		it.summaryIndex = summary
		if text != "" {
			it.streamed = true
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: text, ID: it.id})
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		out = d.startFast(out)
		if it := d.find(outputIndex, d.str(data, v[1])); it != nil && it.call != nil && !it.call.closed && jsonw.Present(v[4]) {
			if delta := d.str(data, v[4]); delta != "" {
				out = append(out, d.args(it.call, delta))
			}
		}
	default:
		if slowEvents[string(typ)] {
			return out, false
		}
	}
	return out, true
}

// str is a string member checked to be one ("" when absent).
func (d *streamDecoder) str(text []byte, v jsonscan.Span) string {
	s, _ := d.strs.Str(text, v)
	return s
}

func (d *streamDecoder) startFast(out []ir.Event) []ir.Event {
	if d.started {
		return out
	}
	d.started = true
	return append(out, ir.Event{Kind: ir.EvStart})
}
