package accounts

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/quota/step"
	"github.com/modelgate/modelgate/codec/money"
)

// A node killed with calls in flight cannot settle them. Once it has started again and
// published its new incarnation in the shard, the account's next view or step releases
// them (and only them), on every replica alike, and after a restart of the replica too.
func TestCallsOfANodesEarlierIncarnationAreReleasedOnceItPublishesANewOne(t *testing.T) {
	sm, store := newReplica(t, 1)
	p := step.Plan{WindowRequests: 10, Overdraft: money.Amount(0)}
	at := func(s int) int64 { return t0 + int64(s)*int64(time.Second) }
	admit := func(id string, node, inc uint64, s int) Command {
		return Command{ID: id, Account: "acct", Step: step.Command{Kind: step.Admit, Now: at(s), Key: "k1", Plan: p,
			Units: 1000, TTL: int64(time.Hour), Node: node, Inc: inc}}
	}
	publish := func(id string, node, inc uint64) Command {
		return Command{ID: id, Node: &NodeAddr{ID: node, Addr: "127.0.0.1:4001", Inc: inc}}
	}
	apply(t, sm, entries(1,
		batch(t, publish("p1", 1, 100), publish("p2", 2, 200)),
		batch(t, admit("a1", 1, 100, 1), admit("a2", 1, 100, 2), admit("a3", 2, 200, 3), admit("a4", 0, 0, 4)),
	))
	cases := []struct {
		name     string
		log      []byte
		inFlight int
	}{
		{"every node still on the incarnation that admitted its calls", nil, 4},
		{"node 2 published the same incarnation again (a retry, a new address)", batch(t, publish("p3", 2, 200)), 4},
		{"node 1 started again", batch(t, publish("p4", 1, 101)), 2},
		{"node 1 admits under its new incarnation, node 2 starts again", batch(t, admit("a5", 1, 101, 5), publish("p5", 2, 201)), 2},
	}
	next := uint64(3)
	for _, tc := range cases {
		if tc.log != nil {
			apply(t, sm, entries(next, tc.log))
			next++
		}
		if v := lookup(t, sm, "acct", at(10)); v.InFlight != tc.inFlight {
			t.Errorf("%s: %d calls in flight, want %d", tc.name, v.InFlight, tc.inFlight)
		}
	}

	// The release is written by the account's next step, and a restarted replica reads the
	// incarnations back: the same calls stay released.
	res := apply(t, sm, entries(next, batch(t, admit("a6", 1, 101, 20))))
	if !res[0][0].Admitted {
		t.Fatalf("a call after the releases was refused: %+v", res[0][0])
	}
	again := NewStateMachine(store, 1)
	if _, err := again.Open(); err != nil {
		t.Fatal(err)
	}
	if v := lookup(t, again, "acct", at(30)); v.InFlight != 3 {
		t.Errorf("after reopening: %d calls in flight, want 3 (a4 of a single node, a5 and a6 of node 1's new incarnation)", v.InFlight)
	}
	// A replica that catches up from a snapshot has the incarnations too: node 1 starting
	// again releases its calls there as well.
	dst, _ := newReplica(t, 1)
	if err := dst.RecoverFromSnapshot(bytes.NewReader(snapshot(t, sm))); err != nil {
		t.Fatal(err)
	}
	apply(t, dst, entries(next+1, batch(t, publish("p6", 1, 102))))
	if v := lookup(t, dst, "acct", at(30)); v.InFlight != 1 {
		t.Errorf("on a replica recovered from a snapshot: %d calls in flight after node 1 started again, want 1 (a4)", v.InFlight)
	}
}

// A node removed from the cluster (NodeAddr.Gone) has no live incarnation: its calls are
// released and its address forgotten; a node started again with that id lives again.
func TestANodeRemovedHasItsCallsReleasedAndItsAddressForgotten(t *testing.T) {
	sm, store := newReplica(t, 1)
	p := step.Plan{WindowRequests: 10}
	admit := func(id string, node, inc uint64) Command {
		return Command{ID: id, Account: "acct", Step: step.Command{Kind: step.Admit, Now: t0, Key: "k1", Plan: p,
			Units: 1000, TTL: int64(time.Hour), Node: node, Inc: inc}}
	}
	apply(t, sm, entries(1, batch(t, Command{ID: "p1", Node: &NodeAddr{ID: 3, Addr: "127.0.0.1:4003", Inc: 30}}, admit("a1", 3, 30), admit("a2", 2, 20))))
	got := applyTasks(t, sm, entries(2, batch(t,
		Command{ID: "g1", Node: &NodeAddr{ID: 3, Gone: true}},
		Command{ID: "g2", Node: &NodeAddr{ID: 3, Gone: true, Addr: "x"}},                  // malformed: a gone node has no address
		Command{ID: "g3", Node: &NodeAddr{ID: 4, Addr: "127.0.0.1:4004", Inc: goneInc}}))) // no process has that incarnation
	if want := []TaskResult{{}, {Fail: TaskInvalid}, {Fail: TaskInvalid}}; !slices.Equal(got, want) {
		t.Fatalf("results %+v, want %+v", got, want)
	}
	if v := lookup(t, sm, "acct", t0); v.InFlight != 1 {
		t.Errorf("after node 3's removal: %d calls in flight, want 1 (node 2's)", v.InFlight)
	}
	if peers, err := Peers(store, 1); err != nil || len(peers) != 0 {
		t.Errorf("peers after node 3's removal: %+v %v, want none", peers, err)
	}
	apply(t, sm, entries(3, batch(t, Command{ID: "p2", Node: &NodeAddr{ID: 3, Addr: "127.0.0.1:4013", Inc: 31}}, admit("a3", 3, 31))))
	if v := lookup(t, sm, "acct", t0); v.InFlight != 2 {
		t.Errorf("after node 3 joined again: %d calls in flight, want 2", v.InFlight)
	}
}
