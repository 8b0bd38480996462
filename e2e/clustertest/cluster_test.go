package clustertest

import (
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// TestKeyMadeOnOneNodeServesOnAllAndItsRevocationHoldsEverywhere: three processes start and
// elect a leader of every shard; an account and key created through node 1's admin API
// answer on nodes 2 and 3; the key revoked on node 1 is refused by every node right after
// the delete returned; cluster status lists every member and a leader per shard, and every
// replica of the idle cluster with lag 0.
func TestKeyMadeOnOneNodeServesOnAllAndItsRevocationHoldsEverywhere(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 4})
	c.StartAll()
	n1 := c.Nodes[0]

	keyID, secret := newKey(t, n1)

	for _, n := range c.Nodes {
		if status, b := n.Chat(secret); status != http.StatusOK {
			t.Errorf("node %d: chat with the new key: %d %s", n.ID, status, b)
		}
	}

	if status, b := n1.Admin(http.MethodDelete, "/admin/v1/keys/"+keyID, nil); status != http.StatusOK {
		t.Fatalf("revoke: %d %s", status, b)
	}
	for _, n := range []*Node{c.Nodes[2], c.Nodes[1], n1} {
		status, b := n.Chat(secret)
		if status != http.StatusUnauthorized || !strings.Contains(string(b), "this API key has been revoked") {
			t.Errorf("node %d right after the revocation: %d %s, want 401 revoked", n.ID, status, b)
		}
	}

	st, err := c.Nodes[1].Status()
	if err != nil {
		t.Fatal(err)
	}
	var members []string
	for _, m := range st.Members {
		members = append(members, fmt.Sprintf("%d@%s voting in %d", m.ID, m.RaftAddr, m.Voting))
	}
	want := []string{}
	for _, n := range c.Nodes {
		want = append(want, fmt.Sprintf("%d@%s voting in 5", n.ID, n.RaftAddr)) // the metadata shard and 4 account shards
	}
	if strings.Join(members, "; ") != strings.Join(want, "; ") {
		t.Errorf("members: %s\nwant:    %s", strings.Join(members, "; "), strings.Join(want, "; "))
	}
	if len(st.Shard) != 5 {
		t.Errorf("node 2 runs %d shards, want 5", len(st.Shard))
	}
	// Idle and healthy: the status API shows every replica at its shard's last index, lag 0
	// (membership changes and new leaders' empty entries count as applied).
	c.WaitCaughtUp(5 * time.Second)

	// The CLI's table: every shard on a line with a leader (a number, not "none").
	out := c.MustRun("cluster", "status", "--node", c.Nodes[2].AdminURL())
	for shard := 1; shard <= 5; shard++ {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +[1-3] +1,2,3 +- +\d+ +\d+$`, shard)).MatchString(out) {
			t.Errorf("cluster status has no line for shard %d with a leader and voters 1,2,3:\n%s", shard, out)
		}
	}
	for _, n := range c.Nodes {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +%s +5 +0 +\d+$`, n.ID, regexp.QuoteMeta(n.RaftAddr))).MatchString(out) {
			t.Errorf("cluster status has no member line for node %d:\n%s", n.ID, out)
		}
	}
}
