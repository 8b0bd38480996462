package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJoinDrainAndRemoveChangeTheMembers: a fourth node joins through node 1 as a non-voting
// replica of the metadata shard and account shard 2 and answers with a key made before it
// joined; it is promoted to voter (one shard, then the rest) and restarted; node 1 drains (its leaderships move away, then it refuses calls with 503 and
// Retry-After and exits); node 4 is removed through node 2.
func TestJoinDrainAndRemoveChangeTheMembers(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 2})
	c.StartAll()
	n1, n2 := c.Nodes[0], c.Nodes[1]
	_, secret := newKey(t, n1)

	n4 := c.AddNode()
	out := c.MustRun("cluster", "join", "--data", n4.DataDir, "--node-id", "4", "--raft-addr", n4.RaftAddr,
		"--via", n1.AdminURL(), "--certs", c.CertDir)
	if !strings.Contains(out, "node 4 added to cluster") || !strings.Contains(out, "non-voting replica of shards [1 2 3]") {
		t.Errorf("join said:\n%s", out)
	}
	n4.Start()
	c.WaitLeaders(30 * time.Second)
	if status, b := n4.Chat(secret); status != http.StatusOK {
		t.Errorf("node 4: chat with a key made before it joined: %d %s", status, b)
	}
	st, err := n2.Status()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Shard {
		if want := []uint64{4}; !slices.Equal(s.NonVoters, want) {
			t.Errorf("shard %d: non-voters %v, want %v", s.Shard, s.NonVoters, want)
		}
	}

	// Promoted in one shard, then in the rest; a second promotion changes nothing.
	for _, p := range []struct {
		args []string
		want string
	}{
		{[]string{"--shards", "2"}, "node 4 promoted to voter in shards 2\n"},
		{nil, "node 4 promoted to voter in shards 1,3\n"},
		{nil, "node 4 already votes in every shard named\n"},
	} {
		if out := c.MustRun(append([]string{"cluster", "promote", "4", "--node", n1.AdminURL()}, p.args...)...); out != p.want {
			t.Errorf("promote %v said %q, want %q", p.args, out, p.want)
		}
	}
	if status, b := n1.Admin(http.MethodPost, "/admin/cluster/members/9/promote", nil); status != http.StatusNotFound || !strings.Contains(string(b), "member_not_found") {
		t.Errorf("promoting a node that is no member: %d %s", status, b)
	}
	st, err = n2.Status()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Shard {
		if !slices.Contains(s.Voters, 4) || len(s.NonVoters) != 0 {
			t.Errorf("shard %d after the promotion: voters %v, non-voters %v", s.Shard, s.Voters, s.NonVoters)
		}
	}
	// It votes after a restart as well (it starts its shards as it joined, non-voting).
	n4.Restart()
	c.WaitLeaders(30 * time.Second)
	if status, b := n4.Chat(secret); status != http.StatusOK {
		t.Errorf("node 4 after its restart: chat: %d %s", status, b)
	}

	out = c.MustRun("cluster", "drain", "1", "--node", n1.AdminURL())
	status, h, b := n1.Do(http.MethodPost, "/v1/chat/completions", secret, map[string]any{"model": Model, "messages": []map[string]string{{"role": "user", "content": "hi"}}})
	if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || !strings.Contains(string(b), "node_draining") {
		t.Errorf("a call to the draining node: %d Retry-After %q %s", status, h.Get("Retry-After"), b)
	}
	probes := []struct {
		path   string
		status int
	}{{"/healthz", http.StatusOK}, {"/readyz", http.StatusServiceUnavailable}} // alive, not ready
	for _, p := range probes {
		if status, _, b := n1.Do(http.MethodGet, p.path, "", nil); status != p.status || !strings.Contains(string(b), `"status":"draining"`) {
			t.Errorf("%s of the draining node: %d %s, want %d draining", p.path, status, b, p.status)
		}
	}
	if status, _, b := n2.Do(http.MethodGet, "/readyz", "", nil); status != http.StatusOK || !strings.Contains(string(b), `"caught_up":true`) {
		t.Errorf("/readyz of node 2 while node 1 drains: %d %s", status, b)
	}
	if !strings.Contains(out, "node 1 leads no shard") {
		t.Errorf("drain said:\n%s", out)
	}
	if logs, exited := n1.Exited(40 * time.Second); !exited {
		t.Fatal("node 1 did not exit after its drain")
	} else if !strings.Contains(logs, "drained: finishing the calls in flight, then exiting") {
		t.Errorf("node 1's last words:\n%s", logs)
	}
	c.WaitLeaders(30 * time.Second)
	st, err = n2.Status()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Shard {
		if s.Leader == 1 {
			t.Errorf("shard %d is still led by the drained node", s.Shard)
		}
	}

	out = c.MustRun("cluster", "remove", "4", "--node", n2.AdminURL())
	if out != "node 4 removed from shards 1,2,3\n" {
		t.Errorf("remove said %q", out)
	}
	st, err = n2.Status()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range st.Members {
		if m.ID == 4 {
			t.Errorf("node 4 is still a member: %+v", m)
		}
	}
	if status, b := n2.Admin(http.MethodDelete, "/admin/cluster/members/2", nil); status != http.StatusConflict || !strings.Contains(string(b), "remove_self") {
		t.Errorf("a node removing itself: %d %s", status, b)
	}
	// The cluster's operator routes are on the admin listener only: the public port, token
	// or not, answers where they are and removes no one.
	if status, _, b := n2.Do(http.MethodDelete, "/admin/cluster/members/3", AdminToken, nil); status != http.StatusNotFound ||
		!strings.Contains(string(b), `"code":"admin_elsewhere"`) {
		t.Errorf("a removal sent to the public port: %d %s", status, b)
	}
	if st, err := n2.Status(); err != nil || len(st.Members) != 3 {
		t.Errorf("members after a removal sent to the public port: %+v %v", st.Members, err)
	}
}

// newKey creates an account and a key through n's admin API and returns the key's id and
// secret.
func newKey(t *testing.T, n *Node) (id, secret string) {
	t.Helper()
	status, b := n.Admin(http.MethodPost, "/admin/v1/accounts", map[string]any{"email": fmt.Sprintf("ct%d@example.com", time.Now().UnixNano()), "plan": Plan})
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("create account: %d %s", status, b)
	}
	var acct struct{ ID string }
	json.Unmarshal(b, &acct)
	status, b = n.Admin(http.MethodPost, "/admin/v1/accounts/"+acct.ID+"/keys", map[string]any{"name": "ct"})
	if status != http.StatusCreated && status != http.StatusOK {
		t.Fatalf("create key: %d %s", status, b)
	}
	var key struct{ ID, Key string }
	json.Unmarshal(b, &key)
	if key.ID == "" || key.Key == "" {
		t.Fatalf("create key answered %s", b)
	}
	return key.ID, key.Key
}
