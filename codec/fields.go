package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// SetFields re-encodes a JSON object with some top-level fields replaced, keeping every other
// field byte for byte: how a same-format route gets the client's body with its own model id.
func SetFields(body []byte, set map[string]any) ([]byte, error) {
	fields, err := Fields(body)
	if err != nil {
		return nil, err
	}
	for k, v := range set {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fields[k] = b
	}
	return Marshal(fields)
}

// Fields splits a JSON object into its top-level members, each kept as it was written.
func Fields(body []byte) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, fmt.Errorf("the request body must be a JSON object")
	}
	return fields, nil
}

// Marshal is json.Marshal without HTML escaping, so a body passed through keeps the client's
// <, > and & as written (Claude Code's <system-reminder> blocks) rather than \u003c escapes.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
