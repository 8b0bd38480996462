package accounts

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// Retention in a cluster is a replicated command: replicas applying the same log, however
// grouped into Updates, delete the same entries and agree byte for byte; entries younger
// than the cutoff stay, with their totals, and a prune past its cap says so.
func TestAReplicatedLogPruneDeletesTheSameOldEntriesOnEveryReplica(t *testing.T) {
	var cmds [][]byte
	for h := 72; h >= 1; h-- {
		for _, acct := range []string{"acct-a", "acct-b"} {
			now := t0 - int64(h)*int64(time.Hour)
			rid := fmt.Sprintf("req_%s%020x", acct[5:]+"0", h) // gateway ids
			cmds = append(cmds, batch(t, Command{ID: NewCommandID(), Account: acct,
				Step: step.Command{Kind: step.Record, Key: "k1", Counts: true, Now: now, Plan: plan, Log: logEntry(acct, rid, now)}}))
		}
	}
	before := t0 - int64(24*time.Hour)
	cmds = append(cmds, batch(t, Command{ID: NewCommandID(), Prune: &LogPrune{Before: before}}))
	es := entries(1, cmds...)
	a, sa := newReplica(t, 3)
	b, _ := newReplica(t, 3)
	applied := slices.Clone(es)
	apply(t, a, applied)
	for i := range es {
		apply(t, b, slices.Clone(es[i:i+1]))
	}
	var res PruneResult
	if err := msgpack.Unmarshal(firstResult(t, applied[len(applied)-1]), &res); err != nil || res.Deleted != 2*48 || res.More {
		t.Fatalf("prune result %+v, %v; want 96 deleted (48 an account), nothing more", res, err)
	}
	if !bytes.Equal(snapshot(t, a), snapshot(t, b)) {
		t.Fatal("replicas differ after the prune")
	}
	cutoff := persistence.LogCutoff(before)
	for _, acct := range []string{"acct-a", "acct-b"} {
		page, err := sa.QueryLog(persistence.LogQuery{Account: acct})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) != 24 || page.Entries[0].Time < cutoff {
			t.Errorf("%s keeps %d entries from %d, want the 24 from the cutoff %d", acct, len(page.Entries), page.Entries[0].Time, cutoff)
		}
		for _, e := range page.Entries {
			if _, err := sa.LogEntry(acct, e.RequestID); err != nil {
				t.Errorf("LogEntry(%s) of a kept entry: %v", e.RequestID, err)
			}
		}
	}
	// A prune past its cap deletes up to it and says more remain; the next one the rest.
	maxPrunePerCommand = 10
	t.Cleanup(func() { maxPrunePerCommand = 8192 })
	later := t0 - int64(12*time.Hour) // 12 entries of each account remain older than it
	capped := entries(uint64(len(es)+1), batch(t, Command{ID: NewCommandID(), Prune: &LogPrune{Before: later}}),
		batch(t, Command{ID: NewCommandID(), Prune: &LogPrune{Before: later}}),
		batch(t, Command{ID: NewCommandID(), Prune: &LogPrune{Before: later}}))
	apply(t, a, capped)
	for i, want := range []PruneResult{{Deleted: 10, More: true}, {Deleted: 10, More: true}, {Deleted: 4}} {
		var got PruneResult
		if err := msgpack.Unmarshal(firstResult(t, capped[i]), &got); err != nil || got != want {
			t.Errorf("capped prune %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
	es = append(es, capped...)
	// A prune with nothing older deletes nothing; one without a cutoff is refused.
	more := entries(uint64(len(es)+1), batch(t, Command{ID: NewCommandID(), Prune: &LogPrune{Before: before}}),
		batch(t, Command{ID: NewCommandID(), Prune: &LogPrune{}}))
	apply(t, a, more)
	for i, want := range []PruneResult{{}, {Fail: TaskInvalid}} {
		var got PruneResult
		if err := msgpack.Unmarshal(firstResult(t, more[i]), &got); err != nil || got != want {
			t.Errorf("prune %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
}

// firstResult is the encoded result of an applied entry's first command.
func firstResult(t *testing.T, e cluster.Entry) []byte {
	t.Helper()
	raw, err := cluster.DecodeResults(e.Result, countOf(t, e.Cmd))
	if err != nil || len(raw) == 0 {
		t.Fatalf("results of entry %d: %v", e.Index, err)
	}
	return raw[0]
}

// Over a real three-node cluster: a node that leads nothing proposes the prune, and every
// node's store keeps exactly the entries from the cutoff on, byte for byte alike.
func TestALogPruneProposedOverTheClusterAppliesOnEveryNode(t *testing.T) {
	c := newTestCluster(t, 1, time.Now)
	ctx := context.Background()
	n := c.nodes[0]
	now := time.Now()
	for h := 6; h >= 1; h-- {
		rid := fmt.Sprintf("req_%024x", h)
		e := &persistence.LogEntry{RequestID: rid, Time: now.Add(-time.Duration(h) * 24 * time.Hour).UnixNano(), KeyID: "k1", Model: "m", Route: "r", Status: 200}
		if err := untilAnswered(func() error { _, err := n.quota.Charge(ctx, "acct-p", paidPlan, 1, rid, e); return err }); err != nil {
			t.Fatal(err)
		}
	}
	proposer := c.nodes[0]
	if l := c.leader(firstShard); l == proposer {
		proposer = c.nodes[1]
	}
	before := now.Add(-3*24*time.Hour - time.Hour).UnixNano() // 4, 5 and 6 days old go
	deleted, err := proposer.owner.PruneLog(ctx, firstShard, before)
	if err != nil || deleted != 3 {
		t.Fatalf("PruneLog = %d, %v; want 3", deleted, err)
	}
	c.converged()
	for _, n := range c.running() {
		if got := logOf(t, n.store, "acct-p"); len(got) != 3 || !strings.HasPrefix(got[0], fmt.Sprintf("req_%024x ", 3)) {
			t.Errorf("node %d keeps %q; want the 3 youngest", n.id, got)
		}
	}
}
