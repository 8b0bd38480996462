// Package clustertest runs real multi-process clusters for tests: the modelgate binary
// built once per test run, N nodes on free loopback ports with mutual TLS from
// `modelgate cluster certs`, each inited by `modelgate cluster init` and started by
// `modelgate serve` with the simulator as upstream; kill -9, SIGSTOP/SIGCONT and restart;
// wait for a leader of every shard; call the admin API and the API of any node.
package clustertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelgate/modelgate/cluster/faultproxy"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node"
)

// AdminToken is every node's admin token (a cluster shares one).
const AdminToken = "mg-admin-clustertest-2468G5queFDCLiiWVxvOiVshw6uM3ZBY"

// Model is the catalog's chat model and VideoModel its video model (route VideoRoute), both
// served by the simulator; Plan its one plan.
const (
	Model      = "ct-chat"
	VideoModel = "ct-video"
	VideoRoute = "ct-v"
	Plan       = "ct-plan"
	// PaidPlan allows 3 calls a window: the rest are paid from credits.
	PaidPlan = "ct-paid"
	// BasicPlan (3 calls a window) and ProPlan (1000) are sold as Stripe subscriptions;
	// an account whose subscription ends returns to free.
	BasicPlan = "ct-basic"
	ProPlan   = "ct-pro"
	// RPM10Plan admits 10 calls a key per sliding minute.
	RPM10Plan = "ct-rpm10"
)

const simKeyEnv = "MODELGATE_CT_SIM_KEY"

const catalogYAML = `server:
  connect_timeout: 5s
  first_byte_timeout: 10s
  idle_stream_timeout: 10s
models:
  - id: ` + Model + `
    kind: chat
    context_length: 100000
    max_output_tokens: 1000
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes: [{id: ct-a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: sim-model, credential_env: ` + simKeyEnv + `}]
  - id: ` + VideoModel + `
    kind: video
    pricing: {prompt: "0", completion: "0.05"}
    routes: [{id: ` + VideoRoute + `, format: chat, base_url: "{{SIM}}/r/` + VideoRoute + `/v1", upstream_model: sim-video, credential_env: ` + simKeyEnv + `}]
plans:
  - {name: ` + Plan + `, window_requests: 1000000, window: 720h, burst_rpm: 100000, allow_automated: true}
  - {name: ` + PaidPlan + `, window_requests: 3, window: 720h, allow_automated: true}
  - {name: ` + RPM10Plan + `, window_requests: 1000000, window: 720h, burst_rpm: 10, allow_automated: true}
  - {name: free, window_requests: 10, window: 720h, allow_automated: true}
  - {name: ` + BasicPlan + `, window_requests: 3, window: 720h, allow_automated: true, stripe_price: price_ct_basic}
  - {name: ` + ProPlan + `, window_requests: 1000, window: 720h, allow_automated: true, stripe_price: price_ct_pro}
billing:
  stripe: {secret_key_env: ` + stripeKeyEnv + `, webhook_secret_env: ` + stripeSecretEnv + `, api_base: "{{SIM}}", credit_amounts: ["10.00"]}
`

// The simulator's Stripe account: its API key, and the secret its webhooks are signed with.
const (
	stripeKeyEnv    = "MODELGATE_CT_STRIPE_KEY"
	stripeSecretEnv = "MODELGATE_CT_STRIPE_WHSEC"
	StripeSecret    = "whsec_clustertest"
)

