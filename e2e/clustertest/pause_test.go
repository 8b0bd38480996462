package clustertest

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestPausedMetadataLeaderStepsDownAndCatchesUp: the metadata shard's leader is
// frozen with SIGSTOP for 5 s. The two others elect a new leader and calls through them go
// on; after SIGCONT the paused node follows the new leader (never two leaders of a shard at
// one term, as every node's status API reports them), catches up and answers again.
func TestPausedMetadataLeaderStepsDownAndCatchesUp(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 2})
	c.StartAll()
	_, secret := newKey(t, c.Nodes[0])
	old := c.metaLeader()
	others := c.except(old)
	watch := c.WatchLeaders(100 * time.Millisecond)

	paused := time.Now()
	old.Stop()
	now := c.waitMetaLeader(others, old, 10*time.Second)
	elected := time.Since(paused)
	calls := keepCalling(t, others, secret, 5*time.Second-elected)
	old.Cont()
	resumed := time.Now()
	c.WaitLeaders(10 * time.Second)
	stepDown := time.Since(resumed)
	c.WaitCaughtUp(10 * time.Second)
	caughtUp := time.Since(resumed)
	if status, b := old.Chat(secret); status != http.StatusOK {
		t.Errorf("node %d after SIGCONT: %d %s", old.ID, status, b)
	}

	h := watch.Stop()
	t.Logf("node %d paused: node %d leads the metadata shard after %v; calls through the others: %s; after SIGCONT every node agreed on the leaders in %v and caught up in %v; terms per shard %v, %d status polls (%d unanswered)",
		old.ID, now.ID, elected.Round(time.Millisecond), calls, stepDown.Round(time.Millisecond), caughtUp.Round(time.Millisecond), h.Terms, h.Polls, h.Unanswered)
	if elected > 5*time.Second {
		t.Errorf("a new metadata leader took %v, want under 5 s", elected)
	}
	if calls.failed != 0 {
		t.Errorf("calls through the other nodes failed while node %d was paused: %s", old.ID, calls)
	}
	if len(h.TwoLeaders) != 0 {
		t.Errorf("two leaders of one shard at the same term: %s", strings.Join(h.TwoLeaders, "; "))
	}
	if st, err := old.Status(); err != nil {
		t.Fatal(err)
	} else if st.Shard[0].Leader != now.ID {
		t.Errorf("the resumed node sees leader %d of the metadata shard, want %d", st.Shard[0].Leader, now.ID)
	}
}
