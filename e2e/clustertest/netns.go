package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
)

// namespaces put each node in a network namespace of its own, joined to the test's by a veth
// pair: node i listens on 10.S.i.2 in its namespace, whose default route is 10.S.i.1, the
// test's end of the pair. Raft traffic between nodes goes through the fault proxies, which
// listen on the test's ends (Options.Netns implies Options.Faults); the simulator listens on
// node 1's gateway, which every namespace reaches through its own. Making them needs root and
// iproute2's ip; without them a test that asks for namespaces is skipped.
type namespaces struct {
	names []string // by node index
	gws   []string // the test's end of node i's veth pair
	ips   []string // node i's address in its namespace
}

// newNamespaces makes n namespaces, removed at the test's end.
func newNamespaces(t testing.TB, n int) *namespaces {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespaces need iproute2's ip")
	}
	// Names and addresses new for each set: a namespace deleted a moment ago may still hold
	// its veth while the kernel tears it down.
	pid, set := os.Getpid()%100000, nsSets.Add(1)%100
	subnet := 200 + (pid+int(set))%50
	ns := &namespaces{}
	for i := range n {
		name := fmt.Sprintf("mgct%d-%d-%d", pid, set, i+1)
		host, peer := fmt.Sprintf("mg%dh%d-%d", pid, set, i+1), fmt.Sprintf("mg%dp%d-%d", pid, set, i+1)
		gw, ip := fmt.Sprintf("10.%d.%d.1", subnet, i+1), fmt.Sprintf("10.%d.%d.2", subnet, i+1)
		t.Cleanup(func() {
			exec.Command("ip", "link", "del", host).Run() // both ends, at once
			exec.Command("ip", "netns", "del", name).Run()
		})
		for _, args := range [][]string{
			{"netns", "add", name},
			{"link", "add", host, "type", "veth", "peer", "name", peer},
			{"link", "set", peer, "netns", name},
			{"addr", "add", gw + "/24", "dev", host},
			{"link", "set", host, "up"},
			{"netns", "exec", name, "ip", "addr", "add", ip + "/24", "dev", peer},
			{"netns", "exec", name, "ip", "link", "set", peer, "up"},
			{"netns", "exec", name, "ip", "link", "set", "lo", "up"},
			{"netns", "exec", name, "ip", "route", "add", "default", "via", gw},
		} {
			if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
				t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		ns.names, ns.gws, ns.ips = append(ns.names, name), append(ns.gws, gw), append(ns.ips, ip)
	}
	return ns
}

// nsSets counts the sets of namespaces made by this process.
var nsSets atomic.Int32

// certHosts are the names node i's certificate must carry: its own address, and every
// gateway, where its peers' proxies to it listen (a peer dials the proxy, and checks the
// certificate against the host it dialled).
func (ns *namespaces) certHosts(i int) string {
	return strings.Join(append([]string{ns.ips[i]}, ns.gws...), ",")
}

// netnsCommand is bin args run in the network namespace name.
func netnsCommand(name, bin string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", name, bin}, args...)...)
}
