package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/accounts"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/transport/node"
)

// TestEachAccountShardRunsOnItsVotersOnly: four nodes, four account shards, three replicas.
// Each node runs the metadata shard (three voters, the fourth node a non-voting replica) and
// only the account shards placed on it (three voters each, no non-voting replica), so each
// account shard runs on three nodes. An
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
			if s.Shard == membership.MetaShard { // 3 voters of 4 nodes; the fourth follows
				if !slices.Equal(s.Voters, []uint64{1, 2, 3}) || !slices.Equal(s.NonVoters, []uint64{4}) {
					t.Errorf("node %d: the metadata shard has voters %v and non-voters %v, want [1 2 3] and [4]", n.ID, s.Voters, s.NonVoters)
				}
				continue
			}
			if len(s.NonVoters) != 0 {
				t.Errorf("node %d: shard %d has non-voting replicas %v", n.ID, s.Shard, s.NonVoters)
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

	// A key revoked through node 1 is refused at once on node 4 too, which reads keys from
	// its non-voting replica of the metadata shard under its read lease.
	keyID, key := newKey(t, c.Nodes[3])
	if status, b := c.Nodes[3].Chat(key); status != http.StatusOK {
		t.Fatalf("node 4: chat with a new key: %d %s", status, b)
	}
	if status, b := c.Nodes[0].Admin(http.MethodDelete, "/admin/v1/keys/"+keyID, nil); status != http.StatusOK {
		t.Fatalf("revoke: %d %s", status, b)
	}
	if status, b := c.Nodes[3].Chat(key); status != http.StatusUnauthorized || !strings.Contains(string(b), "this API key has been revoked") {
		t.Errorf("node 4 right after the revocation: %d %s, want 401 revoked", status, b)
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

// TestRebalanceGivesAJoinedNodeItsShareOfTheShards: three nodes, four account shards of
// three voters each; a fourth node joins (a non-voting replica of every shard). A
// rebalance moves one voter of three shards to it and takes its remaining non-voting
// replica away, so each node runs three account shards with three voters each and no
// non-voting replica anywhere. Calls through every node then count against one account
// exactly (every node's quota view agrees), each node starts again with the same shards
// (the moved ones included), and a second rebalance moves no replica. Node 4 then dies and
// is removed; once node 5 joins, a rebalance gives each of node 4's shards a voter there.
func TestRebalanceGivesAJoinedNodeItsShareOfTheShards(t *testing.T) {
	const shards = 4
	c := New(t, Options{Nodes: 3, Shards: shards})
	c.StartAll()
	n1 := c.Nodes[0]
	acct, secret := newAccountKey(t, n1, PaidPlan)
	if status, b := n1.Admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/credits",
		map[string]any{"amount_usd": "1.00", "idempotency_key": "rebalance-topup"}); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("top-up: %d %s", status, b)
	}
	n4 := c.AddNode()
	c.MustRun("cluster", "join", "--data", n4.DataDir, "--node-id", "4", "--raft-addr", n4.RaftAddr, "--via", n1.AdminURL(), "--certs", c.CertDir)
	n4.Start()
	c.WaitLeaders(30 * time.Second)
	c.WaitCaughtUp(30 * time.Second)

	out := c.MustRun("cluster", "rebalance", "--node", c.Nodes[1].AdminURL())
	if got := strings.Count(out, "to node 4\n"); got != 3 || strings.Count(out, "non-voting replica on node 4 removed") != 1 {
		t.Errorf("rebalance said %q: want 3 replicas moved to node 4 and its one non-voting replica left removed", out)
	}
	checkPlacement := func(when string, nodes []*Node) {
		t.Helper()
		runs := map[uint64]int{}
		want := shards * 3 / len(nodes)
		for _, n := range nodes {
			st, err := n.Status()
			if err != nil {
				t.Fatalf("%s: node %d: %v", when, n.ID, err)
			}
			held := 0
			for _, s := range st.Shard {
				if len(s.NonVoters) != 0 && s.Shard != membership.MetaShard {
					t.Errorf("%s: node %d: shard %d has non-voting replicas %v", when, n.ID, s.Shard, s.NonVoters)
				}
				if s.Shard != membership.MetaShard {
					held++
					runs[s.Shard]++
					if len(s.Voters) != 3 || !slices.Contains(s.Voters, n.ID) {
						t.Errorf("%s: node %d runs shard %d with voters %v: want 3 voters, itself among them", when, n.ID, s.Shard, s.Voters)
					}
				}
			}
			if held != want {
				t.Errorf("%s: node %d runs %d account shards, want %d", when, n.ID, held, want)
			}
		}
		for s := membership.FirstAccountShard; s < membership.FirstAccountShard+shards; s++ {
			if runs[s] != 3 {
				t.Errorf("%s: shard %d runs on %d nodes, want 3", when, s, runs[s])
			}
		}
	}
	checkPlacement("after the rebalance", c.Nodes)

	calls := 0
	chatOnEach := func() {
		t.Helper()
		for _, n := range c.Nodes {
			status, _, b := n.Do(http.MethodPost, "/v1/chat/completions", secret, map[string]any{
				"model": Model, "messages": []map[string]string{{"role": "user", "content": "hi"}}, "max_tokens": 5})
			if status != http.StatusOK {
				t.Fatalf("node %d: chat: %d %s", n.ID, status, b)
			}
			calls++
		}
	}
	chatOnEach()
	for _, n := range []*Node{n4, n1} {
		n.Restart()
	}
	c.WaitLeaders(30 * time.Second)
	c.WaitCaughtUp(30 * time.Second)
	checkPlacement("after nodes 4 and 1 restarted", c.Nodes)
	chatOnEach()

	var first string
	for _, n := range c.Nodes {
		var q struct {
			Spent    string `json:"spent_usd"`
			InFlight int    `json:"in_flight"`
		}
		adminJSON(t, n, "/admin/v1/accounts/"+acct+"/quota", &q)
		var u struct{ Totals struct{ Count int64 } }
		waitLog(t, n, acct, int64(calls), &u)
		if first == "" {
			first = q.Spent
		}
		if q.Spent != first || q.InFlight != 0 || u.Totals.Count != int64(calls) {
			t.Errorf("node %d: spent %s (node 1 says %s), in flight %d, logged %d: want the same spend everywhere, 0 in flight, %d logged",
				n.ID, q.Spent, first, q.InFlight, u.Totals.Count, calls)
		}
	}
	if out := c.MustRun("cluster", "rebalance", "--node", n4.AdminURL()); strings.Contains(out, "replica moved") || strings.Contains(out, "non-voting replica") {
		t.Errorf("a second rebalance moved replicas: %q", out)
	}

	// Node 4 dies and is removed through node 1, which runs only some of its shards: it
	// leaves all three. A removed node can never rejoin a shard, nor can a node that gave a
	// shard up, so the voters those shards lost come back on a new node: node 5 joins, and
	// the next rebalance gives each of them a voter there.
	n4.Kill()
	if out := c.MustRun("cluster", "remove", "4", "--node", n1.AdminURL()); !strings.HasPrefix(out, "node 4 removed from shards 1,") || strings.Count(out, ",") != 3 {
		t.Errorf("remove said %q: want the metadata shard and node 4's three account shards", out)
	}
	n5 := c.AddNode()
	c.MustRun("cluster", "join", "--data", n5.DataDir, "--node-id", "5", "--raft-addr", n5.RaftAddr, "--via", n1.AdminURL(), "--certs", c.CertDir)
	n5.Start()
	c.WaitLeaders(30 * time.Second)
	c.WaitCaughtUp(30 * time.Second)
	out = c.MustRun("cluster", "rebalance", "--node", n1.AdminURL())
	if strings.Count(out, "replica added on node 5") != 3 || strings.Count(out, "non-voting replica on node 5 removed") != 1 {
		t.Errorf("rebalance after the removal said %q: want a voter added on node 5 to each of node 4's three shards, and its other replica removed", out)
	}
	live := []*Node{c.Nodes[0], c.Nodes[1], c.Nodes[2], n5}
	checkPlacement("after node 4's removal, node 5's join and a rebalance", live)
	c.Nodes = live
	chatOnEach()
}

