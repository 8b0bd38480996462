package clustertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/membership"
)

// TestBadClusterInputIsRefusedAtStartWithTheDataDirUnchanged: a node that has run is
// restarted with a cluster file that cannot be right — a repeated node id, a peer list that
// is not the one the cluster was made with, a CA that did not sign its certificate — and
// `serve` refuses with a message naming the problem, leaving every file in the data
// directory as it was. `cluster init` refuses a repeated id without creating the directory.
func TestBadClusterInputIsRefusedAtStartWithTheDataDirUnchanged(t *testing.T) {
	c := New(t, Options{Nodes: 3, Shards: 2})
	c.StartAll()
	n3 := c.Nodes[2]
	n3.Kill()
	c.MustRun("cluster", "certs", "--out", filepath.Join(c.Dir, "other-ca"), "--node", "node3=127.0.0.1")
	good, err := os.ReadFile(membership.Path(n3.DataDir))
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name string
		edit func(f *membership.File)
		want string
	}{
		{"duplicate node id", func(f *membership.File) { f.Peers[1].ID = 1 },
			"duplicate node id 1 in the peer list"},
		{"peer list that disagrees", func(f *membership.File) { f.Peers[1].Addr = "127.0.0.1:1" },
			"are not those cluster " + clusterID(t, good) + " was created with"},
		{"wrong CA", func(f *membership.File) { f.Certs.CA = filepath.Join(c.Dir, "other-ca", "ca.crt") },
			"is not signed by the cluster CA " + filepath.Join(c.Dir, "other-ca", "ca.crt")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var f membership.File
			if err := json.Unmarshal(good, &f); err != nil {
				t.Fatal(err)
			}
			tc.edit(&f)
			bad, _ := json.MarshalIndent(f, "", "  ")
			if err := os.WriteFile(membership.Path(n3.DataDir), bad, 0o600); err != nil {
				t.Fatal(err)
			}
			before := Listing(t, n3.DataDir)
			out := n3.StartRefused()
			if !strings.Contains(out, tc.want) {
				t.Errorf("serve's output does not say %q:\n%s", tc.want, out)
			}
			if after := Listing(t, n3.DataDir); after != before {
				t.Errorf("the refused start changed the data directory:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}

	// The good file back: the node starts and rejoins.
	if err := os.WriteFile(membership.Path(n3.DataDir), good, 0o600); err != nil {
		t.Fatal(err)
	}
	n3.Start()
	c.WaitLeaders(30 * time.Second)

	fresh := filepath.Join(c.Dir, "fresh")
	out, err := c.Run("cluster", "init", "--data", fresh, "--node-id", "1", "--raft-addr", c.Nodes[0].RaftAddr,
		"--peers", "1="+c.Nodes[0].RaftAddr+",1="+c.Nodes[1].RaftAddr, "--certs", c.CertDir)
	if err == nil || !strings.Contains(out, "cluster init: duplicate node id 1 in the peer list") {
		t.Errorf("init with a repeated id: %v\n%s", err, out)
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("the refused init left %s (%v)", fresh, err)
	}
	// And a directory that already belongs to a cluster is refused.
	out, err = c.Run("cluster", "init", "--data", n3.DataDir, "--node-id", "3", "--raft-addr", n3.RaftAddr,
		"--peers", membership.PeerList(peersOf(c)), "--certs", c.CertDir, "--shards", "2")
	if err == nil || !strings.Contains(out, n3.DataDir+" already belongs to cluster "+clusterID(t, good)+" as node 3") {
		t.Errorf("init over a cluster node's directory: %v\n%s", err, out)
	}
}

func clusterID(t *testing.T, file []byte) string {
	var f membership.File
	if err := json.Unmarshal(file, &f); err != nil {
		t.Fatal(err)
	}
	return f.ClusterID
}

func peersOf(c *Cluster) []membership.Peer {
	var out []membership.Peer
	for _, n := range c.Nodes {
		out = append(out, membership.Peer{ID: n.ID, Addr: n.RaftAddr})
	}
	return out
}
