package ir

import "testing"

// TestEachKindHasItsStatusAndTheStatusItsKind: the status a kind goes with, and that status
// read back as the same kind.
func TestEachKindHasItsStatusAndTheStatusItsKind(t *testing.T) {
	cases := []struct {
		kind   ErrorKind
		status int
	}{
		{ErrInvalidRequest, 400},
		{ErrAuthentication, 401},
		{ErrBilling, 402},
		{ErrPermission, 403},
		{ErrNotFound, 404},
		{ErrTooLarge, 413},
		{ErrRateLimit, 429},
		{ErrServer, 500},
		{ErrOverloaded, 503},
		{ErrTimeout, 504},
	}
	for _, c := range cases {
		if got := StatusOfKind(c.kind); got != c.status {
			t.Errorf("StatusOfKind(%s) = %d, want %d", c.kind, got, c.status)
		}
		if got := KindForStatus(c.status); got != c.kind {
			t.Errorf("KindForStatus(%d) = %s, want %s", c.status, got, c.kind)
		}
	}
}
