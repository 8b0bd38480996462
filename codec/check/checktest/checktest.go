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
