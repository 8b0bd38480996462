package codec

import (
	"bytes"
	"encoding/json"
)

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
