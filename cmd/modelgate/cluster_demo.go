package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/cluster/certs"
	"github.com/modelgate/modelgate/cluster/membership"
	"github.com/modelgate/modelgate/dashboard"
	"github.com/modelgate/modelgate/internal/randid"
	"github.com/modelgate/modelgate/simulator"
)

// demoNodes is the demo cluster's size.
const demoNodes = 3

// clusterDemo is `make cluster`: three nodes on loopback as child processes, the simulator
// as their upstream, the demo catalog, and a demo account and key made once through node 1.
func clusterDemo(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("cluster demo", flag.ContinueOnError)
	fs.SetOutput(out)
	dir := fs.String("data", "./data-cluster", "directory of the demo cluster (certificates, one data directory per node, logs)")
	base := fs.Int("port-base", 8080, "node N serves HTTP on port-base+N, Raft on port-base+10+N and its admin API on port-base+20+N")
	shards := fs.Int("shards", 8, "account shards (the demo keeps them few)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	token, err := demoToken(*dir)
	if err != nil {
		return err
	}
	os.Setenv("MODELGATE_ADMIN_TOKEN", token) // for init's checks and the children
	if err := initDemoCluster(*dir, *base, *shards); err != nil {
		return err
	}
	sim, simURL, stopSim, err := simulator.Start("127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("simulator: %w", err)
	}
	defer stopSim()
	catPath := filepath.Join(*dir, "demo-catalog.yaml")
	sa, err := writeDemoServiceAccount(*dir, sim, simURL)
	if err != nil {
		return err
	}
	if err := writeDemoCatalog(catPath, simURL, sa, ""); err != nil {
		return err
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	var children []*exec.Cmd
	defer func() { stopChildren(children) }()
	for i := 1; i <= demoNodes; i++ {
		cmd, err := startDemoNode(bin, *dir, catPath, i, *base)
		if err != nil {
			return err
		}
		children = append(children, cmd)
	}
	url1 := demoURL(*base, 1)
	if err := waitReady(url1, 30*time.Second); err != nil {
		return fmt.Errorf("%w (logs in %s)", err, *dir)
	}
	// Stripe's webhooks reach one endpoint: node 3's, so that a purchase is granted by a node
	// that may not own the account (its quota owner applies it).
	if err := demoStripe(sim, demoURL(*base, demoNodes), demoStripeWebhookSecret); err != nil {
		return err
	}
	creds, err := demoClusterCreds(*dir, url1, demoAdminURL(*base, 1), token)
	if err != nil {
		return err
	}
	key := creds.APIKey
	fmt.Fprintf(out, "\nmodelgate demo cluster: %d nodes\n", demoNodes)
	for i := 1; i <= demoNodes; i++ {
		fmt.Fprintf(out, "  node %d: %s/v1   admin API %s   (log %s)\n", i, demoURL(*base, i), demoAdminURL(*base, i),
			filepath.Join(*dir, fmt.Sprintf("node%d.log", i)))
	}
	fmt.Fprintf(out, "  API key:     %s\n  admin token: %s\n  dashboard:   %s (any node's /dashboard/)\n    log in as  %s / %s\n  (saved in %s)\n\n",
		key, token, creds.Dashboard, creds.Email, creds.Password, filepath.Join(*dir, "demo-credentials.json"))
	fmt.Fprintf(out, "watch the cluster:  MODELGATE_ADMIN_TOKEN=%s %s cluster status --node %s\n", token, bin, demoAdminURL(*base, 1))
	fmt.Fprintf(out, "kill a node:        kill -9 $(cat %s)\n", filepath.Join(*dir, "node2.pid"))
	fmt.Fprintf(out, "call any node:      curl %s/v1/chat/completions -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{\"model\":\"sim-chat\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}'\n", demoURL(*base, 3), key)
	fmt.Fprintf(out, "Ctrl-C stops all.\n\n")
	<-sig
	fmt.Fprintln(out, "stopping the nodes")
	return nil
}

func demoURL(base, i int) string { return fmt.Sprintf("http://127.0.0.1:%d", base+i) }

// demoAdminURL is node i's admin listener: the cluster's operator routes (status, join,
// drain, remove) and the admin API are there, not on its public port.
func demoAdminURL(base, i int) string { return fmt.Sprintf("http://127.0.0.1:%d", base+20+i) }

// demoToken is the demo cluster's admin token, made at the first start.
func demoToken(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "admin-token")
	if b, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(b)) != "" {
		return strings.TrimSpace(string(b)), nil
	}
	t := "mg-admin-" + randid.Base62(40)
	return t, os.WriteFile(path, []byte(t+"\n"), 0o600)
}

