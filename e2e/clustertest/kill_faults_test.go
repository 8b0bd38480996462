//go:build faults

package clustertest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota"
	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/faultproxy"
	"github.com/modelgate/modelgate/cluster/membership"
)

// admissionBound is the longest a call may wait for admission: the key check and the
// admission share one budget (quota.MaxWait, 2 s), after which the call is answered 503 with
// Retry-After. measureSlack is what the client's clock adds on this shared 2-core machine:
// the HTTP round trip and the scheduling of three busy processes.
const (
	admissionBound = quota.MaxWait
	measureSlack   = 500 * time.Millisecond
)

// The stall a kill may cause, over a run's kills: a new leader is elected in 0.2–0.5 s, so
// the 99th percentile stays under a second and none reaches one and a half (each with the
// client's measure in it).
const (
	stallP99Bound = time.Second
	stallMaxBound = 1500 * time.Millisecond
)

// victim kinds, killed in turn.
const (
	accountLeader = iota // the leader of an account shard
	follower             // a node that leads neither that account shard nor the metadata shard
	metaLeader           // the metadata shard's leader
	afterRestart         // another node, a few seconds after the last victim restarted
	victimKinds
)

var victimNames = [victimKinds]string{"account shard leader", "follower", "metadata leader", "node just after a restart"}

// TestClusterFaultKillNineUnderLoad kills nodes with kill -9 under load: 3 nodes, 8
// account shards, paid accounts with credits topped up during the run and accounts within
// their plan, chat calls (whole and streamed) at every node at once; 20 kills of, in
// turn, an account shard's leader, a follower, the metadata leader and a node seconds
// after another restarted; each victim restarted and every shard led again before the
// next. Every 5 kills and at the end, with the load halted, every account's ledger adds
// up on every node (ledger_faults_test.go). No call waits more than 2 s for admission,
// and the stall per kill stays under stallP99Bound at p99 and stallMaxBound at most.
func TestClusterFaultKillNineUnderLoad(t *testing.T) {
	const kills = 40
	began := time.Now()
	c := New(t, Options{Nodes: 3, Shards: 8})
	c.StartAll()
	r := killUnderLoad(t, c, kills)
	if p99, most := quantile(r.stalls, 0.99), quantile(r.stalls, 1); p99 >= stallP99Bound || most >= stallMaxBound {
		t.Errorf("stall per kill p99 %v, max %v: want under %v and %v", p99.Round(time.Millisecond), most.Round(time.Millisecond), stallP99Bound, stallMaxBound)
	}
	t.Logf("suite time %v", time.Since(began).Round(time.Second))
}

// killReport is what killUnderLoad measured: the stall of each kill, and the wait of every
// stream's status line on the healthy cluster before the first kill (the admission).
type killReport struct {
	stalls    []time.Duration
	admission []time.Duration
}

// killUnderLoad runs the kill suite on c (8 account shards, started): load at every node,
// 3 s of it on the healthy cluster, then kills of each victim kind in turn, each victim
// restarted and every shard led again before the next, every account's ledger checked every
// 5 kills and at the end with the load halted. It fails the test on a lost or doubled charge,
// an unexpected answer, or a call that waited past the admission budget.
func killUnderLoad(t *testing.T, c *Cluster, kills int) killReport {
	t.Helper()
	accts := newLoadAccounts(t, c, 3, 3, "100.00")
	l := startLoad(t, c, accts, 2, true)
	time.Sleep(3 * time.Second)
	var report killReport
	l.halt()
	for _, s := range l.samples {
		if s.stream && !s.refused {
			report.admission = append(report.admission, s.wait)
		}
	}
	l.resume()
	var killedAt []time.Time
	var prev *Node
	var restarted time.Time
	var tally ledgerTally
	for k := range kills {
		kind := k % victimKinds
		if kind == afterRestart {
			time.Sleep(time.Until(restarted.Add(2*time.Second + rand.N(time.Second))))
		} else {
			time.Sleep(time.Second + rand.N(time.Second)) // the load runs on a healthy cluster
		}
		v := pickVictim(t, c, kind, prev, accts[k%len(accts)].id)
		killedAt = append(killedAt, time.Now())
		v.Kill()
		time.Sleep(200*time.Millisecond + rand.N(600*time.Millisecond))
		v.Start()
		restarted = time.Now()
		c.WaitLeaders(30 * time.Second)
		t.Logf("kill %d: node %d (%s), back and every shard led after %v", k+1, v.ID, victimNames[kind], time.Since(killedAt[k]).Round(time.Millisecond))
		prev = v
		if (k+1)%5 == 0 || k+1 == kills {
			l.halt()
			tally = checkLedger(t, c, accts, fmt.Sprintf("after kill %d", k+1))
			if t.Failed() {
				t.FailNow()
			}
			if k+1 < kills {
				l.resume()
			}
		}
	}
	worst := stallsPerKill(l.samples, killedAt)
	over := 0
	for i, s := range worst {
		report.stalls = append(report.stalls, s.wait)
		t.Logf("kill %d: longest wait %v (node %d, sent %v after the kill, 503 %v)", i+1, s.wait.Round(time.Millisecond), s.node, s.start.Sub(killedAt[i]).Round(time.Millisecond), s.refused)
		if s.wait > admissionBound+measureSlack {
			over++
			t.Errorf("kill %d: a call waited %v for its key check and admission, over their budget of %v (+%v for the client's measure)",
				i+1, s.wait, admissionBound, measureSlack)
		}
	}
	for _, o := range l.odd {
		t.Errorf("unexpected answer: %s", o)
	}
	refused := 0
	for _, s := range l.samples {
		if s.refused {
			refused++
		}
	}
	t.Logf("%d kills; %d calls sent, %d answered in full (%d of them 503 + Retry-After), %d cut by a kill; "+
		"%d log entries, every 200 in the log exactly once, %d 503s logged once (settle committed), 0 lost or double charges; "+
		"%d calls still reserved at the checks (a call cut by a kill is released once its node has started again)",
		kills, l.sent.Load(), l.complete.Load(), refused, l.cut.Load(), tally.entries, tally.refusedLogged, tally.inFlight)
	t.Logf("admission (a stream's status line) before the kills: %s", distribution(report.admission))
	t.Logf("stall per kill (longest wait for a status line of a stream or a 503, from 0.5 s before the kill to 0.5 s before the next): %s",
		distribution(report.stalls))
	t.Logf("kills with a wait over the bound of %v (+%v): %d of %d", admissionBound, measureSlack, over, kills)
	return report
}

