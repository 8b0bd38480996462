package clustertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestIsolatedMetadataLeaderRefusesKeysAndAgreesAfterHealing: the metadata
// shard's leader is cut off from both peers by the fault proxies (its HTTP API still
// answers). The two others elect a new leader within a few seconds and keep serving; a key
// revoked on their side meanwhile is never accepted by the isolated node, which answers
// 503 with Retry-After in each client's error format instead; after healing it refuses the
// key with 401, and every node lists the same accounts and keys.
func TestIsolatedMetadataLeaderRefusesKeysAndAgreesAfterHealing(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 2, Faults: true})
	c.StartAll()
	revokedID, revoked := newKey(t, c.Nodes[0])
	_, kept := newKey(t, c.Nodes[0])
	old := c.metaLeader()
	others := c.except(old)

	start := time.Now()
	c.Isolate(old)
	now := c.waitMetaLeader(others, old, 10*time.Second)
	elected := time.Since(start)
	t.Logf("isolated node %d led the metadata shard; node %d leads after %v", old.ID, now.ID, elected.Round(time.Millisecond))
	if elected > 5*time.Second {
		t.Errorf("a new metadata leader took %v, want under 5 s", elected)
	}

	if status, b := others[0].Admin(http.MethodDelete, "/admin/v1/keys/"+revokedID, nil); status != http.StatusOK {
		t.Fatalf("revoke on the majority side: %d %s", status, b)
	}
	for _, n := range others {
		if status, b := n.Chat(revoked); status != http.StatusUnauthorized || !strings.Contains(string(b), "this API key has been revoked") {
			t.Errorf("node %d (majority): the revoked key: %d %s, want 401 revoked", n.ID, status, b)
		}
		if status, b := n.Chat(kept); status != http.StatusOK {
			t.Errorf("node %d (majority): a valid key: %d %s, want 200", n.ID, status, b)
		}
	}

	// The isolated node cannot confirm any key: 503 with Retry-After, in the caller's format.
	for _, tc := range []struct {
		name, path, key, body string
		header                string
		want                  string // the error's shape in that client's format
	}{
		{"chat, the revoked key", "/v1/chat/completions", revoked, `{"model":"` + Model + `","messages":[{"role":"user","content":"hi"}]}`,
			"Authorization", `"error":{"message":"the API key could not be checked: this node cannot reach the cluster's key store right now; retry shortly (another node may answer)","type":"overloaded_error"`},
		{"chat, a valid key", "/v1/chat/completions", kept, `{"model":"` + Model + `","messages":[{"role":"user","content":"hi"}]}`,
			"Authorization", `"type":"overloaded_error","param":null,"code":"key_check_unavailable"`},
		{"messages, the revoked key", "/v1/messages", revoked, `{"model":"` + Model + `","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
			"x-api-key", `{"type":"error","error":{"type":"overloaded_error","message":"the API key could not be checked`},
	} {
		begin := time.Now()
		status, h, b := old.DoRaw(http.MethodPost, tc.path, tc.header, tc.key, tc.body)
		took := time.Since(begin)
		if status != http.StatusServiceUnavailable || h.Get("Retry-After") != "1" || !strings.Contains(string(b), tc.want) {
			t.Errorf("isolated node, %s: %d Retry-After %q %s\nwant 503, Retry-After 1 and %s", tc.name, status, h.Get("Retry-After"), b, tc.want)
		}
		if took > 4*time.Second {
			t.Errorf("isolated node, %s: answered after %v, want within the key check's 2 s and a little", tc.name, took)
		}
		t.Logf("isolated node, %s: %d after %v", tc.name, status, took.Round(time.Millisecond))
	}

	c.Heal()
	c.WaitLeaders(15 * time.Second)
	var status int
	var b []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		if status, b = old.Chat(revoked); status != http.StatusServiceUnavailable {
			break
		}
	}
	if status != http.StatusUnauthorized || !strings.Contains(string(b), "this API key has been revoked") {
		t.Errorf("healed node %d: the key revoked while it was cut off: %d %s, want 401 revoked", old.ID, status, b)
	}
	c.WaitCaughtUp(10 * time.Second)
	c.sameMetadata()
}

// metaLeader is the node leading the metadata shard (shard 1).
func (c *Cluster) metaLeader() *Node { return c.shardLeader(1) }

// except is every node but n.
func (c *Cluster) except(n *Node) []*Node {
	var out []*Node
	for _, m := range c.Nodes {
		if m != n {
			out = append(out, m)
		}
	}
	return out
}

// waitMetaLeader waits until every node of nodes sees the same leader of the metadata
// shard, not old, and returns it.
func (c *Cluster) waitMetaLeader(nodes []*Node, old *Node, within time.Duration) *Node {
	c.t.Helper()
	var found *Node
	c.waitUntil(within, "no new metadata leader among the majority", func() string {
		var leader uint64
		for _, n := range nodes {
			st, err := n.Status()
			if err != nil {
				return err.Error()
			}
			l := st.Shard[0].Leader // shard 1 comes first
			if l == 0 || l == old.ID || (leader != 0 && l != leader) {
				return fmt.Sprintf("node %d sees leader %d of the metadata shard", n.ID, l)
			}
			leader = l
		}
		found = c.Nodes[leader-1]
		return ""
	})
	return found
}

// sameMetadata checks that every running node lists the same accounts and, per account,
// the same keys (the metadata shard's replicas agree).
func (c *Cluster) sameMetadata() {
	c.t.Helper()
	var want string
	var from uint64
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		got := n.metadataScan()
		if want == "" {
			want, from = got, n.ID
			continue
		}
		if got != want {
			c.t.Errorf("node %d lists other accounts or keys than node %d:\n%s\nnode %d:\n%s", n.ID, from, got, from, want)
		}
	}
}

// metadataScan is GET /admin/v1/accounts and each account's keys, as one string.
func (n *Node) metadataScan() string {
	n.c.t.Helper()
	status, b := n.Admin(http.MethodGet, "/admin/v1/accounts", nil)
	if status != http.StatusOK {
		n.c.t.Fatalf("node %d: list accounts: %d %s", n.ID, status, b)
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || len(list.Data) == 0 {
		n.c.t.Fatalf("node %d: accounts %s (%v)", n.ID, b, err)
	}
	out := string(b)
	for _, a := range list.Data {
		status, kb := n.Admin(http.MethodGet, "/admin/v1/accounts/"+a.ID+"/keys", nil)
		if status != http.StatusOK {
			n.c.t.Fatalf("node %d: keys of %s: %d %s", n.ID, a.ID, status, kb)
		}
		out += "\n" + string(kb)
	}
	return out
}
