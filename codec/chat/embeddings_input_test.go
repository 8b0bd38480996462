package chat

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/check/checktest"
)

// TestEmbeddingsRequestIsWhatTheAPIEmbeds (the embeddings fuzzer's property): input is a text
// or a list of texts, token ids or token-id lists, one kind, none empty; encoding_format and
// dimensions are the API's. Anything else is a 400 naming it.
func TestEmbeddingsRequestIsWhatTheAPIEmbeds(t *testing.T) {
	cases := []struct{ body, param, message string }{
		{`{"model":"e","input":"hi"}`, "", ""},
		{`{"model":"e","input":["a","b"],"encoding_format":"base64","dimensions":8}`, "", ""},
		{`{"model":"e","input":[1,2,3]}`, "", ""},
		{`{"model":"e","input":[[1,2],[3]],"encoding_format":null}`, "", ""},
		{`{"input":"hi"}`, "model", "model is required and must be a string"},
		{`{"model":"e"}`, "input", "input is required"},
		{`{"model":"e","input":""}`, "input", "input must not be empty"},
		{`{"model":"e","input":[]}`, "input", "input must not be an empty array"},
		{`{"model":"e","input":{"text":"a"}}`, "input", "input must be a string or an array"},
		{`{"model":"e","input":["a",null]}`, "input[1]", "input[1] must be a non-empty string, a token id or a non-empty list of token ids; got null"},
		{`{"model":"e","input":["a",""]}`, "input[1]", `input[1] must be a non-empty string, a token id or a non-empty list of token ids; got ""`},
		{`{"model":"e","input":[[1,-2]]}`, "input[0]", "input[0] must be a non-empty string, a token id or a non-empty list of token ids; got [1,-2]"},
		{`{"model":"e","input":[[]]}`, "input[0]", "input[0] must be a non-empty string, a token id or a non-empty list of token ids; got []"},
		{`{"model":"e","input":["a",1]}`, "input[1]", "input[1] is a token id but input[0] is a string: the items of input are all of one kind"},
		{`{"model":"e","input":[` + strings.Repeat(`"a",`, MaxEmbeddingInputs) + `"a"]}`, "input", "input has 2049 items; at most 2048 are embedded in one request"},
		{`{"model":"e","input":"a","encoding_format":"int8"}`, "encoding_format", `encoding_format must be one of float, base64; got "int8"`},
		{`{"model":"e","input":"a","encoding_format":1}`, "encoding_format", "encoding_format must be one of float, base64; got 1"},
		{`{"model":"e","input":"a","dimensions":0}`, "dimensions", "dimensions must be an integer of at least 1; got 0"},
	}
	for _, c := range cases {
		_, err := ParseEmbeddingsRequest([]byte(c.body))
		if c.param == "" && c.message == "" {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		if e := checktest.Invalid(t, err, c.param); e.Message != c.message {
			t.Errorf("%.60s: %q\nwant %q", c.body, e.Message, c.message)
		}
	}
}