// TestClusterFaultKillsAcrossNetworkNamespaces runs the kill suite with each node in a
// network namespace of its own (veth pairs to the test's), the raft traffic between every
// pair through the fault proxies under a network condition: 1 ms each way, then 5 ms ± 1 ms
// with 1% of chunks lost (held one retransmission time-out). It reports the admission on the
// healthy cluster and the stall per kill for each. The loss-free link keeps the kill suite's
// bound on the longest stall; under loss a heartbeat held 200 ms can cost an election more,
// so that run is reported, and held to the suite's checks of the ledger only. Needs root (CI
// runs as root); skipped without it.
func TestClusterFaultKillsAcrossNetworkNamespaces(t *testing.T) {
	for _, tc := range []struct {
		name    string
		link    faultproxy.Fault
		bounded bool // the longest stall is held to stallMaxBound
	}{
		{"1ms", faultproxy.Network(time.Millisecond, 0, 0), true},
		{"5ms±1ms, 1% loss", faultproxy.Network(5*time.Millisecond, time.Millisecond, 0.01), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := New(t, Options{Nodes: 3, Shards: 8, Netns: true})
			c.SetAll(tc.link)
			c.StartAll()
			r := killUnderLoad(t, c, 8)
			t.Logf("%s between every pair of nodes: admission p50 %v p99 %v; stall per kill p50 %v p99 %v max %v",
				tc.link, quantile(r.admission, 0.5).Round(100*time.Microsecond), quantile(r.admission, 0.99).Round(100*time.Microsecond),
				quantile(r.stalls, 0.5).Round(time.Millisecond), quantile(r.stalls, 0.99).Round(time.Millisecond), quantile(r.stalls, 1).Round(time.Millisecond))
			if most := quantile(r.stalls, 1); tc.bounded && most >= stallMaxBound {
				t.Errorf("stall per kill max %v: want under %v", most.Round(time.Millisecond), stallMaxBound)
			}
		})
	}
}

// pickVictim chooses the node to kill for kind: the leaders come from a running node's
// status; a follower leads neither acct's shard nor the metadata shard (any non-leader of
// acct's shard when every node leads one of them).
func pickVictim(t *testing.T, c *Cluster, kind int, prev *Node, acct string) *Node {
	t.Helper()
	leaders := shardLeaders(t, c)
	acctLeader := leaders[accounts.ShardOf(acct, membership.FirstAccountShard, 8)]
	switch kind {
	case accountLeader:
		return c.Nodes[acctLeader-1]
	case metaLeader:
		return c.Nodes[leaders[membership.MetaShard]-1]
	case follower:
		var pick *Node
		for _, n := range c.Nodes {
			switch {
			case n.ID == acctLeader:
			case n.ID != leaders[membership.MetaShard]:
				return n
			default:
				pick = n
			}
		}
		return pick
	default:
		others := slices.DeleteFunc(slices.Clone(c.Nodes), func(n *Node) bool { return n == prev })
		return others[rand.IntN(len(others))]
	}
}

// shardLeaders is every shard's leader as the first running node sees it.
func shardLeaders(t *testing.T, c *Cluster) map[uint64]uint64 {
	t.Helper()
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		st, err := n.Status()
		if err != nil {
			t.Fatal(err)
		}
		leaders := map[uint64]uint64{}
		for _, s := range st.Shard {
			leaders[s.Shard] = s.Leader
		}
		return leaders
	}
	t.Fatal("no node runs")
	return nil
}

// stallsPerKill is, for each kill, the longest wait of a stream's status line or of a 503
// among the calls sent from 0.5 s before it to 0.5 s before the next kill.
func stallsPerKill(samples []sample, killedAt []time.Time) []sample {
	stalls := make([]sample, len(killedAt))
	for _, s := range samples {
		if !s.stream && !s.refused {
			continue // a whole answer's wait includes its settle
		}
		i, _ := slices.BinarySearchFunc(killedAt, s.start.Add(500*time.Millisecond), func(k, at time.Time) int { return k.Compare(at) })
		if i == 0 {
			continue // before the first kill
		}
		if s.wait > stalls[i-1].wait {
			stalls[i-1] = s
		}
	}
	return stalls
}

// distribution is "p50 … p90 … p99 … max …" of ds.
func distribution(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %v, p90 %v, p99 %v, max %v over %d", quantile(ds, 0.5).Round(time.Millisecond), quantile(ds, 0.9).Round(time.Millisecond),
		quantile(ds, 0.99).Round(time.Millisecond), quantile(ds, 1).Round(time.Millisecond), len(ds))
}

// quantile is the q-th quantile of ds (q 1: the largest), as distribution reports it.
func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[min(len(s)-1, int(q*float64(len(s))))]
}
