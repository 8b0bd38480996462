package codec

import (
	"encoding/json"
	"fmt"
)

// SetFields re-encodes a JSON object with some top-level fields replaced, keeping every other
// field byte for byte: how a same-format route gets the client's body with its own model id.
func SetFields(body []byte, set map[string]any) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("the request body must be a JSON object")
	}
	for k, v := range set {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fields[k] = b
	}
	return json.Marshal(fields)
}
