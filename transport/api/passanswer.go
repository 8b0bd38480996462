package api

import (
	"bytes"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// passWhole readies a same-format whole answer: the client's model in place of the
// upstream's and the usage read, in one scan (ir.WholeRelayer), not a decode.
func passWhole(format string, body []byte, model string) ([]byte, codec.Usage) {
	if rw, ok := upstreamFormats[format].(ir.WholeRelayer); ok {
		return rw.RelayWhole(body, model)
	}
	return nameModel(format, body, model), codec.Usage{}
}

// mayNameModel reports whether a stream frame can hold a member named model (or modelVersion):
// the word, or an escape that may spell it. A frame without either passes byte for byte
// without a scan (a content delta, most frames of a stream).
func mayNameModel(data []byte) bool {
	return bytes.Contains(data, []byte(`odel`)) || bytes.IndexByte(data, '\\') >= 0
}

// deltaEvents are, per route format, the stream events that carry only a piece of content: a
// text, reasoning or tool-argument delta. Once the client has its first byte (streamPass's
// out.started) the relay needs nothing from them but their bytes, so they are not decoded
// (the decoder's state they would change only shapes content events, which a same-format
// relay does not use after that). nameFirst says the format's decoder takes an event's kind
// from its SSE name before its data's type (messages), rather than the other way round.
var deltaEvents = map[string]struct {
	nameFirst bool
	kinds     []string
}{
	codec.FormatMessages: {true, []string{"content_block_delta"}},
	codec.FormatResponses: {false, []string{"response.output_text.delta", "response.refusal.delta",
		"response.reasoning_summary_text.delta", "response.reasoning_text.delta",
		"response.function_call_arguments.delta", "response.custom_tool_call_input.delta"}},
}

// contentDelta reports a frame of one of the format's deltaEvents that is a well-formed JSON
// object (a garbled one goes to the decoder, which reports it). Its kind is found as the
// decoder finds it: the SSE name or the last type member, in the format's order. Only the
// grammar and the kind are checked: a delta whose members have the wrong JSON types is relayed
// as the upstream sent it, as a chat delta is.
func contentDelta(format string, name, data []byte) bool {
	de, ok := deltaEvents[format]
	if !ok {
		return false
	}
	var typ []byte
	err := jsonscan.Members(data, func(k []byte, v jsonscan.Span) bool {
		if jsonscan.KeyIs(k, "type") {
			typ = data[v.Start:v.End]
		}
		return true
	})
	if err != nil || len(typ) > 0 && typ[0] != '"' {
		return false // the decoder refuses it
	}
	kind := name
	if len(typ) > 2 && typ[0] == '"' && (!de.nameFirst || len(name) == 0) {
		kind = typ[1 : len(typ)-1] // escapes are not resolved: such a kind is decoded instead
	}
	for _, k := range de.kinds {
		if string(kind) == k {
			return true
		}
	}
	return false
}
