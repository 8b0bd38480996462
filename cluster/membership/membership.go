// Package membership is a node's cluster file, <data>/cluster.json: which cluster the data
// directory belongs to, this node's id and Raft address, the founding peers, the shard count,
// the replicas per account shard and the certificate paths. `modelgate cluster init` and
// `join` write it once; `serve` finds it and starts in cluster mode.
package membership

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// FileName is the cluster file's name in the data directory.
const FileName = "cluster.json"

// MetaShard is the metadata shard's id; account shards are FirstAccountShard ..
// FirstAccountShard+Shards-1.
const (
	MetaShard         uint64 = 1
	FirstAccountShard uint64 = 2
)

// Defaults of `cluster init`.
const (
	DefaultShards   = 16
	DefaultReplicas = 3
)

// Peer is a founding member: its node id and the Raft address peers dial.
type Peer struct {
	ID   uint64 `json:"id"`
	Addr string `json:"raft_addr"`
}

// Certs are the node's mutual-TLS files.
type Certs struct {
	CA   string `json:"ca"`
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

// File is cluster.json.
type File struct {
	// ClusterID is the same on every node: derived from the founding peers and the shard
	// count (ClusterID), so two nodes inited from different lists do not agree on it.
	ClusterID string `json:"cluster_id"`
	NodeID    uint64 `json:"node_id"`
	RaftAddr  string `json:"raft_addr"`
	// Peers are the founding members in id order (the metadata shard's initial voters; the
	// account shards' voters are chosen from them). A joined node keeps the cluster's list.
	Peers    []Peer `json:"peers"`
	Shards   int    `json:"shards"`   // account shards
	Replicas int    `json:"replicas"` // voters per account shard
	// Join says this node was added to a running cluster: it starts every shard as a
	// non-voting replica instead of founding them.
	Join  bool  `json:"join,omitempty"`
	Certs Certs `json:"certs"`
}

// ParsePeers reads "1=host:port,2=host:port,…", refusing a repeated id or address.
func ParsePeers(s string) ([]Peer, error) {
	var peers []Peer
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		id, addr, ok := strings.Cut(part, "=")
		n, err := strconv.ParseUint(id, 10, 64)
		if !ok || err != nil || n == 0 || addr == "" {
			return nil, fmt.Errorf("peer %q is not ID=HOST:PORT with an ID > 0", part)
		}
		peers = append(peers, Peer{ID: n, Addr: addr})
	}
	if len(peers) == 0 {
		return nil, errors.New("no peers: give --peers 1=HOST:PORT,2=HOST:PORT,…")
	}
	slices.SortFunc(peers, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	return peers, checkPeers(peers)
}

func checkPeers(peers []Peer) error {
	addrs := map[string]uint64{}
	for i, p := range peers {
		if i > 0 && peers[i-1].ID == p.ID {
			return fmt.Errorf("duplicate node id %d in the peer list", p.ID)
		}
		if err := checkAddr(p.Addr); err != nil {
			return fmt.Errorf("peer %d: %w", p.ID, err)
		}
		if other, ok := addrs[p.Addr]; ok {
			return fmt.Errorf("peers %d and %d share the address %s", other, p.ID, p.Addr)
		}
		addrs[p.Addr] = p.ID
	}
	return nil
}

func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not HOST:PORT", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return fmt.Errorf("%q has no valid port", addr)
	}
	return nil
}

