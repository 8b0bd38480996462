package accounts

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/cluster"
	"github.com/modelgate/modelgate/persistence"
)

// BenchmarkApplyCharges is a replica's apply of charges as a shard's log carries them: each
// entry a proposal of 8 commands for 8 of 1,024 accounts, admissions and then their paid
// settles with a request-log entry. It reports µs per applied command (what every replica
// pays for each step of the cluster).
func BenchmarkApplyCharges(b *testing.B) {
	const accounts, perProposal = 1024, 8
	s, err := persistence.Open(filepath.Join(b.TempDir(), "pebble"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	sm := NewStateMachine(s, 1)
	if _, err := sm.Open(); err != nil {
		b.Fatal(err)
	}
	plan := step.Plan{WindowRequests: 1 << 40, WeeklyRequests: 1 << 40, BurstRPM: 1 << 20}
	t0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC).UnixNano()
	// proposal n: round r = n / (2·accounts/perProposal); the first half of a round admits
	// every account (its reservation r+1), the second settles them.
	perRound := 2 * accounts / perProposal
	proposal := func(n int) []byte {
		r, i := n/perRound, n%perRound
		settle := i >= perRound/2
		first := (i % (perRound / 2)) * perProposal
		raw := make([][]byte, perProposal)
		for j := range raw {
			acct := fmt.Sprintf("acct_%04d", first+j)
			now := t0 + int64(n)*int64(time.Millisecond)
			c := Command{ID: NewCommandID(), Account: acct,
				Step: step.Command{Kind: step.Admit, Now: now, Plan: plan, Key: "key_1", Units: 1000, Amount: 400, TTL: int64(time.Hour), Node: 1, Inc: 7}}
			if settle {
				rid := fmt.Sprintf("req_%d_%d", r, first+j)
				c.Step = step.Command{Kind: step.Settle, Now: now, ID: uint64(r + 1), Counts: true, Amount: 250,
					Log: &persistence.LogEntry{RequestID: rid, Time: now, AccountID: acct, KeyID: "key_1", Model: "claude-sonnet-4", Route: "anthropic",
						Status: 200, InputTokens: 1200, OutputTokens: 300}}
			}
			enc, err := c.Encode()
			if err != nil {
				b.Fatal(err)
			}
			raw[j] = enc
		}
		out, err := msgpack.Marshal(raw)
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	const ahead = 512
	queue := make([][]byte, 0, ahead)
	next := 0
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		if len(queue) == 0 {
			b.StopTimer()
			for range ahead {
				queue = append(queue, proposal(next))
				next++
			}
			b.StartTimer()
		}
		if err := sm.Update([]cluster.Entry{{Index: uint64(n + 1), Cmd: queue[0]}}); err != nil {
			b.Fatal(err)
		}
		queue = queue[1:]
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*perProposal), "µs/apply")
}
