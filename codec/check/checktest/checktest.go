// Package checktest holds what the codecs' validation and fuzz tests share.
package checktest

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/codec/ir"
)

// Invalid is err as the client's 400 on param; the test stops when it is anything else.
func Invalid(tb testing.TB, err error, param string) *ir.Error {
	tb.Helper()
	var e *ir.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Kind != ir.ErrInvalidRequest || e.Param != param {
		tb.Fatalf("got %#v, want a 400 on %q", err, param)
	}
	return e
}

// PNG is a whole 1×1 PNG in base64: an image every check takes.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

// Refusal is a request a decoder must refuse: a 400 on Param saying Message.
type Refusal = struct{ Name, Body, Param, Message string }

// Refuses runs each case through every decoder: each must answer the 400 on its param, which
// encode renders exactly as envelope(param, message) says the format writes it.
func Refuses(t *testing.T, cases []Refusal, encode func(*ir.Error) []byte, envelope func(param, message string) string, decoders ...func([]byte) error) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			for _, decode := range decoders {
				e := Invalid(t, decode([]byte(c.Body)), c.Param)
				if got, want := string(encode(e)), envelope(c.Param, c.Message); got != want {
					t.Errorf("\n got %s\nwant %s", got, want)
				}
			}
		})
	}
}

// Quoted is s as a JSON string.
func Quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Recorded is one of the simulator's recorded exchanges (testdata/sim/README.md) as a codec
// package's test reads it; of a request (".request.json"), the body that was sent.
func Recorded(tb testing.TB, name string) []byte {
	tb.Helper()
	raw, err := os.ReadFile("../../testdata/sim/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	if !strings.HasSuffix(name, ".request.json") {
		return raw
	}
	var req struct{ Body json.RawMessage }
	if err := json.Unmarshal(raw, &req); err != nil {
		tb.Fatal(err)
	}
	return req.Body
}
