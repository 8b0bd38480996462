package responses

import (
	"strconv"

	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of a Responses stream's events into the streamEvent encoding/json
// would make of them, for handle: the deltas, the events handle passes over, and those that
// carry a whole response or item (its members read as readResponse and readItem have them).
// An error event, a key encoding/json might read differently, a repeated member or a value of
// a type encoding/json would refuse gives up (ok false), and the event is read again with
// encoding/json (decodeSlow), so both read every event alike.

var (
	eventKeys = []string{"type", "item_id", "output_index", "summary_index", "delta", "message",
		"response", "item", "error", "code", "param"}
	itemKeys = []string{"type", "id", "content", "summary", "encrypted_content", "call_id", "name",
		"arguments", "input"}
	summaryKeys  = []string{"type", "text"}
	responseKeys = []string{"id", "created_at", "model", "status", "incomplete_details", "error", "output", "usage"}
	reasonKeys   = []string{"reason"}
	errorKeys    = []string{"type", "code", "message"}
	usageKeys    = []string{"input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details", "total_tokens"}
	inputDetails = []string{"cached_tokens", "cache_write_tokens"}
	outDetails   = []string{"reasoning_tokens"}
)

func (d *streamDecoder) decodeFast(name, data []byte, out []ir.Event) ([]ir.Event, bool) {
	var v [11]jsonscan.Span
	if !jsonw.Members(data, eventKeys, v[:]) || jsonw.Present(v[8]) {
		return out, false
	}
	var ev streamEvent
	ok := true
	if jsonw.Present(v[0]) {
		t, plain := jsonw.Plain(data[v[0].Start:v[0].End])
		ok = plain
		if len(t) > 0 {
			ev.Type = eventType(t)
		}
	}
	if ev.Type == "" && len(name) > 0 {
		ev.Type = eventType(name)
	}
	if jsonw.Present(v[2]) {
		d.outputIndex = intAt(&ok, data, v[2])
		ev.OutputIndex = &d.outputIndex // the decoder's: a local's address would be a heap allocation
	}
	if jsonw.Present(v[3]) {
		ev.SummaryIndex = intAt(&ok, data, v[3])
	}
	ev.ItemID = d.str(&ok, data, v[1])
	ev.Delta = d.str(&ok, data, v[4])
	ev.Message = d.str(&ok, data, v[5])
	if ok && jsonw.Present(v[6]) {
		ev.Response, ok = d.responseFast(data[v[6].Start:v[6].End])
	}
	if ok && jsonw.Present(v[7]) {
		ev.Item, ok = d.itemFast(data[v[7].Start:v[7].End])
	}
	if !ok || ev.Type == "error" { // code, param: any value; the error is decodeSlow's
		return out, false
	}
	return d.handle(&ev, out), true
}

// str reads a string member, unless an earlier read failed (*ok false); a value of another
// type fails it.
func (d *streamDecoder) str(ok *bool, text []byte, v jsonscan.Span) string {
	if !*ok {
		return ""
	}
	s, good := d.strs.Str(text, v)
	*ok = good
	return s
}

// intAt reads an int member as str reads a string.
func intAt(ok *bool, text []byte, v jsonscan.Span) int {
	if !*ok {
		return 0
	}
	n, good := jsonw.IntAt(text, v)
	*ok = good
	return n
}

// eventTypes are the types handle acts on, so a type read at byte level needs no string of
// its own; any other is "?", which handle passes over as it does every unknown type.
var eventTypes = map[string]string{}

func init() {
	for _, t := range []string{"response.created", "response.in_progress", "response.queued",
		"response.output_text.delta", "response.refusal.delta", "response.reasoning_summary_text.delta",
		"response.reasoning_text.delta", "response.output_item.added", "response.function_call_arguments.delta",
		"response.custom_tool_call_input.delta", "response.output_item.done", "response.completed",
		"response.incomplete", "response.done", "response.failed", "error"} {
		eventTypes[t] = t
	}
}

func eventType(b []byte) string {
	if t, ok := eventTypes[string(b)]; ok {
		return t
	}
	return "?"
}

func (d *streamDecoder) itemFast(text []byte) (*readItem, bool) {
	var v [9]jsonscan.Span
	if !jsonw.MembersOf(text, itemKeys, v[:]) {
		return nil, false
	}
	it := &readItem{}
	ok := true
	for i, dst := range []*string{&it.Type, &it.ID, nil, nil, &it.EncryptedContent, &it.CallID, &it.Name, &it.Arguments, &it.Input} {
		if dst != nil {
			*dst = d.str(&ok, text, v[i])
		}
	}
	if c := v[2]; ok && jsonw.Present(c) {
		it.Content = append([]byte(nil), text[c.Start:c.End]...) // any value, as json.RawMessage
	}
	if s := v[3]; ok && jsonw.Present(s) {
		var parts [2]jsonscan.Span
		ok = jsonw.ElementsOf(text[s.Start:s.End], func(e jsonscan.Span) bool {
			el := text[s.Start+e.Start : s.Start+e.End]
			var w wireText
			if jsonw.IsNull(el) {
				it.Summary = append(it.Summary, w)
				return true
			}
			var ok1, ok2 bool
			if !jsonw.MembersOf(el, summaryKeys, parts[:]) {
				return false
			}
			w.Type, ok1 = d.strs.Str(el, parts[0])
			w.Text, ok2 = d.strs.Str(el, parts[1])
			it.Summary = append(it.Summary, w)
			return ok1 && ok2
		})
	}
	return it, ok
}

func (d *streamDecoder) responseFast(text []byte) (*readResponse, bool) {
	var v [8]jsonscan.Span
	if !jsonw.MembersOf(text, responseKeys, v[:]) {
		return nil, false
	}
	r := &readResponse{}
	ok := true
	r.ID = d.str(&ok, text, v[0])
	if c := v[1]; jsonw.Present(c) {
		_, err := strconv.ParseFloat(string(text[c.Start:c.End]), 64)
		ok = ok && err == nil // created_at: a float64 (its value is not read)
	}
	r.Model = d.str(&ok, text, v[2])
	r.Status = d.str(&ok, text, v[3])
	if s := v[4]; ok && jsonw.Present(s) {
		var reason [1]jsonscan.Span
		in := text[s.Start:s.End]
		r.IncompleteDetails = &struct {
			Reason string `json:"reason"`
		}{}
		ok = jsonw.MembersOf(in, reasonKeys, reason[:])
		r.IncompleteDetails.Reason = d.str(&ok, in, reason[0])
	}
	if s := v[5]; ok && jsonw.Present(s) {
		var e [3]jsonscan.Span
		in := text[s.Start:s.End]
		r.Error = &struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		}{}
		ok = jsonw.MembersOf(in, errorKeys, e[:])
		r.Error.Type = d.str(&ok, in, e[0])
		r.Error.Code = d.str(&ok, in, e[1])
		r.Error.Message = d.str(&ok, in, e[2])
	}
	if s := v[6]; ok && jsonw.Present(s) {
		in := text[s.Start:s.End]
		ok = jsonw.ElementsOf(in, func(e jsonscan.Span) bool {
			el := in[e.Start:e.End]
			if jsonw.IsNull(el) {
				r.Output = append(r.Output, readItem{})
				return true
			}
			it, ok := d.itemFast(el)
			if ok {
				r.Output = append(r.Output, *it)
			}
			return ok
		})
	}
	if s := v[7]; ok && jsonw.Present(s) {
		r.Usage = &wireUsage{}
		ok = usageFast(text[s.Start:s.End], r.Usage)
	}
	return r, ok
}

func usageFast(text []byte, w *wireUsage) bool {
	var v [5]jsonscan.Span
	var in [2]jsonscan.Span
	var out [1]jsonscan.Span
	ok := jsonw.MembersOf(text, usageKeys, v[:]) &&
		jsonw.Ints(text, []jsonscan.Span{v[0], v[2], v[4]}, &w.InputTokens, &w.OutputTokens, &w.TotalTokens)
	if s := v[1]; ok && jsonw.Present(s) {
		t := text[s.Start:s.End]
		ok = jsonw.MembersOf(t, inputDetails, in[:]) &&
			jsonw.Ints(t, in[:], &w.InputTokensDetails.CachedTokens, &w.InputTokensDetails.CacheWriteTokens)
	}
	if s := v[3]; ok && jsonw.Present(s) {
		t := text[s.Start:s.End]
		ok = jsonw.MembersOf(t, outDetails, out[:]) && jsonw.Ints(t, out[:], &w.OutputTokensDetails.ReasoningTokens)
	}
	return ok
}
