package messages

import (
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of the events nearly every frame of a messages stream is:
// content_block_delta, content_block_stop and ping, once the answer has started. Anything
// else — another event, a member of another event's shape, a key encoding/json might read
// differently, a repeated member — gives up (ok false) and the event is read again with
// encoding/json (decodeSlow), so both read every event alike.

var (
	eventKeys      = []string{"type", "index", "delta", "message", "content_block", "usage", "error"}
	eventDeltaKeys = []string{"type", "text", "partial_json", "thinking", "signature", "stop_reason", "stop_sequence"}
)

func (d *streamDecoder) decodeFast(name, data []byte, out []ir.Event) ([]ir.Event, bool) {
	if !d.started || string(name) == "message_start" || string(name) == "error" {
		return out, false // decodeSlow's (which goes by the type when the name is empty)
	}
	var top [7]jsonscan.Span
	if !jsonw.Members(data, eventKeys, top[:]) {
		return out, false
	}
	if top[3].End > 0 || top[6].End > 0 { // message, error: read by decodeSlow
		return out, false
	}
	kind := name
	if t := top[0]; t.End > 0 {
		typ, ok := jsonw.Plain(data[t.Start:t.End])
		if !ok {
			return out, false
		}
		if len(kind) == 0 {
			kind = typ
		}
	}
	index := 0
	if v := top[1]; v.End > 0 {
		n, ok := jsonw.Int64(data[v.Start:v.End])
		if !ok || int64(int(n)) != n {
			return out, false
		}
		index = int(n)
	}
	switch string(kind) {
	case "content_block_start":
		if top[5].End > 0 || top[4].End == 0 {
			return out, false
		}
		return d.blockStartFast(data, top[:], out)
	case "message_delta":
		if top[4].End > 0 {
			return out, false
		}
		return out, d.messageDeltaFast(data, top[:])
	}
	if top[4].End > 0 || top[5].End > 0 { // content_block, usage: other events' members
		return out, false
	}
	delta := top[2]
	switch string(kind) {
	case "ping":
		return out, top[1].End == 0 && delta.End == 0
	case "content_block_stop":
		if delta.End > 0 {
			return out, false
		}
		if b := d.blocks[index]; b != nil && b.kind == "tool_use" && !b.gotArgs && len(b.input) > 0 {
			out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: string(b.input)})
		}
		delete(d.blocks, index)
		return out, true
	case "content_block_delta":
		if delta.End == 0 {
			return out, true
		}
		return d.deltaFast(data[delta.Start:delta.End], index, out)
	case "message_stop":
		if delta.End > 0 {
			return out, false
		}
		d.done = true
		return append(out, d.finish()), true
	}
	return out, false
}

// blockStartFast reads a content_block_start whose block has no input (text, thinking,
// redacted thinking, a tool call whose arguments stream).
func (d *streamDecoder) blockStartFast(data []byte, top []jsonscan.Span, out []ir.Event) ([]ir.Event, bool) {
	var v [8]jsonscan.Span
	cb := top[4]
	if top[2].End > 0 || !jsonw.MembersOf(data[cb.Start:cb.End], blockKeys, v[:]) || v[4].End > 0 {
		return out, false
	}
	text := data[cb.Start:cb.End]
	var b inBlockResp
	for i, dst := range []*string{&b.Type, &b.Text, &b.ID, &b.Name, nil, &b.Thinking, &b.Signature, &b.Data} {
		if dst == nil {
			continue
		}
		var ok bool
		if *dst, ok = d.strs.Str(text, v[i]); !ok {
			return out, false
		}
	}
	index, ok := 0, true
	if top[1].End > 0 {
		if index, ok = jsonw.IntAt(data, top[1]); !ok {
			return out, false
		}
	}
	return d.blockStart(out, index, &b), true
}

