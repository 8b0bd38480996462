package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/engine"
)

type fakeRaft struct {
	observe func(op string, d time.Duration)
}

func (fakeRaft) ID() uint64 { return 2 }
func (fakeRaft) Stats() engine.Stats {
	return engine.Stats{Proposals: 7, ProposalsForwarded: 3, ProposalsFailed: 1, Reads: 5, ReadsFailed: 0, LeaderChanges: 4,
		SnapshotsCreated: 2, SnapshotsSent: 1, SnapshotsReceived: 0, SnapshotsRecovered: 1, ConnectionsFailed: 6}
}
func (fakeRaft) Progress() []engine.Progress {
	return []engine.Progress{{Shard: 0, Leader: 2, Applied: 40, LastIndex: 42}, {Shard: 1, Leader: 0, Applied: 9, LastIndex: 9}}
}
func (f *fakeRaft) ObserveLatency(o func(op string, d time.Duration)) { f.observe = o }

func TestRaftMetricsExposition(t *testing.T) {
	m := New()
	src := &fakeRaft{}
	m.Raft(src)
	src.observe("propose", 3*time.Millisecond)
	src.observe("read", 700*time.Microsecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, line := range []string{
		"modelgate_raft_proposals_total 7",
		"modelgate_raft_proposals_forwarded_total 3",
		"modelgate_raft_proposals_failed_total 1",
		"modelgate_raft_reads_total 5",
		"modelgate_raft_reads_failed_total 0",
		"modelgate_raft_leader_changes_total 4",
		"modelgate_raft_connection_failures_total 6",
		`modelgate_raft_snapshots_total{event="created"} 2`,
		`modelgate_raft_snapshots_total{event="sent"} 1`,
		`modelgate_raft_snapshots_total{event="received"} 0`,
		`modelgate_raft_snapshots_total{event="recovered"} 1`,
		`modelgate_raft_applied_index{shard="0"} 40`,
		`modelgate_raft_unapplied_entries{shard="0"} 2`,
		`modelgate_raft_is_leader{shard="0"} 1`,
		`modelgate_raft_leaderless{shard="0"} 0`,
		`modelgate_raft_applied_index{shard="1"} 9`,
		`modelgate_raft_unapplied_entries{shard="1"} 0`,
		`modelgate_raft_is_leader{shard="1"} 0`,
		`modelgate_raft_leaderless{shard="1"} 1`,
		`modelgate_raft_request_seconds_bucket{op="propose",le="0.002"} 0`,
		`modelgate_raft_request_seconds_bucket{op="propose",le="0.005"} 1`,
		`modelgate_raft_request_seconds_count{op="propose"} 1`,
		`modelgate_raft_request_seconds_bucket{op="read",le="0.001"} 1`,
		`modelgate_raft_request_seconds_count{op="read"} 1`,
	} {
		if !strings.Contains(string(body), "\n"+line+"\n") {
			t.Errorf("no line %q in the exposition", line)
		}
	}
}
