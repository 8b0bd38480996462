// Package checktest holds what the codecs' validation tests share.
package checktest

import (
	"errors"
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
