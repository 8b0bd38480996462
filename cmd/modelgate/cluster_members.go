package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/cluster/engine"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/transport/node"
)

// nodeFlags are the flags init and join share: where the node keeps its data, who it is,
// and its certificates.
type nodeFlags struct {
	data, raftAddr, certDir, certName string
	nodeID                            uint64
}

func (f *nodeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.data, "data", "", "the node's data directory")
	fs.Uint64Var(&f.nodeID, "node-id", 0, "this node's id (> 0, unique in the cluster, never reused)")
	fs.StringVar(&f.raftAddr, "raft-addr", "", "HOST:PORT peers reach this node's Raft transport at")
	fs.StringVar(&f.certDir, "certs", "", "directory with ca.crt and this node's NAME.crt and NAME.key (modelgate cluster certs)")
	fs.StringVar(&f.certName, "cert-name", "", "NAME of this node's certificate files (default node<ID>)")
}

// required names the missing flags.
func (f *nodeFlags) required(cmd string) error {
	var missing []string
	for _, m := range []struct{ name, v string }{{"--data", f.data}, {"--raft-addr", f.raftAddr}, {"--certs", f.certDir}} {
		if m.v == "" {
			missing = append(missing, m.name)
		}
	}
	if f.nodeID == 0 {
		missing = append(missing, "--node-id")
	}
	if len(missing) > 0 {
		return fmt.Errorf("cluster %s: %s required", cmd, strings.Join(missing, ", "))
	}
	return nil
}

// certs refuses a data directory holding a single node's store and returns the node's
// certificate paths (absolute, so serve finds them from any working directory) once the
// engine's own check passed.
func (f *nodeFlags) certs(cmd string) (membership.Certs, error) {
	if _, err := os.Stat(filepath.Join(f.data, "pebble")); err == nil {
		if _, ok, _ := membership.Load(f.data); !ok {
			return membership.Certs{}, fmt.Errorf("cluster %s: %s holds a single node's store; a cluster node starts from an empty data directory", cmd, f.data)
		}
	}
	dir, err := filepath.Abs(f.certDir)
	if err != nil {
		return membership.Certs{}, err
	}
	name := f.certName
	if name == "" {
		name = "node" + strconv.FormatUint(f.nodeID, 10)
	}
	c := membership.Certs{CA: filepath.Join(dir, certs.CACertFile), Cert: filepath.Join(dir, certs.NodeCertFile(name)), Key: filepath.Join(dir, certs.NodeKeyFile(name))}
	// The engine's own check, before anything is written.
	err = engine.CheckCerts(engine.Config{NodeID: f.nodeID, RaftAddr: f.raftAddr, DataDir: f.data, CAFile: c.CA, CertFile: c.Cert, KeyFile: c.Key})
	if err != nil {
		return membership.Certs{}, fmt.Errorf("cluster %s: %w", cmd, err)
	}
	return c, nil
}

// clusterInit writes a founding node's cluster file.
func clusterInit(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cluster init", flag.ContinueOnError)
	fs.SetOutput(out)
	var nf nodeFlags
	nf.register(fs)
	peerList := fs.String("peers", "", "the founding members: 1=HOST:PORT,2=HOST:PORT,… (the same list on every node)")
	shards := fs.Int("shards", membership.DefaultShards, "account shards (fixed for the cluster's life)")
	replicas := fs.Int("replicas", 0, fmt.Sprintf("voters per account shard (default %d, or every peer when fewer)", membership.DefaultReplicas))
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := nf.required("init"); err != nil {
		return err
	}
	if *peerList == "" {
		return errors.New("cluster init: --peers required")
	}
	peers, err := membership.ParsePeers(*peerList)
	if err != nil {
		return fmt.Errorf("cluster init: %w", err)
	}
	if *replicas == 0 {
		*replicas = min(membership.DefaultReplicas, len(peers))
	}
	f := membership.File{ClusterID: membership.ClusterID(peers, *shards), NodeID: nf.nodeID, RaftAddr: nf.raftAddr,
		Peers: peers, Shards: *shards, Replicas: *replicas}
	if err := f.Validate(); err != nil { // before the certificates: the likelier mistake
		return fmt.Errorf("cluster init: %w", err)
	}
	if f.Certs, err = nf.certs("init"); err != nil {
		return err
	}
	if err := membership.Create(nf.data, f); err != nil {
		return fmt.Errorf("cluster init: %w", err)
	}
	fmt.Fprintf(out, "wrote %s: node %d of cluster %s (%d peers, %d account shards × %d replicas)\nstart it with: MODELGATE_ADMIN_TOKEN=… modelgate serve --config FILE --data %s\n",
		membership.Path(nf.data), f.NodeID, f.ClusterID, len(peers), f.Shards, f.Replicas, nf.data)
	return nil
}

// clusterJoin asks a member to add this node (non-voting) and writes its cluster file.
func clusterJoin(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cluster join", flag.ContinueOnError)
	fs.SetOutput(out)
	var nf nodeFlags
	nf.register(fs)
	via := fs.String("via", "", "URL of a member's admin listener (server.admin_addr; its admin API adds this node)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := nf.required("join"); err != nil {
		return err
	}
	if *via == "" {
		return errors.New("cluster join: --via URL required")
	}
	if _, ok, err := membership.Load(nf.data); ok || err != nil {
		return cmpErr(err, fmt.Errorf("cluster join: %s already belongs to a cluster (%s)", nf.data, membership.Path(nf.data)))
	}
	c, err := nf.certs("join")
	if err != nil {
		return err
	}
	cl, err := clusterClient(*via, out)
	if err != nil {
		return err
	}
	raw, err := cl.call(http.MethodPost, "/admin/cluster/members", node.JoinRequest{NodeID: nf.nodeID, RaftAddr: nf.raftAddr})
	if err != nil {
		return fmt.Errorf("cluster join: %w", err)
	}
	var ans node.JoinAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("cluster join: the member's answer: %w", err)
	}
	f := membership.File{ClusterID: ans.ClusterID, NodeID: nf.nodeID, RaftAddr: nf.raftAddr, Peers: ans.Peers, Shards: ans.Shards,
		Replicas: ans.Replicas, Join: true, Certs: c}
	if err := membership.Create(nf.data, f); err != nil {
		return fmt.Errorf("cluster join: added to shards %v, but: %w", ans.Joined, err)
	}
	fmt.Fprintf(out, "node %d added to cluster %s as a non-voting replica of shards %v\nwrote %s; start it with: MODELGATE_ADMIN_TOKEN=… modelgate serve --config FILE --data %s\n",
		nf.nodeID, ans.ClusterID, ans.Joined, membership.Path(nf.data), nf.data)
	return nil
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// parseAll parses args and refuses words left over.
func parseAll(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%s: unexpected %q", fs.Name(), fs.Arg(0))
	}
	return nil
}

// clusterClient is an admin client of the node at url, with the token from
// MODELGATE_ADMIN_TOKEN (the same on every node).
func clusterClient(url string, out io.Writer) (adminClient, error) {
	token := os.Getenv("MODELGATE_ADMIN_TOKEN")
	if token == "" {
		return adminClient{}, errors.New("set MODELGATE_ADMIN_TOKEN, the cluster's admin token")
	}
	return adminClient{url: strings.TrimRight(url, "/"), token: token, out: out}, nil
}
