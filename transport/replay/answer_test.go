package replay

import (
	"bytes"
	"encoding/json"
	"strings"
)

// answer is an answer in the suite's canonical terms, whatever format carried it.
type answer struct {
	Model      string
	Text       string
	Reasoning  string
	Signatures []string // reasoning signatures: messages thinking signatures, gemini text-part thoughtSignatures
	SigFormat  string   // the format that issued them
	Calls      []toolCall
	Finish     string // stop | length | tool_calls | content_filter
	NativeStop string // the upstream's own stop value (for the same format)
	Usage      *usage // nil when the recording carries none
	Err        *upstreamError
}

// toolCall is one tool call; Args is canonical JSON (sorted keys, compact).
type toolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Args      string `json:"arguments"`
	Signature string `json:"-"` // a gemini thoughtSignature on the call
}

// usage in canonical terms: Input includes cache reads and writes, Output includes reasoning.
type usage struct {
	Input      int64 `json:"input"`
	CacheRead  int64 `json:"cache_read"`
	CacheWrite int64 `json:"cache_write"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
}

// upstreamError is an error the recording carries, as an HTTP status or in the stream.
type upstreamError struct {
	Status     int     // HTTP status; 0 for an error inside a 200 stream
	Message    string  // the provider's message
	Code       string  // the provider's code or type
	Billing    bool    // a billing refusal (insufficient_quota): the client must not see the text
	RetryAfter float64 // seconds the provider asked to wait (Retry-After or RetryInfo)
}

// Generic JSON access, so the reference readers depend on no codec of the gateway.
type obj = map[string]any

func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, path ...string) string {
	s, _ := get(v, path...).(string)
	return s
}

func num(v any, path ...string) int64 {
	n, _ := get(v, path...).(json.Number)
	i, _ := n.Int64()
	return i
}

func has(v any, path ...string) bool { return get(v, path...) != nil }

func arr(v any, path ...string) []any {
	a, _ := get(v, path...).([]any)
	return a
}

// canonicalJSON re-encodes JSON text with sorted keys; empty or blank text is {}.
func canonicalJSON(s string) string {
	if strings.TrimSpace(s) == "" {
		return "{}"
	}
	v, err := decode([]byte(s))
	if err != nil {
		return "<invalid JSON " + s + ">"
	}
	return canonicalValue(v)
}

func canonicalValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}