// TestAVideoMadeThroughANodeWithoutItsShardCompletesAndBillsOnce: four nodes, four account
// shards of three voters. A paid video is created and polled through the node that runs no
// replica of the account's shard (its task, its reads and the finished file all live on
// other nodes): it completes, that node serves the video's bytes, and the account is billed
// once, as every node's log and balance agree.
func TestAVideoMadeThroughANodeWithoutItsShardCompletesAndBillsOnce(t *testing.T) {
	const shards = 4
	c := New(t, Options{Nodes: 4, Shards: shards, Replicas: 3})
	c.StartAll()
	putSim(t, c, VideoRoute, `{"video_ms": 1000}`)
	acct, secret := newAccountKey(t, c.Nodes[0], PaidPlan)
	shard := accounts.ShardOf(acct, membership.FirstAccountShard, shards)
	var away *Node
	for _, n := range c.Nodes {
		st, err := n.Status()
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(st.Shard, func(s node.ShardView) bool { return s.Shard == shard }) {
			away = n
		}
	}
	if away == nil {
		t.Fatalf("every node runs shard %d", shard)
	}
	if status, b := away.Admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/credits",
		map[string]any{"amount_usd": "1.00", "idempotency_key": "video-away-topup"}); status != http.StatusOK && status != http.StatusCreated {
		t.Fatalf("top-up: %d %s", status, b)
	}
	for range 3 { // the plan's 3 calls: the video is paid
		if status, b := away.Chat(secret); status != http.StatusOK {
			t.Fatalf("chat: %d %s", status, b)
		}
	}
	status, _, b := away.Do(http.MethodPost, "/v1/videos", secret, map[string]any{"model": VideoModel, "prompt": "a wave", "mode": "text", "seconds": "4"})
	var task videoTask
	if status != http.StatusOK || json.Unmarshal(b, &task) != nil || task.ID == "" {
		t.Fatalf("create on node %d: %d %s", away.ID, status, b)
	}
	var v videoTask
	waitTask(t, 30*time.Second, func() bool {
		status, _, b := away.Do(http.MethodGet, "/v1/videos/"+task.ID+"?model="+VideoModel, secret, nil)
		return status == http.StatusOK && json.Unmarshal(b, &v) == nil && v.Status == "completed"
	}, fmt.Sprintf("completed, polled on node %d", away.ID))
	if v.Metadata == nil || !strings.Contains(v.Metadata.URL, "/assets/vid/") {
		t.Fatalf("completed task %+v has no video URL", v)
	}
	path := v.Metadata.URL[strings.Index(v.Metadata.URL, "/assets/vid/"):]
	if status, h, body := away.Do(http.MethodGet, path, "", nil); status != http.StatusOK || h.Get("Content-Type") != "video/mp4" || len(body) == 0 {
		t.Errorf("node %d: GET %s: %d %q, %d bytes", away.ID, path, status, h.Get("Content-Type"), len(body))
	}
	for _, n := range c.Nodes {
		checkBilledOnce(t, n, acct, task.ID, mustMoney(t, "0.20"))
	}
}
