//go:build faults

package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestClusterFaultRollingRestartWithDrainUnderLoad is a rolling restart: under
// chat calls (whole and streamed) at every node and top-ups, each node in turn is drained
// with `modelgate cluster drain`, exits by itself, is restarted on its data and catches up
// (every shard led, its /readyz ok) before the next. The clients act as an SDK behind a
// readiness-checking balancer: they retry only a 503 with Retry-After, on the next ready
// node; any other error they see fails the test. While a node drains, every other node
// stays ready (a balancer keeps a backend). At the end every account's ledger adds up on
// every node.
func TestClusterFaultRollingRestartWithDrainUnderLoad(t *testing.T) {
	began := time.Now()
	c := New(t, Options{Nodes: 3, Shards: 8})
	c.StartAll()
	accts := newLoadAccounts(t, c, 2, 2, "100.00")
	l := &load{t: t, c: c, accounts: accts, perNode: 2, topUps: true, retryOn503: true}
	l.resume()
	for _, n := range c.Nodes {
		time.Sleep(2 * time.Second) // the load on a whole cluster
		drained := time.Now()
		others := watchReadiness(c, n)
		out := c.MustRun("cluster", "drain", fmt.Sprint(n.ID), "--node", n.AdminURL())
		if !strings.Contains(out, fmt.Sprintf("node %d leads no shard", n.ID)) {
			t.Errorf("drain of node %d said:\n%s", n.ID, out)
		}
		if _, exited := n.Exited(40 * time.Second); !exited {
			t.Fatalf("node %d did not exit after its drain", n.ID)
		}
		if polls, unready := others(); len(unready) > 0 {
			t.Errorf("while node %d drained, other nodes answered /readyz not ready %d times of %d: %s", n.ID, len(unready), polls, strings.Join(unready, "; "))
		} else {
			t.Logf("while node %d drained, the other nodes answered /readyz ready %d times of %d", n.ID, polls, polls)
		}
		n.Start()
		c.WaitLeaders(30 * time.Second)
		deadline := time.Now().Add(30 * time.Second)
		for !readyOK(n) {
			if time.Now().After(deadline) {
				t.Fatalf("node %d: /readyz not ok 30 s after its restart", n.ID)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("node %d drained, exited, restarted and caught up in %v", n.ID, time.Since(drained).Round(time.Millisecond))
	}
	time.Sleep(2 * time.Second)
	l.halt()
	for _, o := range l.odd {
		t.Errorf("a client saw: %s", o)
	}
	tally := checkLedger(t, c, accts, "after the rolling restart")
	refused := 0
	for _, s := range l.samples {
		if s.refused {
			refused++
		}
	}
	t.Logf("rolling restart of %d nodes: %d calls sent, %d answered in full, %d of them 503 + Retry-After (retried), %d other client-visible errors; "+
		"%d log entries, every account's ledger adds up on every node; %v",
		len(c.Nodes), l.sent.Load(), l.complete.Load(), refused, len(l.odd), tally.entries, time.Since(began).Round(time.Second))
}

// watchReadiness polls every node but drained on /readyz every 25 ms until the returned
// function is called, which says how many polls were made and which answered not ready.
func watchReadiness(c *Cluster, drained *Node) func() (polls int, unready []string) {
	var others []*Node
	for _, o := range c.Nodes {
		if o != drained && o.Running() {
			others = append(others, o)
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	var polls int
	var unready []string
	go func() {
		defer close(done)
		for {
			for _, o := range others {
				polls++
				if !readyOK(o) {
					unready = append(unready, fmt.Sprintf("node %d at %s", o.ID, time.Now().Format("15:04:05.000")))
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(25 * time.Millisecond):
			}
		}
	}()
	return func() (int, []string) {
		close(stop)
		<-done
		return polls, unready
	}
}
