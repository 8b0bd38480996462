package chat

import (
	"encoding/json"

	"github.com/modelgate/modelgate/codec/check"
)

// EmbeddingsRequest is an embeddings request kept raw, like Request.
type EmbeddingsRequest struct {
	Model  string
	fields map[string]json.RawMessage
}

// ParseEmbeddingsRequest checks model and input, and the dimensions and encoding_format asked for.
func ParseEmbeddingsRequest(body []byte) (*EmbeddingsRequest, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, invalid("", "the request body must be a JSON object: %s", jsonProblem(err))
	}
	r := &EmbeddingsRequest{fields: fields}
	if err := unmarshalField(fields, "model", &r.Model); err != nil || r.Model == "" {
		return nil, invalid("model", "model is required and must be a string")
	}
	raw, ok := fields["input"]
	if !ok {
		return nil, invalid("input", "input is required")
	}
	var one string
	var many []json.RawMessage
	switch {
	case json.Unmarshal(raw, &one) == nil:
		if one == "" {
			return nil, invalid("input", "input must not be empty")
		}
	case json.Unmarshal(raw, &many) == nil:
		if len(many) == 0 {
			return nil, invalid("input", "input must not be an empty array")
		}
	default:
		return nil, invalid("input", "input must be a string or an array")
	}
	if e := embeddingDimensions.Check(fields["dimensions"]); e != nil {
		return nil, e
	}
	if raw, ok := fields["encoding_format"]; ok && string(raw) != "null" {
		var format string
		if json.Unmarshal(raw, &format) != nil || format != "float" && format != "base64" {
			return nil, invalid("encoding_format", "encoding_format must be one of float, base64; got %s", check.Quote(raw))
		}
	}
	return r, nil
}

// embeddingDimensions is the range of the vector size a client may ask for.
var embeddingDimensions = check.Range{Param: "dimensions", Min: 1, Max: check.Unbounded, Integer: true}

// UpstreamBody is the body with the route's model id.
func (r *EmbeddingsRequest) UpstreamBody(upstreamModel string) []byte {
	out := make(map[string]json.RawMessage, len(r.fields))
	for k, v := range r.fields {
		out[k] = v
	}
	out["model"], _ = json.Marshal(upstreamModel)
	b, _ := json.Marshal(out)
	return b
}
