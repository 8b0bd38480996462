package accounts

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// openStore opens a real Pebble store in dir (a fresh one when dir is ""), closed at the
// test's end.
func openStore(t *testing.T, dir string) (*persistence.Store, string) {
	t.Helper()
	if dir == "" {
		dir = filepath.Join(t.TempDir(), "pebble")
	}
	s, err := persistence.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// newReplica is a fresh store with shard's state machine over it, opened.
func newReplica(t *testing.T, shard uint64) (*StateMachine, *persistence.Store) {
	t.Helper()
	s, _ := openStore(t, "")
	sm := NewStateMachine(s, shard)
	if applied, err := sm.Open(); err != nil || applied != 0 {
		t.Fatalf("Open of a fresh store = %d, %v", applied, err)
	}
	return sm, s
}

// snapshot is the shard's whole state as its snapshot writes it: what replicas must agree
// on byte for byte (the shard's namespace and its accounts' grants, log, keys and records).
func snapshot(t *testing.T, sm *StateMachine) []byte {
	t.Helper()
	v, err := sm.PrepareSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := sm.SaveSnapshot(v, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// batch is a Batcher proposal of cmds.
func batch(t *testing.T, cmds ...Command) []byte {
	t.Helper()
	raw := make([][]byte, len(cmds))
	for i := range cmds {
		b, err := cmds[i].Encode()
		if err != nil {
			t.Fatal(err)
		}
		raw[i] = b
	}
	b, err := msgpack.Marshal(raw) // as the Batcher packs a proposal
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// entries numbers proposals as log entries from first on.
func entries(first uint64, proposals ...[]byte) []cluster.Entry {
	out := make([]cluster.Entry, len(proposals))
	for i, p := range proposals {
		out[i] = cluster.Entry{Index: first + uint64(i), Cmd: p}
	}
	return out
}

// apply applies es to sm and returns each entry's decoded results.
func apply(t *testing.T, sm *StateMachine, es []cluster.Entry) [][]step.Result {
	t.Helper()
	if err := sm.Update(es); err != nil {
		t.Fatal(err)
	}
	out := make([][]step.Result, len(es))
	for i, e := range es {
		if e.Result == nil {
			continue
		}
		raw, err := cluster.DecodeResults(e.Result, countOf(t, e.Cmd))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range raw {
			var r step.Result
			if err := r.Decode(b); err != nil {
				t.Fatal(err)
			}
			out[i] = append(out[i], r)
		}
	}
	return out
}

func countOf(t *testing.T, proposal []byte) int {
	cmds, _ := cluster.DecodeBatch(proposal) // not a batch: no results
	return len(cmds)
}

// logOf is every request log entry of account on s, as "request id cost" lines, in order.
func logOf(t *testing.T, s *persistence.Store, account string) []string {
	t.Helper()
	page, err := s.QueryLog(persistence.LogQuery{Account: account, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range page.Entries {
		out = append(out, fmt.Sprintf("%s %d", e.RequestID, e.Cost))
	}
	return out
}

// logEntry is a request log entry of account at time t (unix ns).
func logEntry(account, rid string, t int64) *persistence.LogEntry {
	return &persistence.LogEntry{RequestID: rid, Time: t, AccountID: account, KeyID: "k1", Model: "m", Route: "r", Status: 200}
}
