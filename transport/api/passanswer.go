package api

import (
	"bytes"

	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/gemini"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/messages"
	"github.com/modelgate/modelgate/codec/responses"
)

// wholeAnswer is where a route format's whole answer names its model and reports its usage
// (top-level members both), and how that usage is read.
type wholeAnswer struct {
	model, usage string
	read         func(raw []byte) (codec.Usage, bool)
}

var wholeAnswers = map[string]wholeAnswer{
	codec.FormatMessages:  {"model", "usage", messages.UsageOf},
	codec.FormatResponses: {"model", "usage", responses.UsageOf},
	codec.FormatGemini:    {"modelVersion", "usageMetadata", gemini.UsageOf},
}

// passWhole readies a same-format whole answer in one scan of its members (codec/jsonpatch):
// the client's model written in place of the upstream's, the usage read from its member
// alone. An answer without a model member, or that is not a JSON object, is passed as it is.
func passWhole(format string, body []byte, model string) ([]byte, codec.Usage) {
	wa, ok := wholeAnswers[format]
	if !ok {
		return nameModel(format, body, model), codec.Usage{}
	}
	obj, err := jsonpatch.Scan(body)
	if err != nil {
		return body, codec.Usage{}
	}
	u, _ := wa.read(obj.Value(wa.usage))
	if obj.Value(wa.model) == nil {
		return body, u
	}
	m, _ := codec.Marshal(model)
	return obj.Apply(jsonpatch.Set(wa.model, m)), u
}

// mayNameModel reports whether a stream frame can hold a member named model (or modelVersion):
// the word, or an escape that may spell it. A frame without either passes byte for byte
// without a scan (a content delta, most frames of a stream).
func mayNameModel(data []byte) bool {
	return bytes.Contains(data, []byte(`odel`)) || bytes.IndexByte(data, '\\') >= 0
}
