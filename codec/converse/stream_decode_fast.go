package converse

import (
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
	"github.com/modelgate/modelgate/codec/jsonw"
)

// The byte-level reading of the events nearly every frame of a ConverseStream answer is:
// contentBlockDelta and contentBlockStop, once the answer has started. Anything else — another
// event, a member of another event's shape, a key encoding/json might read differently, a
// repeated member, a value of the wrong type — gives up (ok false) and the event is read again
// with encoding/json (decodeSlow), so both read every event alike.

var (
	// eventKeys are inEvent's members: a delta or a stop with any but the first two is read
	// by decodeSlow, which checks their types.
	eventKeys     = []string{"contentBlockIndex", "delta", "start", "stopReason", "additionalModelResponseFields", "usage"}
	deltaKeys     = []string{"text", "toolUse", "reasoningContent"}
	toolUseKeys   = []string{"input"}
	reasoningKeys = []string{"text", "signature", "redactedContent"}
)

func (d *streamDecoder) decodeFast(name, data []byte, out []ir.Event) ([]ir.Event, bool) {
	delta := string(name) == evContentBlockDelta
	if !d.started || !delta && string(name) != evContentBlockStop {
		return out, false
	}
	var top [6]jsonscan.Span
	if !jsonw.Members(data, eventKeys, top[:]) {
		return out, false
	}
	for _, v := range top[2:] {
		if jsonw.Present(v) {
			return out, false
		}
	}
	index := 0
	if v := top[0]; jsonw.Present(v) {
		var ok bool
		if index, ok = jsonw.IntAt(data, v); !ok {
			return out, false
		}
	}
	if !delta {
		if jsonw.Present(top[1]) {
			return out, false
		}
		return d.closeBlock(out, index), true
	}
	if v := top[1]; jsonw.Present(v) {
		return d.deltaFast(out, index, data[v.Start:v.End])
	}
	return out, true
}

// deltaFast reads a ContentBlockDelta as delta reads its decoded form: the first of text,
// toolUse and reasoningContent present. encoding/json decodes every member, so each present
// one is checked for its type first.
func (d *streamDecoder) deltaFast(out []ir.Event, index int, text []byte) ([]ir.Event, bool) {
	var v [3]jsonscan.Span
	if !jsonw.MembersOf(text, deltaKeys, v[:]) {
		return out, false
	}
	var in [1]jsonscan.Span
	var rc [3]jsonscan.Span
	tu, rt := text[v[1].Start:v[1].End], text[v[2].Start:v[2].End]
	switch {
	case jsonw.Present(v[0]) && !jsonw.IsString(text[v[0].Start:v[0].End]),
		jsonw.Present(v[1]) && !stringMembers(tu, toolUseKeys, in[:]),
		jsonw.Present(v[2]) && !stringMembers(rt, reasoningKeys, rc[:]):
		return out, false
	}
	switch {
	case jsonw.Present(v[0]):
		if s, _ := d.strs.Str(text, v[0]); s != "" {
			out = append(out, ir.Event{Kind: ir.EvText, Text: s})
		}
	case jsonw.Present(v[1]):
		if b := d.blocks[index]; b != nil {
			if s, _ := d.strs.Str(tu, in[0]); s != "" {
				b.gotArgs = true
				out = append(out, ir.Event{Kind: ir.EvToolArgs, Index: b.tool, Text: s})
			}
		}
	case jsonw.Present(v[2]):
		kinds := [3]ir.EventKind{ir.EvReasoning, ir.EvSignature, ir.EvRedacted}
		for i, r := range rc {
			if s, _ := d.strs.Str(rt, r); s != "" {
				e := ir.Event{Kind: kinds[i], Text: s}
				if i > 0 {
					e.Format = SignatureFormat
				}
				if i == 2 {
					e.Text = redactedData(s)
				}
				out = append(out, e)
			}
		}
	}
	return out, true
}

// stringMembers reads an object whose members named in names must be strings (or null), as
// encoding/json decodes it into inDelta's structs; false otherwise.
func stringMembers(text []byte, names []string, vals []jsonscan.Span) bool {
	if !jsonw.MembersOf(text, names, vals) {
		return false
	}
	for _, v := range vals {
		if jsonw.Present(v) && !jsonw.IsString(text[v.Start:v.End]) {
			return false
		}
	}
	return true
}
