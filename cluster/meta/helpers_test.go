package meta

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// openStore opens a real Pebble store in a fresh directory, closed at the test's end.
func openStore(t *testing.T) (*persistence.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "pebble")
	s, err := persistence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// newReplica is a fresh store with a state machine over it, opened.
func newReplica(t *testing.T) (*StateMachine, *persistence.Store) {
	t.Helper()
	s, _ := openStore(t)
	sm := NewStateMachine(s)
	if applied, err := sm.Open(); err != nil || applied != 0 {
		t.Fatalf("Open of a fresh store = %d, %v", applied, err)
	}
	return sm, s
}

// scan is the whole metadata key space and the state machine's keys, one "key=value" each
// (quoted), in key order: what two replicas must agree on byte for byte.
func scan(t *testing.T, s *persistence.Store) []string {
	t.Helper()
	v, err := s.ViewMeta(rawPrefixes...)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	var out []string
	if err := v.Scan(func(k, val []byte) error {
		out = append(out, fmt.Sprintf("%q=%q", k, val))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// entries numbers cmds as log entries from first on.
func entries(first uint64, cmds ...[]byte) []cluster.Entry {
	out := make([]cluster.Entry, len(cmds))
	for i, c := range cmds {
		out[i] = cluster.Entry{Index: first + uint64(i), Cmd: c}
	}
	return out
}

// enc encodes a command, failing the test on error.
func enc(t *testing.T, c Command) []byte {
	t.Helper()
	b, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// result decodes an entry's Result.
func result(t *testing.T, e cluster.Entry) Result {
	t.Helper()
	if e.Result == nil {
		t.Fatalf("entry %d has no result", e.Index)
	}
	r, err := DecodeResult(e.Result)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// update applies es to sm, failing the test on error.
func update(t *testing.T, sm *StateMachine, es []cluster.Entry) []cluster.Entry {
	t.Helper()
	if err := sm.Update(es); err != nil {
		t.Fatal(err)
	}
	return es
}
