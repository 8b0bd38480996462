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
`

// clusterCmd runs `modelgate cluster <sub>`.
func clusterCmd(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("cluster: name a command\n\n" + clusterUsage)
	}
	switch args[0] {
	case "certs":
		return clusterCerts(args[1:], out)
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
