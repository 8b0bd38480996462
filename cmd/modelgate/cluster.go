package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/modelgate/modelgate/cluster/certs"
)

const clusterUsage = `Usage:
  modelgate cluster certs --out DIR --node NAME=HOST[,HOST...] [--node ...] [--force]
      Make the cluster's mutual-TLS files in DIR: a CA (ca.crt, ca.key) unless DIR holds
      one already, and NAME.crt, NAME.key per node, valid for each HOST (IP or DNS name)
      its peers dial. Existing files are never replaced without --force (which also makes
      a new CA: certificates of the old one stop working).
  modelgate cluster init --data DIR --node-id N --raft-addr HOST:PORT
                         --peers 1=HOST:PORT,2=HOST:PORT,3=HOST:PORT --certs DIR
                         [--cert-name NAME] [--shards 16] [--replicas 3]
      Make DIR a founding node's data directory (DIR/cluster.json). Run it on every founding
      node with the same --peers and --shards; then start each with serve --data DIR.
  modelgate cluster join --data DIR --node-id N --raft-addr HOST:PORT --via URL --certs DIR
                         [--cert-name NAME]
      Ask the member whose admin listener is at URL to add this node as a non-voting
      replica of the metadata shard (and of the account shards named), then write
      DIR/cluster.json.
  modelgate cluster status --node URL [--json]
  modelgate cluster remove ID --node URL [--json]
  modelgate cluster drain ID --node URL [--json]   (URL is node ID's own)
  modelgate cluster promote ID --node URL [--shards 1,2] [--json]
  modelgate cluster rebalance --node URL [--json]
      Call a node's admin API at URL, its admin listener (server.admin_addr, such as
      http://127.0.0.1:9465; the public port serves none): the members and every shard's
      leader, voters, applied index and lag; take node ID out of every shard; move node ID's
      leaderships away, then stop it; make node ID (joined non-voting) a voter in every
      shard, or those listed, once it has caught up (remove the node it replaces first:
      an even number of voters tolerates no more failures than one fewer); spread the
      account shards' leaderships evenly over their voters (after a restart, a drain or
      a promote: a shard's leader answers its accounts' admissions).
  modelgate cluster demo [--data ./data-cluster] [--port-base 8080] [--shards 8]
      make cluster: three nodes on loopback (HTTP port-base+N, Raft port-base+10+N, admin
      API port-base+20+N) as child processes over the simulator, with a demo account and
      key; Ctrl-C stops all.

The certificates of node N are NAME.crt and NAME.key in --certs, NAME being node<N> unless
--cert-name says otherwise. Every node of a cluster uses the same admin token: set
MODELGATE_ADMIN_TOKEN, the same on every node and for these commands.
`

// clusterCmd runs `modelgate cluster <sub>`.
func clusterCmd(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("cluster: name a command\n\n" + clusterUsage)
	}
	switch args[0] {
	case "certs":
		return clusterCerts(args[1:], out)
	case "init":
		return clusterInit(args[1:], out)
	case "join":
		return clusterJoin(args[1:], out)
	case "status":
		return clusterStatus(args[1:], out)
	case "remove":
		return clusterRemove(args[1:], out)
	case "drain":
		return clusterDrain(args[1:], out)
	case "promote":
		return clusterPromote(args[1:], out)
	case "rebalance":
		return clusterRebalance(args[1:], out)
	case "demo":
		return clusterDemo(args[1:], out)
	case "help", "-h", "--help":
		fmt.Fprint(out, clusterUsage)
		return nil
	}
	return fmt.Errorf("unknown cluster command %q\n\n%s", args[0], clusterUsage)
}

func clusterCerts(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cluster certs", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("out", "", "directory for the PEM files (created 0700)")
	force := fs.Bool("force", false, "replace existing files, the CA included")
	var nodes []certs.NodeSpec
	fs.Func("node", "NAME=HOST[,HOST...]: a node certificate (repeat per node)", func(v string) error {
		name, hosts, ok := strings.Cut(v, "=")
		if !ok || name == "" || hosts == "" {
			return fmt.Errorf("%q is not NAME=HOST[,HOST...]", v)
		}
		nodes = append(nodes, certs.NodeSpec{Name: name, Hosts: strings.Split(hosts, ",")})
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("cluster certs: unexpected %q", fs.Arg(0))
	}
	if *dir == "" {
		return errors.New("cluster certs: --out DIR is required")
	}
	res, err := certs.Generate(*dir, nodes, certs.Options{Overwrite: *force})
	if err != nil {
		return fmt.Errorf("cluster certs: %w", err)
	}
	if res.CAReused {
		fmt.Fprintf(out, "signed with the CA already in %s\n", *dir)
	}
	for _, f := range res.Written {
		fmt.Fprintf(out, "wrote %s\n", f)
	}
	fmt.Fprintf(out, "give each node %s and its own NAME.crt and NAME.key; keep %s off the nodes\n",
		filepath.Join(*dir, certs.CACertFile), filepath.Join(*dir, certs.CAKeyFile))
	return nil
}
