package accounts

import (
	"bytes"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/persistence"
)

// upstreamCosts is every log entry of account on s as its upstream cost, in order.
func upstreamCosts(t *testing.T, s *persistence.Store, account string) []int64 {
	t.Helper()
	page, err := s.QueryLog(persistence.LogQuery{Account: account, Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range page.Entries {
		out = append(out, e.UpstreamCost)
	}
	return out
}

// The request log's upstream cost (the serving route's real cost) travels in the
// shard's log as the command's entry carries it, and a snapshot recovered on another replica
// holds it: one of its own, one equal to the list cost, and 0 (a free route).
func TestALogEntrysUpstreamCostSurvivesTheShardsLogAndSnapshots(t *testing.T) {
	want := []int64{4_000_000, 9_000_000, 0}
	var cmds []Command
	for i, up := range want {
		e := logEntry("acct", "req-"+string(rune('a'+i)), t0+int64(i))
		e.ListCost, e.UpstreamCost = 9_000_000, up
		cmds = append(cmds, Command{ID: "rec-" + string(rune('a'+i)), Account: "acct", Step: step.Command{Kind: step.Record, Now: t0 + int64(i), Key: "k1", Log: e}})
	}
	for i := range cmds {
		raw, err := cmds[i].Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeCommand(raw)
		if err != nil || got.Step.Log == nil || *got.Step.Log != *cmds[i].Step.Log {
			t.Fatalf("command %d decoded as %+v, %v; want its entry %+v", i, got.Step.Log, err, *cmds[i].Step.Log)
		}
	}
	a, sa := newReplica(t, 2)
	apply(t, a, entries(1, batch(t, cmds...)))
	if got := upstreamCosts(t, sa, "acct"); !slices.Equal(got, want) {
		t.Fatalf("upstream costs applied = %v, want %v", got, want)
	}
	snap := snapshot(t, a)
	b, sb := newReplica(t, 2)
	if err := b.RecoverFromSnapshot(bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
	if got := upstreamCosts(t, sb, "acct"); !slices.Equal(got, want) {
		t.Fatalf("upstream costs recovered = %v, want %v", got, want)
	}
}
