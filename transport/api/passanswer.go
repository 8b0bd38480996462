package api

import (
	"bytes"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/ir"
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

// contentDelta reports a frame that a same-format relay, once its client has the first byte,
// passes without decoding: a content delta of the route's format (ir.DeltaSkipper).
func contentDelta(format string, name, data []byte) bool {
	ds, ok := upstreamFormats[format].(ir.DeltaSkipper)
	return ok && ds.ContentDelta(name, data)
}
