//go:build faults

package clustertest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/internal/supervise"
)

// TestClusterFaultLoopsOfANodeResumeAfterAPanic: every node starts with a panic armed in its
// account shards' batcher loop and in its leader-event delivery (supervise.PanicAtEnv, the
// faults build). Each node panics once at each — at its first leader change, at its first
// batch — and goes on serving: every shard gets a leader every node hears of, a chat call
// through each node is answered 200, and on every node the account's window and log count
// exactly the calls answered.
func TestClusterFaultLoopsOfANodeResumeAfterAPanic(t *testing.T) {
	wheres := []string{"cluster.batcher", "engine.leader-events"}
	c := New(t, Options{Env: []string{supervise.PanicAtEnv + "=" + strings.Join(wheres, ",")}})
	c.StartAll()
	acct, secret := newAccountKey(t, c.Nodes[0], Plan)
	answered := 0
	for _, n := range c.Nodes {
		for range 2 {
			if status, b := n.Chat(secret); status != http.StatusOK {
				t.Fatalf("node %d: chat: %d %s", n.ID, status, b)
			}
			answered++
		}
	}
	for _, n := range c.Nodes {
		for _, w := range wheres {
			if got := n.Logged(`"where":"` + w + `"`); got != 1 {
				t.Errorf("node %d: %d panics logged at %s, want 1", n.ID, got, w)
			}
		}
		var u struct {
			Totals struct{ Count int64 } `json:"totals"`
		}
		waitLog(t, n, acct, int64(answered), &u)
		var q struct {
			Window struct {
				Used float64 `json:"used"`
			} `json:"window"`
			InFlight int `json:"in_flight"`
		}
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/quota", &q)
		if u.Totals.Count != int64(answered) || q.Window.Used != float64(answered) || q.InFlight != 0 {
			t.Errorf("node %d: logged %d, window used %v, in flight %d; want %d, %d, 0", n.ID, u.Totals.Count, q.Window.Used, q.InFlight, answered, answered)
		}
	}
}
