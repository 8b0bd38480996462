package chat

import (
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestEmbeddingsRequestsAreCheckedUpFront: what an embeddings request may
// ask for is checked before any upstream is called, each refusal a 400 naming the field.
func TestEmbeddingsRequestsAreCheckedUpFront(t *testing.T) {
	cases := []struct {
		name, body, param, message string // param and message "" = accepted
	}{
		{"a string", `{"model":"e","input":"x"}`, "", ""},
		{"dimensions and a format", `{"model":"e","input":["x"],"dimensions":256,"encoding_format":"base64"}`, "", ""},
		{"no input", `{"model":"e"}`, "input", "input is required"},
		{"an empty array", `{"model":"e","input":[]}`, "input", "input must not be an empty array"},
		{"dimensions of 0", `{"model":"e","input":"x","dimensions":0}`, "dimensions", "dimensions must be an integer of at least 1; got 0"},
		{"fractional dimensions", `{"model":"e","input":"x","dimensions":1.5}`, "dimensions", "dimensions must be an integer of at least 1; got 1.5"},
		{"an unknown format", `{"model":"e","input":"x","encoding_format":"hex"}`, "encoding_format", `encoding_format must be one of float, base64; got "hex"`},
		{"a format of the wrong type", `{"model":"e","input":"x","encoding_format":1}`, "encoding_format", "encoding_format must be one of float, base64; got 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseEmbeddingsRequest([]byte(c.body))
			if c.message == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if e := checktest.Invalid(t, err, c.param); e.Message != c.message {
				t.Errorf("message %q, want %q", e.Message, c.message)
			}
		})
	}
}
