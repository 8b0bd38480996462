package gemini

import (
	"bytes"
	"encoding/json"
)

// RewriteModelVersion sets the top-level modelVersion of a GenerateContentResponse (a whole
// answer or one stream chunk) to model, whatever its spacing or value, leaving every other byte
// as it was: how a gemini client on a gemini route sees the model it asked for. A body that is
// not a JSON object, or has no modelVersion, is returned unchanged.
func RewriteModelVersion(body []byte, model string) []byte {
	start, end, ok := topLevelMember(body, "modelVersion")
	if !ok {
		return body
	}
	value := marshal(model)
	out := make([]byte, 0, len(body)-(end-start)+len(value))
	out = append(out, body[:start]...)
	out = append(out, value...)
	return append(out, body[end:]...)
}

// topLevelMember finds the byte range of the value of a top-level member of a JSON object.
func topLevelMember(body []byte, name string) (start, end int, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		var value json.RawMessage
		// InputOffset is just past the key; the value starts after the colon and spaces.
		from := int(dec.InputOffset())
		if err := dec.Decode(&value); err != nil {
			return 0, 0, false
		}
		if key != name {
			continue
		}
		to := int(dec.InputOffset())
		i := bytes.IndexByte(body[from:to], ':')
		if i < 0 {
			return 0, 0, false
		}
		from += i + 1
		for from < to && isSpace(body[from]) {
			from++
		}
		return from, to, true
	}
	return 0, 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
