package gemini

import (
	"github.com/modelgate/modelgate/codec"
	"github.com/modelgate/modelgate/codec/jsonpatch"
	"github.com/modelgate/modelgate/codec/jsonscan"
)

// RewriteModelVersion sets the top-level modelVersion of a GenerateContentResponse (a whole
// answer or one stream chunk) to model, whatever its spacing or value, leaving every other byte
// as it was: how a gemini client on a gemini route sees the model it asked for. A body that is
// not a JSON object, or has no modelVersion, is returned unchanged.
func RewriteModelVersion(body []byte, model string) []byte {
	out, _ := jsonscan.Replace(body, marshal(model), []string{"modelVersion"})
	return out
}

// RewriteModel implements ir.ModelRewriter: a same-format relay names the client's model.
func (format) RewriteModel(data []byte, model string) []byte { return RewriteModelVersion(data, model) }

// UsageOf normalizes a usageMetadata object, decoding nothing else: a same-format relay bills
// from it.
func UsageOf(raw []byte) (codec.Usage, bool) {
	return codec.UsageFrom(raw, (*usageMetadata).usage)
}

// RelayWhole implements ir.WholeRelayer: the modelVersion and usageMetadata of a whole
// GenerateContentResponse.
func (format) RelayWhole(body []byte, model string) ([]byte, codec.Usage) {
	out, raw := jsonpatch.Answer(body, "modelVersion", marshal(model), "usageMetadata")
	u, _ := UsageOf(raw)
	return out, u
}
