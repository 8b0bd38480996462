package images

import (
	"errors"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// TestImageErrorsSayWhatToFix: a bad image request is a 400 naming the field in the client's
// words, never Go's ("cannot unmarshal … into Go struct field").
func TestImageErrorsSayWhatToFix(t *testing.T) {
	cases := []struct{ body, param, message string }{
		{`{"model":7,"prompt":"p"}`, "", "the request body must be a JSON object of the images format: model must be a string, not number"},
		{`{"model":"m","prompt":"p","n":"two"}`, "", "the request body must be a JSON object of the images format: n must be an integer, not string"},
		{`{"model":"m","prompt":"p"`, "", "the request body must be a JSON object of the images format: it is not valid JSON (unexpected end of JSON input at byte 25)"},
		{`{"model":"m","prompt":"p","n":2}`, "n", "n must be 1: one image per request"},
		{`{"model":"m","prompt":"p","response_format":"png"}`, "response_format", `response_format "png" must be url or b64_json`},
		{`{"model":"m","prompt":"p","size":"big"}`, "size", `size "big" must be WIDTHxHEIGHT, for example 2048x2048`},
	}
	for _, c := range cases {
		_, err := DecodeRequest([]byte(c.body))
		var e *ir.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Param != c.param || e.Message != c.message {
			t.Errorf("%s: got %#v\nwant param %q: %q", c.body, err, c.param, c.message)
		}
	}
}