var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// Binary builds cmd/modelgate once per test binary run and returns its path (with the tags
// the tests were built with: a faults build's nodes have its fault points). Call Cleanup
// from TestMain to remove it.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "clustertest-bin-")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "modelgate")
		cmd := exec.Command("go", append(append([]string{"build"}, buildTags...), "-o", build.bin, "github.com/modelgate/modelgate/cmd/modelgate")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// Cleanup removes the built binary.
func Cleanup() {
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
}

// Options shape a cluster.
type Options struct {
	Nodes    int // default 3
	Shards   int // account shards; default 4 (small, so a test starts fast)
	Replicas int // default 3, at most Nodes
	// Faults puts a fault proxy between every ordered pair of nodes (faultproxy.Net): node i
	// dials node j through proxy (i→j), so Isolate, Cut, OneWay and Heal work. Nodes added
	// later (AddNode) are not behind it.
	Faults bool
	// Env is added to every node's environment (a faults build's supervise.PanicAtEnv).
	Env []string
	// Netns runs each founding node in a network namespace of its own (netns.go), the raft
	// traffic between them through the fault proxies (it implies Faults). Needs root.
	Netns bool
}

// Cluster is N nodes inited on loopback; Start runs them.
type Cluster struct {
	t       testing.TB
	Bin     string
	Dir     string
	CertDir string
	Catalog string
	SimURL  string // the simulator's base URL (its control API: /_sim/routes/…)
	Sim     *simulator.Server
	Nodes   []*Node // Nodes[i] has id i+1
	// Net is the fault proxies between the founding nodes' raft transports
	// (Options.Faults), else nil; Internal is those between their internal listeners
	// (forwarded quota steps, video copies), which every fault of the Cluster's also hits.
	Net      *faultproxy.Net
	Internal *faultproxy.Net
	env      []string    // Options.Env
	ns       *namespaces // Options.Netns, else nil
}

// Node is one member: its data directory, its addresses (fixed across restarts) and its
// process while it runs.
type Node struct {
	c        *Cluster
	ID       uint64
	DataDir  string
	RaftAddr string
	HTTPAddr string
	// InternalAddr is its internal listener's (node.InternalAddrEnv): fixed, so a fault proxy
	// can stand in front of it.
	InternalAddr string
	// AdminAddr is its admin listener's: the admin API and /admin/cluster, never on HTTPAddr.
	AdminAddr string
	routes    string // the peer routes file it starts with (Options.Faults), or ""
	netns     string // the network namespace it runs in (Options.Netns), or "" for the test's
	proc      *proc
}

// URL is the node's gateway URL.
func (n *Node) URL() string { return "http://" + n.HTTPAddr }

// AdminURL is the node's admin listener's URL.
func (n *Node) AdminURL() string { return "http://" + n.AdminAddr }

// New makes the certificates and inits every node (modelgate cluster certs and init); no
// process runs yet.
func New(t testing.TB, opt Options) *Cluster {
	t.Helper()
	opt.Nodes = cmpOr(opt.Nodes, 3)
	opt.Shards = cmpOr(opt.Shards, 4)
	opt.Replicas = cmpOr(opt.Replicas, min(3, opt.Nodes))
	var ns *namespaces
	simHost := "127.0.0.1"
	if opt.Netns {
		opt.Faults = true
		ns = newNamespaces(t, opt.Nodes)
		simHost = ns.gws[0] // every namespace reaches it through its own gateway
	}
	sim, simURL, stopSim, err := simulator.Start(simHost + ":0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopSim)
	c := &Cluster{t: t, Bin: Binary(t), Dir: t.TempDir(), Sim: sim, SimURL: simURL, env: opt.Env, ns: ns}
	c.CertDir = filepath.Join(c.Dir, "certs")
	c.Catalog = filepath.Join(c.Dir, "catalog.yaml")
	if err := os.WriteFile(c.Catalog, []byte(strings.ReplaceAll(catalogYAML, "{{SIM}}", simURL)), 0o600); err != nil {
		t.Fatal(err)
	}
	certArgs := []string{"cluster", "certs", "--out", c.CertDir}
	var peers []string
	for i := range opt.Nodes {
		n := &Node{c: c, ID: uint64(i + 1), DataDir: filepath.Join(c.Dir, fmt.Sprintf("node%d", i+1))}
		hosts := "127.0.0.1"
		if ns != nil {
			n.netns, hosts = ns.names[i], ns.certHosts(i) // a namespace of its own: fixed ports are free
			n.RaftAddr, n.HTTPAddr, n.AdminAddr, n.InternalAddr = ns.ips[i]+":7001", ns.ips[i]+":8080", ns.ips[i]+":9465", ns.ips[i]+":7002"
		} else {
			n.RaftAddr, n.HTTPAddr, n.AdminAddr, n.InternalAddr = testutil.FreeAddr(t), testutil.FreeAddr(t), testutil.FreeAddr(t), testutil.FreeAddr(t)
		}
		c.Nodes = append(c.Nodes, n)
		certArgs = append(certArgs, "--node", fmt.Sprintf("node%d=%s", n.ID, hosts))
		peers = append(peers, fmt.Sprintf("%d=%s", n.ID, n.RaftAddr))
	}
	c.MustRun(certArgs...)
	if opt.Faults {
		c.startNet()
	}
	for _, n := range c.Nodes {
		c.MustRun("cluster", "init", "--data", n.DataDir, "--node-id", fmt.Sprint(n.ID), "--raft-addr", n.RaftAddr,
			"--peers", strings.Join(peers, ","), "--certs", c.CertDir, "--shards", fmt.Sprint(opt.Shards), "--replicas", fmt.Sprint(opt.Replicas))
	}
	return c
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Run runs the binary with args (the admin token in its environment) and returns its
// combined output and error.
func (c *Cluster) Run(args ...string) (string, error) {
	cmd := exec.Command(c.Bin, args...)
	cmd.Env = append(os.Environ(), "MODELGATE_ADMIN_TOKEN="+AdminToken)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// MustRun is Run, failing the test on an error.
func (c *Cluster) MustRun(args ...string) string {
	c.t.Helper()
	out, err := c.Run(args...)
	if err != nil {
		c.t.Fatalf("modelgate %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// StartAll starts every node (in parallel: each waits for its peers to elect) and waits
// until every shard has a leader.
func (c *Cluster) StartAll() {
	c.t.Helper()
	errs := make([]error, len(c.Nodes))
	var wg sync.WaitGroup
	for i, n := range c.Nodes {
		wg.Go(func() { errs[i] = n.start() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			c.t.Fatal(err)
		}
	}
	c.WaitLeaders(30 * time.Second)
}

// Start starts the node and waits until it serves HTTP.
func (n *Node) Start() {
	n.c.t.Helper()
	if err := n.start(); err != nil {
		n.c.t.Fatal(err)
	}
}

func (n *Node) start() error {
	if n.proc != nil && n.proc.running() {
		return fmt.Errorf("node %d already runs", n.ID)
	}
	p, err := n.serve()
	if err != nil {
		return err
	}
	n.proc = p
	n.c.t.Cleanup(func() {
		p.kill()
		p.logs.keep(n.ID)
		if n.c.t.Failed() {
			n.c.t.Logf("node %d output:\n%s", n.ID, p.logs.tail())
		}
	})
	return p.waitServing(20 * time.Second)
}

// serve starts the node's `modelgate serve` process.
func (n *Node) serve() (*proc, error) {
	env := append([]string{"MODELGATE_ADMIN_TOKEN=" + AdminToken, simKeyEnv + "=ct-sim", node.InternalAddrEnv + "=" + n.InternalAddr,
		stripeKeyEnv + "=sk_test_clustertest", stripeSecretEnv + "=" + StripeSecret}, n.c.env...)
	if n.routes != "" {
		env = append(env, node.PeerRoutesEnv+"="+n.routes)
	}
	args := []string{"serve", "--config", n.c.Catalog, "--data", n.DataDir, "--addr", n.HTTPAddr, "--admin-addr", n.AdminAddr, "--metrics-addr", "off"}
	if n.netns != "" {
		return startCmd(netnsCommand(n.netns, n.c.Bin, args...), fmt.Sprintf("node%d", n.ID), env)
	}
	return startProc(n.c.Bin, fmt.Sprintf("node%d", n.ID), env, args...)
}

// Kill sends SIGKILL and waits for the process to be gone.
func (n *Node) Kill() { n.proc.kill() }

// Stop sends SIGSTOP (the process hangs, its sockets stay open); Cont resumes it.
func (n *Node) Stop() { n.proc.signal(sigStop) }
func (n *Node) Cont() { n.proc.signal(sigCont) }

// Restart kills the node and starts it again on the same data and addresses.
func (n *Node) Restart() {
	n.c.t.Helper()
	n.Kill()
	n.Start()
}

// Running says the node's process is alive.
func (n *Node) Running() bool { return n.proc != nil && n.proc.running() }

// Exited waits up to d for the process to exit by itself and returns its output.
func (n *Node) Exited(d time.Duration) (string, bool) {
	select {
	case <-n.proc.done:
		return n.proc.logs.tail(), true
	case <-time.After(d):
		return "", false
	}
}

// Output is the process's output so far (the last few KiB).
func (n *Node) Output() string { return n.proc.logs.tail() }

// Logged is how many times s occurs in the process's output (its first 4 MiB).
func (n *Node) Logged(s string) int { return n.proc.logs.count(s) }

// Do sends one request to the node's public port and returns the status, headers and body.
func (n *Node) Do(method, path, bearer string, body any) (int, http.Header, []byte) {
	n.c.t.Helper()
	return n.do(n.URL(), method, path, bearer, body)
}

func (n *Node) do(base, method, path, bearer string, body any) (int, http.Header, []byte) {
	n.c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			n.c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		n.c.t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	return n.send(req)
}

// send sends a JSON request and reads the whole answer.
func (n *Node) send(req *http.Request) (int, http.Header, []byte) {
	n.c.t.Helper()
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		n.c.t.Fatalf("node %d: %s %s: %v", n.ID, req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		n.c.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// Admin calls the node's admin API, on its admin listener, with the cluster's token.
func (n *Node) Admin(method, path string, body any) (int, []byte) {
	n.c.t.Helper()
	status, _, b := n.do(n.AdminURL(), method, path, AdminToken, body)
	return status, b
}

// Chat sends a one-message chat completion with key and returns the status and body.
func (n *Node) Chat(key string) (int, []byte) {
	n.c.t.Helper()
	status, _, b := n.Do(http.MethodPost, "/v1/chat/completions", key, chatBody())
	return status, b
}

// chatBody is Chat's request: one short message to Model.
func chatBody() map[string]any {
	return map[string]any{"model": Model, "messages": []map[string]string{{"role": "user", "content": "hi"}}, "max_tokens": 5}
}

// StartRefused runs the node's serve expecting it to refuse to start: it returns the
// output of the exited process; a node that serves instead is killed and fails the test.
func (n *Node) StartRefused() string {
	n.c.t.Helper()
	p, err := n.serve()
	if err != nil {
		n.c.t.Fatal(err)
	}
	defer p.kill()
	select {
	case <-p.done:
		return p.logs.tail()
	case <-p.logs.serving:
		n.c.t.Fatalf("node %d started instead of refusing:\n%s", n.ID, p.logs.tail())
	case <-time.After(20 * time.Second):
		n.c.t.Fatalf("node %d neither refused nor served in 20 s:\n%s", n.ID, p.logs.tail())
	}
	return ""
}

// Listing is every file under dir with its size and mode, one per line, in path order: two
// listings are equal when nothing was created, removed or resized.
func Listing(t testing.TB, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		size := info.Size()
		if d.IsDir() {
			size = 0 // a directory's size is the file system's business
		}
		fmt.Fprintf(&b, "%s %d %s\n", rel, size, info.Mode())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// AddNode makes a certificate for one more node (signed by the cluster's CA) and gives it
// a data directory and addresses; it joins with `modelgate cluster join`, not init.
func (c *Cluster) AddNode() *Node {
	c.t.Helper()
	n := &Node{c: c, ID: uint64(len(c.Nodes) + 1), RaftAddr: testutil.FreeAddr(c.t), HTTPAddr: testutil.FreeAddr(c.t), AdminAddr: testutil.FreeAddr(c.t), InternalAddr: testutil.FreeAddr(c.t)}
	n.DataDir = filepath.Join(c.Dir, fmt.Sprintf("node%d", n.ID))
	c.MustRun("cluster", "certs", "--out", c.CertDir, "--node", fmt.Sprintf("node%d=127.0.0.1", n.ID))
	c.Nodes = append(c.Nodes, n)
	return n
}

// DoRaw sends body as it is, with key in header (Authorization gets "Bearer "), and returns
// the status, headers and body.
func (n *Node) DoRaw(method, path, header, key, body string) (int, http.Header, []byte) {
	n.c.t.Helper()
	req, err := http.NewRequest(method, n.URL()+path, strings.NewReader(body))
	if err != nil {
		n.c.t.Fatal(err)
	}
	if header == "Authorization" {
		key = "Bearer " + key
	}
	req.Header.Set(header, key)
	req.Header.Set("anthropic-version", "2023-06-01")
	return n.send(req)
}
