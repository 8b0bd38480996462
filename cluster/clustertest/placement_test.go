package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
)

// TestEachAccountShardRunsOnItsVotersOnly: four nodes, four account shards, three replicas.
// Each node runs the metadata shard and only the account shards placed on it (three voters
// each, no non-voting replica anywhere), so each account shard runs on three nodes. An
// account whose shard a node does not hold is served there in full: its calls (steps sent
// to the shard's leader), and its reads, each the same on that node as on one holding the
// shard: the quota view, the usage page, the credits history, GET /v1/key and
// GET /v1/generations/{id}.
func TestEachAccountShardRunsOnItsVotersOnly(t *testing.T) {
	const nodes, shards, replicas = 4, 4, 3
	c := New(t, Options{Nodes: nodes, Shards: shards, Replicas: replicas})
	c.StartAll()
	var peers []membership.Peer
	for _, n := range c.Nodes {
		peers = append(peers, membership.Peer{ID: n.ID, Addr: n.RaftAddr})
	}
	placed := membership.File{Peers: peers, Shards: shards, Replicas: replicas}
	holders := map[uint64][]uint64{} // account shard → the nodes running it
	for _, n := range c.Nodes {
		st, err := n.Status()
		if err != nil {
			t.Fatal(err)
		}
		var got, want []uint64
		for _, s := range st.Shard {
			if len(s.NonVoters) != 0 {
				t.Errorf("node %d: shard %d has non-voting replicas %v", n.ID, s.Shard, s.NonVoters)
			}
			if s.Shard == membership.MetaShard {
				continue
			}
			got = append(got, s.Shard)
			holders[s.Shard] = append(holders[s.Shard], n.ID)
			if len(s.Voters) != replicas {
				t.Errorf("node %d: shard %d has voters %v, want %d", n.ID, s.Shard, s.Voters, replicas)
			}
		}
		for _, s := range placed.AccountShards() {
			if slices.ContainsFunc(placed.Voters(s), func(p membership.Peer) bool { return p.ID == n.ID }) {
				want = append(want, s)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("node %d runs account shards %v, want %v (its placement)", n.ID, got, want)
		}
	}

	acct, secret := newAccountKey(t, c.Nodes[0], PaidPlan)
	shard := accounts.ShardOf(acct, membership.FirstAccountShard, shards)
	var away, home *Node // one node without the account's shard, one with it
	for _, n := range c.Nodes {
		if slices.Contains(holders[shard], n.ID) {
			home = n
		} else {
			away = n
		}
	}
	if away == nil || home == nil || len(holders[shard]) != replicas {
		t.Fatalf("shard %d runs on %v: want %d of the %d nodes", shard, holders[shard], replicas, nodes)
	}
	if status, b := away.Admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/credits",
		map[string]any{"amount_usd": "1.00", "idempotency_key": "placement-topup"}); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("top-up through node %d: %d %s", away.ID, status, b)
	}
	costs := map[string]string{}
	for _, n := range []*Node{away, home, away} {
		status, h, b := n.Do(http.MethodPost, "/v1/chat/completions", secret, map[string]any{
			"model": Model, "messages": []map[string]string{{"role": "user", "content": "hi"}}, "max_tokens": 5})
		if status != http.StatusOK {
			t.Fatalf("node %d: chat: %d %s", n.ID, status, b)
		}
		costs[h.Get("X-Request-Id")] = h.Get("X-Modelgate-Cost")
	}
	var u struct{ Totals struct{ Count int64 } }
	waitLog(t, home, acct, int64(len(costs)), &u)

	reads := []struct {
		name, path string
		admin      bool
	}{
		{"quota view", "/admin/v1/accounts/" + acct + "/quota", true},
		{"usage page", "/admin/v1/accounts/" + acct + "/usage", true},
		{"credits history", "/account/v1/credits", false},
		{"key", "/v1/key", false},
	}
	for id := range costs {
		reads = append(reads, struct {
			name, path string
			admin      bool
		}{"generation " + id, "/v1/generations/" + id, false})
	}
	for _, r := range reads {
		read := func(n *Node) (int, string) {
			if r.admin {
				status, b := n.Admin(http.MethodGet, r.path, nil)
				return status, string(b)
			}
			status, _, b := n.Do(http.MethodGet, r.path, secret, nil)
			return status, string(b)
		}
		hs, hb := read(home)
		as, ab := read(away)
		if hs != http.StatusOK || as != hs || normalize(t, ab) != normalize(t, hb) {
			t.Errorf("%s: node %d (no replica of shard %d) answered %d %s\nnode %d (a replica) answered %d %s", r.name, away.ID, shard, as, ab, home.ID, hs, hb)
		}
	}
	if status, _, b := away.Do(http.MethodGet, "/v1/generations/no-such-call", secret, nil); status != http.StatusNotFound {
		t.Errorf("node %d: an unknown generation: %d %s, want 404", away.ID, status, b)
	}
}

// normalize drops what differs between two reads of the same state on two nodes: the
// request id each answer carries, and JSON key order.
func normalize(t *testing.T, body string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		return body
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "request_id")
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(string(b))
}
