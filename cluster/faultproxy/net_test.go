package faultproxy

import (
	"errors"
	"os"
	"slices"
	"testing"
	"time"
)

// pairResult is what one probe from node i to node j saw: whether i's byte reached j, and
// whether j's echo (j→i traffic on i's connection) came back.
type pairResult struct{ reached, answered bool }

type pair struct{ from, to int }

func TestNetBlocksExactlyThePairsAPartitionNames(t *testing.T) {
	nodes := []*echoServer{startEcho(t), startEcho(t), startEcho(t)}
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.addr()
	}
	both, none, onlyThere := pairResult{true, true}, pairResult{false, false}, pairResult{true, false}
	cases := []struct {
		name    string
		fault   func(*Net)
		blocked map[pair]pairResult // every pair not listed gets both
	}{
		{"no fault", func(*Net) {}, nil},
		{"isolate 0", func(n *Net) { n.Isolate(0) },
			map[pair]pairResult{{0, 1}: none, {0, 2}: none, {1, 0}: none, {2, 0}: none}},
		{"cut 0-1", func(n *Net) { n.Cut(0, 1) },
			map[pair]pairResult{{0, 1}: none, {1, 0}: none}},
		{"one way 0→1", func(n *Net) { n.OneWay(0, 1) },
			map[pair]pairResult{{0, 1}: none, {1, 0}: onlyThere}},
		{"cut 0-1 and 1-2 add up", func(n *Net) { n.Cut(0, 1); n.Cut(1, 2) },
			map[pair]pairResult{{0, 1}: none, {1, 0}: none, {1, 2}: none, {2, 1}: none}},
		{"isolate then heal", func(n *Net) { n.Isolate(2); n.Heal() }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := NewNet(addrs)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = n.Close() }()
			tc.fault(n)
			for from := range nodes {
				for to := range nodes {
					if from == to {
						continue
					}
					want := both
					if r, ok := tc.blocked[pair{from, to}]; ok {
						want = r
					}
					if got := probe(t, n, nodes[to], from, to, want.answered); got != want {
						t.Errorf("%d→%d: %+v, want %+v", from, to, got, want)
					}
				}
			}
		})
	}
}

// probe sends one byte from node from to node to through the net and reads the echo, waiting
// long for one expected and briefly for one a partition should lose.
func probe(t *testing.T, n *Net, target *echoServer, from, to int, expectAnswer bool) pairResult {
	t.Helper()
	before := target.received.Load()
	c := dial(t, n.PeerAddr(from, to))
	defer func() { _ = c.Close() }()
	send(t, c, "p")
	wait := 150 * time.Millisecond
	if expectAnswer {
		wait = 2 * time.Second
	}
	_, err := readN(c, 1, wait)
	if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%d→%d: %v", from, to, err)
	}
	return pairResult{reached: target.received.Load() > before, answered: err == nil}
}

func TestNetPeerTablesAndRoutesGoThroughThePairsProxy(t *testing.T) {
	addrs := []string{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7003"}
	n, err := NewNet(addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Close() }()
	for from := range addrs {
		peers := n.Peers(from)
		for to := range addrs {
			want := addrs[to]
			if from != to {
				want = n.Link(from, to).Addr()
				if got := n.Link(from, to).Target(); got != addrs[to] {
					t.Errorf("proxy %d→%d targets %s, want %s", from, to, got, addrs[to])
				}
			}
			if peers[to] != want {
				t.Errorf("Peers(%d)[%d] = %s, want %s", from, to, peers[to], want)
			}
			if got := n.Route(from, addrs[to]); got != want {
				t.Errorf("Route(%d, %s) = %s, want %s", from, addrs[to], got, want)
			}
		}
	}
	if got := n.Route(0, "127.0.0.1:9"); got != "127.0.0.1:9" {
		t.Errorf("Route of an unknown address = %s, want it unchanged", got)
	}
	all := slices.Concat(n.Peers(0), n.Peers(1), n.Peers(2))
	slices.Sort(all)
	if len(slices.Compact(all)) != 9 {
		t.Errorf("peer tables share addresses: %v", all)
	}
}