// ClusterID derives the cluster's id from its founding peers and shard count: the first
// 16 bytes of SHA-256 over them in id order, hex.
func ClusterID(peers []Peer, shards int) string {
	sorted := slices.Clone(peers)
	slices.SortFunc(sorted, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	var b strings.Builder
	fmt.Fprintf(&b, "shards=%d", shards)
	for _, p := range sorted {
		fmt.Fprintf(&b, ";%d=%s", p.ID, p.Addr)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// Validate says what is wrong with f: a peer list with a repeated id or address, this node
// missing from it (a founding node) or named with another address, a shard or replica count
// out of range, or a cluster id that is not the one the peers and shard count give (the list
// was edited after init).
func (f File) Validate() error {
	if f.NodeID == 0 {
		return errors.New("node id must be > 0")
	}
	if err := checkAddr(f.RaftAddr); err != nil {
		return fmt.Errorf("raft address: %w", err)
	}
	if len(f.Peers) == 0 {
		return errors.New("the peer list is empty")
	}
	sorted := slices.Clone(f.Peers)
	slices.SortFunc(sorted, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	if err := checkPeers(sorted); err != nil {
		return err
	}
	if f.Shards < 1 {
		return fmt.Errorf("shards must be ≥ 1, not %d", f.Shards)
	}
	if f.Replicas < 1 || f.Replicas > len(f.Peers) {
		return fmt.Errorf("replicas must be between 1 and the %d peers, not %d", len(f.Peers), f.Replicas)
	}
	own, listed := f.Peer(f.NodeID)
	switch {
	case f.Join && listed:
		return fmt.Errorf("node id %d is a founding peer; a joining node needs an id of its own", f.NodeID)
	case !f.Join && !listed:
		return fmt.Errorf("this node (id %d) is not in the peer list %s", f.NodeID, PeerList(f.Peers))
	case !f.Join && own.Addr != f.RaftAddr:
		return fmt.Errorf("the peer list gives node %d the address %s, not its raft address %s", f.NodeID, own.Addr, f.RaftAddr)
	}
	if f.Join {
		for _, p := range f.Peers {
			if p.Addr == f.RaftAddr {
				return fmt.Errorf("raft address %s is peer %d's", f.RaftAddr, p.ID)
			}
		}
	}
	if want := ClusterID(f.Peers, f.Shards); f.ClusterID != want {
		return fmt.Errorf("the peer list %s and %d shards are not those cluster %s was created with: the engine keeps the membership it stored (change members with cluster join and remove, never by editing %s)",
			PeerList(f.Peers), f.Shards, f.ClusterID, FileName)
	}
	return nil
}

// Peer returns the founding peer with id.
func (f File) Peer(id uint64) (Peer, bool) {
	for _, p := range f.Peers {
		if p.ID == id {
			return p, true
		}
	}
	return Peer{}, false
}

// PeerList formats peers as --peers takes them.
func PeerList(peers []Peer) string {
	parts := make([]string, len(peers))
	for i, p := range peers {
		parts[i] = fmt.Sprintf("%d=%s", p.ID, p.Addr)
	}
	return strings.Join(parts, ",")
}

// AccountShards are the account shards' ids in order.
func (f File) AccountShards() []uint64 {
	out := make([]uint64, f.Shards)
	for i := range out {
		out[i] = FirstAccountShard + uint64(i)
	}
	return out
}

// MetaVoters are the metadata shard's founding voters: the first 5 peers in id order when
// there are 5 or more, the first 3 when there are 3 or 4, else all. Every other founding
// peer follows it as a non-voting replica (it reads keys from its own copy all the same):
// a commit then waits for 3 of 5 at most, whatever the cluster's size.
func (f File) MetaVoters() []Peer {
	sorted := slices.Clone(f.Peers)
	slices.SortFunc(sorted, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	n := len(sorted)
	switch {
	case n >= 5:
		n = 5
	case n >= 3:
		n = 3
	}
	return sorted[:n]
}

// Voters are the founding voters of account shard: Replicas consecutive peers (in id order)
// starting at the shard id modulo the peer count, so shards spread evenly and every node
// computes the same set.
func (f File) Voters(shard uint64) []Peer {
	sorted := slices.Clone(f.Peers)
	slices.SortFunc(sorted, func(a, b Peer) int { return cmp.Compare(a.ID, b.ID) })
	start := int(shard % uint64(len(sorted)))
	out := make([]Peer, 0, f.Replicas)
	for i := range f.Replicas {
		out = append(out, sorted[(start+i)%len(sorted)])
	}
	return out
}

// Path is the cluster file's path in dataDir.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// Load reads dataDir's cluster file; ok is false when there is none (a single node).
func Load(dataDir string) (f File, ok bool, err error) {
	b, err := os.ReadFile(Path(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, err
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, false, fmt.Errorf("%s: %w", Path(dataDir), err)
	}
	return f, true, nil
}

// Create validates f and writes it to dataDir (created 0700), refusing a data directory
// that already belongs to a cluster.
func Create(dataDir string, f File) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if old, ok, err := Load(dataDir); err != nil || ok {
		if err != nil {
			return err
		}
		return fmt.Errorf("%s already belongs to cluster %s as node %d (%s)", dataDir, old.ClusterID, old.NodeID, Path(dataDir))
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	out, err := os.OpenFile(Path(dataDir), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
