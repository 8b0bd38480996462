package chat

import (
	"encoding/json"
)

// EmbeddingsRequest is an embeddings request kept raw, like Request.
type EmbeddingsRequest struct {
	Model  string
	fields map[string]json.RawMessage
}

// ParseEmbeddingsRequest checks model and input.
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
	return r, nil
}

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
