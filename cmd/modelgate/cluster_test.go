package main

import (
	"bytes"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClusterCertsWritesACAAndNodeCertificates(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	var out bytes.Buffer
	err := clusterCmd([]string{"certs", "--out", dir, "--node", "n1=127.0.0.1,localhost", "--node", "n2=10.0.0.2"}, &out)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, f := range []string{"ca.key", "ca.crt", "n1.key", "n1.crt", "n2.key", "n2.crt"} {
		want.WriteString("wrote " + filepath.Join(dir, f) + "\n")
	}
	want.WriteString("give each node " + filepath.Join(dir, "ca.crt") + " and its own NAME.crt and NAME.key; keep " + filepath.Join(dir, "ca.key") + " off the nodes\n")
	if out.String() != want.String() {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want.String())
	}
	if _, err := tls.LoadX509KeyPair(filepath.Join(dir, "n1.crt"), filepath.Join(dir, "n1.key")); err != nil {
		t.Error(err)
	}

	// Again with n1: refused, nothing written; with a new node: the CA is reused.
	out.Reset()
	err = clusterCmd([]string{"certs", "--out", dir, "--node", "n1=127.0.0.1"}, &out)
	if want := "cluster certs: " + filepath.Join(dir, "n1.crt") + " exists: refusing to overwrite it (move it away, or overwrite)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	out.Reset()
	if err := clusterCmd([]string{"certs", "--out", dir, "--node", "n3=127.0.0.3"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "signed with the CA already in "+dir+"\nwrote "+filepath.Join(dir, "n3.key")+"\n") {
		t.Errorf("output: %s", out.String())
	}
	out.Reset()
	if err := clusterCmd([]string{"certs", "--out", dir, "--node", "n1=127.0.0.1", "--force"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "wrote "+filepath.Join(dir, "ca.key")+"\n") {
		t.Errorf("--force output: %s", out.String())
	}
}

func TestClusterCommandErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		args []string
		want string // the error's first line
	}{
		{nil, "cluster: name a command"},
		{[]string{"rejoin"}, `unknown cluster command "rejoin"`},
		{[]string{"init", "--peers", "1=127.0.0.1:7001"}, "cluster init: --data, --raft-addr, --certs, --node-id required"},
		{[]string{"init", "--data", dir + "/n1", "--node-id", "1", "--raft-addr", "127.0.0.1:7001", "--certs", dir},
			"cluster init: --peers required"},
		{[]string{"init", "--data", dir + "/n1", "--node-id", "1", "--raft-addr", "127.0.0.1:7001", "--certs", dir,
			"--peers", "1=127.0.0.1:7001,2=127.0.0.1:7002,1=127.0.0.1:7003"}, "cluster init: duplicate node id 1 in the peer list"},
		{[]string{"init", "--data", dir + "/n1", "--node-id", "4", "--raft-addr", "127.0.0.1:7004", "--certs", dir,
			"--peers", "1=127.0.0.1:7001,2=127.0.0.1:7002"}, "cluster init: this node (id 4) is not in the peer list 1=127.0.0.1:7001,2=127.0.0.1:7002"},
		{[]string{"init", "--data", dir + "/n1", "--node-id", "1", "--raft-addr", "127.0.0.1:7001", "--certs", dir,
			"--peers", "1=127.0.0.1:7001"}, "cluster init: read cluster CA " + dir + "/ca.crt: open " + dir + "/ca.crt: no such file or directory"},
		{[]string{"join", "--data", dir + "/n4", "--node-id", "4", "--raft-addr", "127.0.0.1:7004", "--certs", dir}, "cluster join: --via URL required"},
		{[]string{"status"}, "cluster status: --node URL required"},
		{[]string{"rebalance"}, "cluster rebalance: --node URL required"},
		{[]string{"drain", "x", "--node", "http://127.0.0.1:1"}, `cluster drain: "x" is not a node id`},
		{[]string{"remove", "--node", "http://127.0.0.1:1"}, "cluster remove: name one node id"},
		{[]string{"promote", "4"}, "cluster promote: --node URL required"},
		{[]string{"promote", "0", "--node", "http://127.0.0.1:1"}, `cluster promote: "0" is not a node id`},
		{[]string{"certs", "--node", "n1=127.0.0.1"}, "cluster certs: --out DIR is required"},
		{[]string{"certs", "--out", dir}, "cluster certs: name at least one node"},
		{[]string{"certs", "--out", dir, "--node", "n1"}, `invalid value "n1" for flag -node: "n1" is not NAME=HOST[,HOST...]`},
		{[]string{"certs", "--out", dir, "--node", "n1=a,,b"}, "cluster certs: node n1: an empty host name"},
		{[]string{"certs", "--out", dir, "--node", "n1=a", "extra"}, `cluster certs: unexpected "extra"`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := clusterCmd(tc.args, &bytes.Buffer{})
			if err == nil {
				t.Fatal("no error")
			}
			if first, _, _ := strings.Cut(err.Error(), "\n"); first != tc.want {
				t.Errorf("err = %q, want %q", first, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed commands wrote %d files", len(entries))
	}
}
