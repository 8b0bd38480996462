package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/faultproxy"
	"github.com/modelgate/modelgate/internal/testutil"
)

func TestReadPeerRoutesTakesAnObjectOfAddresses(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       PeerRoutes
		err        string
	}{
		{"two routes", `{"127.0.0.1:7001": "127.0.0.1:9001", "localhost:7002": "127.0.0.1:9002"}`,
			PeerRoutes{"127.0.0.1:7001": "127.0.0.1:9001", "localhost:7002": "127.0.0.1:9002"}, ""},
		{"empty", `{}`, PeerRoutes{}, ""},
		{"a list", `["127.0.0.1:7001"]`, nil, "not a JSON object of host:port → host:port"},
		{"no port", `{"127.0.0.1": "127.0.0.1:9001"}`, nil, `"127.0.0.1" → "127.0.0.1:9001": both must be host:port`},
		{"port out of range", `{"127.0.0.1:7001": "127.0.0.1:70000"}`, nil, "both must be host:port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "routes.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadPeerRoutes(path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("routes %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("route %s → %s, want %s", k, got[k], v)
				}
			}
		})
	}
}

// TestPeerRoutesPutTheFaultProxyBetweenNodes: every node dials its peers through proxy
// (i→j) while the memberships keep the real addresses; the leader's links carry traffic, and
// isolating the leader through the proxies elects another one, which the healed node then
// follows.
func TestPeerRoutesPutTheFaultProxyBetweenNodes(t *testing.T) {
	var pairs *faultproxy.Net
	index := map[uint64]int{} // node id → index in the Net
	c := newTestClusterWith(t, 3, func(cfgs map[uint64]Config) {
		var addrs []string
		for id := uint64(1); id <= 3; id++ {
			index[id] = len(addrs)
			addrs = append(addrs, cfgs[id].RaftAddr)
		}
		var err error
		if pairs, err = faultproxy.NewNet(addrs); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pairs.Close() })
		for id, cfg := range cfgs {
			cfg.PeerRoutes = PeerRoutes{}
			for _, addr := range addrs {
				if to := pairs.Route(index[id], addr); to != addr {
					cfg.PeerRoutes[addr] = to
				}
			}
			cfgs[id] = cfg
		}
	}, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	old := c.leader(1, 10*time.Second)
	if _, err := c.nodes[old].Propose(ctx, 1, c.cmd()); err != nil {
		t.Fatal(err)
	}
	// The leader sends to each follower on its own connections and each follower answers on
	// its own (followers need not talk to each other).
	for id := range c.nodes {
		if id == old {
			continue
		}
		for _, l := range [][2]uint64{{old, id}, {id, old}} {
			if pairs.Link(index[l[0]], index[l[1]]).Stats().Forwarded[faultproxy.ClientToTarget] == 0 {
				t.Errorf("proxy %d→%d carried nothing: node %d does not dial node %d through it", l[0], l[1], l[0], l[1])
			}
		}
	}
	st := c.nodes[old].Status(ctx)
	if len(st) != 1 || st[0].Voting[2] != c.cfgs[2].RaftAddr {
		t.Errorf("the membership should keep real addresses: %+v", st)
	}

	pairs.Isolate(index[old])
	var now uint64
	testutil.WaitWithin(t, 10*time.Second, "a new leader among the two others", func() bool {
		var seen []uint64
		for id, n := range c.nodes {
			if id == old {
				continue
			}
			l, ok := n.Leader(1)
			if !ok || l == old {
				return false
			}
			seen = append(seen, l)
		}
		now = seen[0]
		return seen[0] == seen[1]
	})
	if _, err := c.nodes[now].Propose(ctx, 1, c.cmd()); err != nil {
		t.Fatalf("propose on the majority's new leader %d: %v", now, err)
	}
	rctx, rcancel := context.WithTimeout(ctx, time.Second)
	if _, err := c.nodes[old].Read(rctx, 1, nil); err == nil {
		t.Errorf("the isolated node %d answered a linearizable read", old)
	}
	rcancel()

	pairs.Heal()
	testutil.WaitWithin(t, 10*time.Second, "the healed node follows the new leader", func() bool {
		l, ok := c.nodes[old].Leader(1)
		return ok && l == now
	})
	if n := readCount(t, c.nodes[old], 1); n != 2 {
		t.Errorf("the healed node reads %d commands, want 2", n)
	}
}
