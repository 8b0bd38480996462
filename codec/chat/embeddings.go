package chat

import (
	"encoding/json"
	"strconv"

	"github.com/modelgate/modelgate/codec/check"
	"github.com/modelgate/modelgate/codec/jsonpatch"
)

// EmbeddingsRequest is an embeddings request kept raw, like Request.
type EmbeddingsRequest struct {
	Model string
	body  *jsonpatch.Object
}

// MaxEmbeddingInputs is the most items an input list may hold (the OpenAI API's limit).
const MaxEmbeddingInputs = 2048

// ParseEmbeddingsRequest checks model and input, and the dimensions and encoding_format asked for.
func ParseEmbeddingsRequest(body []byte) (*EmbeddingsRequest, error) {
	obj, err := jsonpatch.Scan(body)
	if err != nil {
		var fields map[string]json.RawMessage // decoded only to say why it is not an object
		return nil, invalid("", "the request body must be a JSON object: %s", jsonProblem(json.Unmarshal(body, &fields)))
	}
	r := &EmbeddingsRequest{body: obj}
	if err := unmarshalRaw(obj.Value("model"), &r.Model); err != nil || r.Model == "" {
		return nil, invalid("model", "model is required and must be a string")
	}
	raw := obj.Value("input")
	if raw == nil {
		return nil, invalid("input", "input is required")
	}
	if err := checkEmbeddingsInput(raw); err != nil {
		return nil, err
	}
	if e := embeddingDimensions.Check(obj.Value("dimensions")); e != nil {
		return nil, e
	}
	if raw := obj.Value("encoding_format"); raw != nil && string(raw) != "null" {
		var format string
		if json.Unmarshal(raw, &format) != nil || format != "float" && format != "base64" {
			return nil, invalid("encoding_format", "encoding_format must be one of float, base64; got %s", check.Quote(raw))
		}
	}
	return r, nil
}

// embeddingDimensions is the range of the vector size a client may ask for.
var embeddingDimensions = check.Range{Param: "dimensions", Min: 1, Max: check.Unbounded, Integer: true}

// Kinds of embeddings input item.
const (
	inputText   = "a string"
	inputToken  = "a token id"
	inputTokens = "a list of token ids"
)

// checkEmbeddingsInput accepts what the embeddings API embeds: a text, or a list of up to
// MaxEmbeddingInputs items all of one kind — texts, token ids, or lists of token ids — none
// empty. Anything else would only come back as the provider's 400.
func checkEmbeddingsInput(raw json.RawMessage) error {
	var one string
	var many []json.RawMessage
	switch {
	case json.Unmarshal(raw, &one) == nil:
		if one == "" {
			return invalid("input", "input must not be empty")
		}
		return nil
	case json.Unmarshal(raw, &many) != nil:
		return invalid("input", "input must be a string or an array")
	case len(many) == 0:
		return invalid("input", "input must not be an empty array")
	case len(many) > MaxEmbeddingInputs:
		return invalid("input", "input has %d items; at most %d are embedded in one request", len(many), MaxEmbeddingInputs)
	}
	first := embeddingsInputKind(many[0])
	for i, item := range many {
		param := "input[" + strconv.Itoa(i) + "]"
		switch kind := embeddingsInputKind(item); {
		case kind == "":
			return invalid(param, "%s must be a non-empty string, a token id or a non-empty list of token ids; got %s", param, check.Quote(item))
		case kind != first:
			return invalid(param, "%s is %s but input[0] is %s: the items of input are all of one kind", param, kind, first)
		}
	}
	return nil
}

// embeddingsInputKind is the kind of one input item, "" when it is none.
func embeddingsInputKind(item json.RawMessage) string {
	var text string
	var tokens []json.RawMessage
	switch {
	case isNull(item):
		return ""
	case json.Unmarshal(item, &text) == nil && text != "":
		return inputText
	case isTokenID(item):
		return inputToken
	case json.Unmarshal(item, &tokens) != nil || len(tokens) == 0:
		return ""
	}
	for _, t := range tokens {
		if !isTokenID(t) {
			return ""
		}
	}
	return inputTokens
}

// isTokenID reports whether raw is a whole number a vocabulary can hold.
func isTokenID(raw json.RawMessage) bool {
	var id uint32
	return !isNull(raw) && json.Unmarshal(raw, &id) == nil
}

// UpstreamBody is the body with the route's model id, every other byte the client's.
func (r *EmbeddingsRequest) UpstreamBody(upstreamModel string) []byte {
	return r.body.Apply(jsonpatch.Set("model", quote(upstreamModel)))
}