// initDemoCluster makes the CA and node certificates and inits the nodes, once.
func initDemoCluster(dir string, base, shards int) error {
	certDir := filepath.Join(dir, "certs")
	var specs []certs.NodeSpec
	var peers []string
	for i := 1; i <= demoNodes; i++ {
		specs = append(specs, certs.NodeSpec{Name: fmt.Sprintf("node%d", i), Hosts: []string{"127.0.0.1"}})
		peers = append(peers, fmt.Sprintf("%d=127.0.0.1:%d", i, base+10+i))
	}
	if _, err := os.Stat(filepath.Join(certDir, certs.CACertFile)); errors.Is(err, os.ErrNotExist) {
		if _, err := certs.Generate(certDir, specs, certs.Options{}); err != nil {
			return err
		}
	}
	for i := 1; i <= demoNodes; i++ {
		data := filepath.Join(dir, fmt.Sprintf("node%d", i))
		if _, ok, err := membership.Load(data); ok || err != nil {
			if err != nil {
				return err
			}
			continue
		}
		err := clusterInit([]string{"--data", data, "--node-id", strconv.Itoa(i), "--raft-addr", fmt.Sprintf("127.0.0.1:%d", base+10+i),
			"--peers", strings.Join(peers, ","), "--certs", certDir, "--shards", strconv.Itoa(shards)}, io.Discard)
		if err != nil {
			return err
		}
	}
	return nil
}

func startDemoNode(bin, dir, catPath string, i, base int) (*exec.Cmd, error) {
	logf, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("node%d.log", i)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "--config", catPath, "--data", filepath.Join(dir, fmt.Sprintf("node%d", i)),
		"--addr", fmt.Sprintf("127.0.0.1:%d", base+i), "--admin-addr", strings.TrimPrefix(demoAdminURL(base, i), "http://"), "--metrics-addr", "off")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), demoSimEnv()...)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	logf.Close() // the child has its own descriptor
	pid := filepath.Join(dir, fmt.Sprintf("node%d.pid", i))
	return cmd, os.WriteFile(pid, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o600)
}

// stopChildren sends SIGTERM to every node still running and waits for them.
func stopChildren(children []*exec.Cmd) {
	for _, c := range children {
		c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range children {
		c.Wait()
	}
}

// waitReady waits until url's /readyz answers 200 (its replicas caught up, its metadata
// shard led).
func waitReady(url string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s did not become ready within %s", url, d)
}

// demoClusterCreds returns the demo credentials, kept in <dir>/demo-credentials.json: at
// the first start it creates the account and key through the admin API at adminURL (the
// node at url's), and while the file has no password (the first start, or one from before
// the dashboard) it gives the account a random dashboard password there, as `make run`'s
// demo does.
func demoClusterCreds(dir, url, adminURL, token string) (credentials, error) {
	path := filepath.Join(dir, "demo-credentials.json")
	var creds credentials
	if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &creds) != nil || creds.APIKey == "" {
		if creds, err = demoClusterKey(url, adminURL, token); err != nil {
			return creds, err
		}
	}
	if creds.Password == "" {
		password := newDemoPassword()
		raw, err := adminClient{url: adminURL, token: token}.call(http.MethodPut, "/admin/v1/accounts/"+creds.AccountID+"/password", map[string]string{"password": password})
		if err != nil {
			return creds, fmt.Errorf("demo login: %w", err)
		}
		var acct struct{ Email string }
		json.Unmarshal(raw, &acct)
		creds.Email, creds.Password, creds.Dashboard = acct.Email, password, url+dashboard.Prefix
	}
	creds.AdminURL = adminURL // the file may be from before the admin listener
	b, _ := json.MarshalIndent(creds, "", "  ")
	return creds, os.WriteFile(path, append(b, '\n'), 0o600)
}

// demoClusterKey creates the demo account and its key through the admin API at adminURL.
func demoClusterKey(url, adminURL, token string) (credentials, error) {
	c := adminClient{url: adminURL, token: token}
	raw, err := c.call(http.MethodPost, "/admin/v1/accounts", map[string]string{"email": demoEmail, "plan": "demo"})
	if err != nil {
		return credentials{}, fmt.Errorf("demo account: %w", err)
	}
	var acct struct{ ID string }
	json.Unmarshal(raw, &acct)
	raw, err = c.call(http.MethodPost, "/admin/v1/accounts/"+acct.ID+"/keys", map[string]string{"name": "demo"})
	if err != nil {
		return credentials{}, fmt.Errorf("demo key: %w", err)
	}
	var key struct{ Key string }
	json.Unmarshal(raw, &key)
	return credentials{APIKey: key.Key, AdminToken: token, BaseURL: url + "/v1", AdminURL: adminURL, AccountID: acct.ID}, nil
}