// messageDeltaFast reads a message_delta: the stop reason and sequence, and the usage.
func (d *streamDecoder) messageDeltaFast(data []byte, top []jsonscan.Span) bool {
	var dv [7]jsonscan.Span
	if dl := top[2]; dl.End > 0 {
		text := data[dl.Start:dl.End]
		if !jsonw.MembersOf(text, eventDeltaKeys, dv[:]) {
			return false
		}
		for _, v := range dv {
			if v.End > 0 && !jsonw.IsString(text[v.Start:v.End]) {
				return false
			}
		}
		for i := range dv {
			if dv[i].End > 0 { // relative to data, as absent ones stay zero
				dv[i].Start += dl.Start
				dv[i].End += dl.Start
			}
		}
	}
	var w wireUsage
	if u := top[5]; u.End > 0 && !usageFast(data[u.Start:u.End], &w) {
		return false
	}
	if top[1].End > 0 {
		if _, ok := jsonw.IntAt(data, top[1]); !ok {
			return false
		}
	}
	if v := dv[5]; v.End > 0 {
		d.stop, _ = d.strs.Str(data, v)
	}
	if v := dv[6]; v.End > 0 {
		d.stopSeq, _ = d.strs.Str(data, v)
	}
	d.merge(&w)
	return true
}

var (
	blockKeys        = []string{"type", "text", "id", "name", "input", "thinking", "signature", "data"}
	usageKeys        = []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens", "output_tokens_details"}
	usageDetailsKeys = []string{"thinking_tokens"}
)

// usageFast reads a usage object into w as encoding/json reads wireUsage.
func usageFast(text []byte, w *wireUsage) bool {
	var v [5]jsonscan.Span
	if !jsonw.MembersOf(text, usageKeys, v[:]) {
		return false
	}
	for i, dst := range []**int64{&w.InputTokens, &w.CacheCreationInputTokens, &w.CacheReadInputTokens, &w.OutputTokens} {
		if v[i].End > 0 {
			n, ok := jsonw.Int64(text[v[i].Start:v[i].End])
			if !ok {
				return false
			}
			*dst = &n
		}
	}
	if det := v[4]; det.End > 0 {
		var t [1]jsonscan.Span
		dt := text[det.Start:det.End]
		if !jsonw.MembersOf(dt, usageDetailsKeys, t[:]) {
			return false
		}
		w.OutputTokensDetails = &struct {
			ThinkingTokens *int64 `json:"thinking_tokens,omitempty"`
		}{}
		if t[0].End > 0 {
			n, ok := jsonw.Int64(dt[t[0].Start:t[0].End])
			if !ok {
				return false
			}
			w.OutputTokensDetails.ThinkingTokens = &n
		}
	}
	return true
}

func (d *streamDecoder) deltaFast(text []byte, index int, out []ir.Event) ([]ir.Event, bool) {
	var vals [7]jsonscan.Span
	if !jsonw.MembersOf(text, eventDeltaKeys, vals[:]) {
		return out, false
	}
	for _, v := range vals {
		if v.End > 0 && !jsonw.IsString(text[v.Start:v.End]) {
			return out, false // a type encoding/json would refuse
		}
	}
	var typ []byte
	if v := vals[0]; v.End > 0 {
		var ok bool
		if typ, ok = jsonw.Plain(text[v.Start:v.End]); !ok {
			return out, false
		}
	}
	b := d.blocks[index]
	if b == nil {
		return out, true // a delta for no open block: nothing to attach it to
	}
	str := func(v jsonscan.Span) string {
		if v.End == 0 {
			return ""
		}
		return d.strs.String(text[v.Start+1 : v.End-1])
	}
	switch {
	case string(typ) == "text_delta" && b.kind == "text":
		if t := str(vals[1]); t != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: t})
		}
	case string(typ) == "thinking_delta" && b.kind == "thinking":
		if t := str(vals[3]); t != "" {
			out = append(out, ir.Event{Kind: ir.EvReasoning, Text: t})
		}
	case string(typ) == "signature_delta" && b.kind == "thinking":
		if t := str(vals[4]); t != "" {
			out = append(out, ir.Event{Kind: ir.EvSignature, Text: t, Format: SignatureFormat})
		}
	case string(typ) == "input_json_delta" && b.kind == "tool_use":
		if t := str(vals[2]); t != "" {
			b.gotArgs = true
			out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: t})
		}
	}
	return out, true
}
