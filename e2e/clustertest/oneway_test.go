package clustertest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/faultproxy"
)

// maxTermsUnderOneWayAndDelay bounds the terms a shard may go through while one link is
// one-way and then every link is slow (measured: 1, no leader change at all; pre-vote and
// check-quorum keep a node that stops hearing the leader from unseating it).
const maxTermsUnderOneWayAndDelay = 2

// TestOneWayLinkAndDelayKeepOneLeaderPerShard: first what the metadata leader
// sends one follower is black-holed (the follower's messages still arrive), then every link
// between the nodes delays each chunk 20 ms. Calls on the majority answer throughout (on
// every node while links are only slow), each
// shard keeps one leader per term (no flapping beyond maxTermsUnderOneWayAndDelay terms),
// and after healing every replica catches up.
func TestOneWayLinkAndDelayKeepOneLeaderPerShard(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 2, Faults: true})
	c.StartAll()
	_, secret := newKey(t, c.Nodes[0])
	leader := c.metaLeader()
	cutOff := c.except(leader)[0]
	majority := c.except(cutOff)
	// A node whose messages to an account shard's leader are black-holed cannot have its
	// proposals forwarded there (Raft forwards over that very link): when the cut-off node
	// leads an account shard, the metadata leader's calls of that shard's accounts wait out
	// their budget. That is the fault, not a failure of the majority; the third node's calls
	// must still answer. (Found when placement happened to put an account shard's leader on
	// the cut-off node.)
	for shard := uint64(2); shard < 2+2; shard++ {
		if c.shardLeader(shard) == cutOff {
			majority = c.except(leader)[:0]
			for _, n := range c.Nodes {
				if n != leader && n != cutOff {
					majority = append(majority, n)
				}
			}
			break
		}
	}
	watch := c.WatchLeaders(100 * time.Millisecond)

	c.OneWay(leader, cutOff)
	oneWay := keepCalling(t, majority, secret, 4*time.Second)
	c.Heal()
	// The cut-off follower answers again once the leader has redialled it.
	healed := time.Now()
	for status, b := cutOff.Chat(secret); status != http.StatusOK; status, b = cutOff.Chat(secret) {
		if time.Since(healed) > 10*time.Second {
			t.Fatalf("node %d still refuses calls 10 s after healing: %d %s", cutOff.ID, status, b)
		}
	}
	recovered := time.Since(healed)

	for _, from := range c.Nodes {
		for _, to := range c.Nodes {
			if from != to {
				c.Link(from, to).Set(faultproxy.Delay(20 * time.Millisecond))
			}
		}
	}
	delayed := keepCalling(t, c.Nodes, secret, 4*time.Second)
	c.Heal()

	h := watch.Stop()
	t.Logf("one-way %d→%d: %s; node %d answered again %v after healing; 20 ms on every link: %s; terms per shard %v, %d status polls (%d unanswered)",
		leader.ID, cutOff.ID, oneWay, cutOff.ID, recovered.Round(time.Millisecond), delayed, h.Terms, h.Polls, h.Unanswered)
	for _, r := range []callReport{oneWay, delayed} {
		if r.failed != 0 {
			t.Errorf("calls failed under the fault: %s", r)
		}
	}
	if len(h.TwoLeaders) != 0 {
		t.Errorf("two leaders of one shard at the same term: %s", strings.Join(h.TwoLeaders, "; "))
	}
	if h.MaxTerms() > maxTermsUnderOneWayAndDelay {
		t.Errorf("a shard went through %d terms, want at most %d: %v", h.MaxTerms(), maxTermsUnderOneWayAndDelay, h.Terms)
	}
	c.WaitLeaders(10 * time.Second)
	c.WaitCaughtUp(10 * time.Second)
	if status, b := cutOff.Chat(secret); status != http.StatusOK {
		t.Errorf("node %d after healing: %d %s", cutOff.ID, status, b)
	}
}

// callReport is what keepCalling saw.
type callReport struct {
	calls, failed int
	slowest       time.Duration
	firstFailure  string
}

func (r callReport) String() string {
	s := fmt.Sprintf("%d calls, %d failed, slowest %v", r.calls, r.failed, r.slowest.Round(time.Millisecond))
	if r.firstFailure != "" {
		s += ", first failure: " + r.firstFailure
	}
	return s
}

// keepCalling sends chat calls with key to nodes in turn for d and reports how they went.
func keepCalling(t *testing.T, nodes []*Node, key string, d time.Duration) callReport {
	t.Helper()
	var r callReport
	for end := time.Now().Add(d); time.Now().Before(end); {
		n := nodes[r.calls%len(nodes)]
		begin := time.Now()
		status, b := n.Chat(key)
		r.slowest = max(r.slowest, time.Since(begin))
		r.calls++
		if status != http.StatusOK {
			r.failed++
			if r.firstFailure == "" {
				r.firstFailure = fmt.Sprintf("node %d: %d %s", n.ID, status, b)
			}
		}
	}
	return r
}
