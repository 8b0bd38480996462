package membership

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestParsePeersRefusesRepeatsAndMalformedEntries(t *testing.T) {
	tests := []struct{ in, want string }{
		{"2=127.0.0.1:7002,1=127.0.0.1:7001", "1=127.0.0.1:7001,2=127.0.0.1:7002"},
		{"1=a:1,1=b:2", "duplicate node id 1 in the peer list"},
		{"1=a:1,2=a:1", "peers 1 and 2 share the address a:1"},
		{"0=a:1", `peer "0=a:1" is not ID=HOST:PORT with an ID > 0`},
		{"1=a", `peer 1: "a" is not HOST:PORT`},
		{"", "no peers: give --peers 1=HOST:PORT,2=HOST:PORT,…"},
	}
	for _, tc := range tests {
		peers, err := ParsePeers(tc.in)
		got := PeerList(peers)
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("ParsePeers(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The voters of account shard s start at peer s mod N (in id order) and take Replicas
// consecutive peers, so every node computes the same placement and leaders spread.
func TestVotersRotateByShardID(t *testing.T) {
	peers, _ := ParsePeers("3=c:3,1=a:1,2=b:2,4=d:4")
	f := File{Peers: peers, Replicas: 3, Shards: 4}
	want := map[uint64]string{2: "3,4,1", 3: "4,1,2", 4: "1,2,3", 5: "2,3,4"}
	for _, s := range f.AccountShards() {
		var got string
		for i, p := range f.Voters(s) {
			if i > 0 {
				got += ","
			}
			got += fmt.Sprint(p.ID)
		}
		if got != want[s] {
			t.Errorf("shard %d voters %s, want %s", s, got, want[s])
		}
	}
}

func TestClusterIDIgnoresListOrderButNotContent(t *testing.T) {
	a, _ := ParsePeers("1=a:1,2=b:2")
	b := []Peer{{2, "b:2"}, {1, "a:1"}}
	if ClusterID(a, 64) != ClusterID(b, 64) {
		t.Error("the same peers in another order give another id")
	}
	if ClusterID(a, 64) == ClusterID(a, 32) || ClusterID(a, 64) == ClusterID([]Peer{{1, "a:1"}, {2, "b:3"}}, 64) {
		t.Error("another shard count or address gives the same id")
	}
}

func TestCreateWritesOnceAndLoadReadsItBack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	peers, _ := ParsePeers("1=127.0.0.1:7001,2=127.0.0.1:7002")
	f := File{ClusterID: ClusterID(peers, 8), NodeID: 2, RaftAddr: "127.0.0.1:7002", Peers: peers, Shards: 8, Replicas: 2}
	if err := Create(dir, f); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Load(dir)
	if err != nil || !ok || got.ClusterID != f.ClusterID || got.NodeID != 2 || len(got.Peers) != 2 {
		t.Fatalf("Load = %+v, %v, %v", got, ok, err)
	}
	want := dir + " already belongs to cluster " + f.ClusterID + " as node 2 (" + Path(dir) + ")"
	if err := Create(dir, f); err == nil || err.Error() != want {
		t.Errorf("second Create: %v, want %s", err, want)
	}
	if info, _ := os.Stat(Path(dir)); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", info.Mode())
	}
	if _, ok, err := Load(t.TempDir()); ok || err != nil {
		t.Errorf("Load of a directory without a cluster file: %v, %v", ok, err)
	}
}

func TestTheMetadataShardHasThreeOrFiveFoundingVoters(t *testing.T) {
	for _, c := range []struct{ peers, voters int }{{1, 1}, {2, 2}, {3, 3}, {4, 3}, {5, 5}, {6, 5}, {9, 5}} {
		var f File
		for id := c.peers; id >= 1; id-- { // out of order: the lowest ids vote
			f.Peers = append(f.Peers, Peer{ID: uint64(id), Addr: fmt.Sprintf("10.0.0.%d:7001", id)})
		}
		got := f.MetaVoters()
		if len(got) != c.voters {
			t.Errorf("%d peers: %d metadata voters, want %d", c.peers, len(got), c.voters)
		}
		for i, p := range got {
			if p.ID != uint64(i+1) {
				t.Errorf("%d peers: voter %d is node %d, want %d", c.peers, i, p.ID, i+1)
			}
		}
	}
}
