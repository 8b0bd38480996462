package clients

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gateway is the demo gateway (`modelgate demo`: built-in simulator, demo catalog, Pebble in
// a temporary data directory), started as its own process exactly as `make run` starts it.
type gateway struct {
	url        string // http://127.0.0.1:port
	adminURL   string // its admin listener, as demo-credentials.json names it
	adminToken string
}

// startGateway runs bin/modelgate demo and waits until it serves.
func startGateway(t *testing.T, bin, dataDir string) *gateway {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "demo", "--data", dataDir, "--addr", addr, "--admin-addr", freeAddr(t))
	log, err := os.Create(filepath.Join(dataDir, "gateway.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
		log.Close()
	})
	credsPath := filepath.Join(dataDir, "demo-credentials.json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		var creds struct {
			AdminToken string `json:"admin_token"`
			AdminURL   string `json:"admin_url"`
		}
		b, err := os.ReadFile(credsPath)
		if err == nil && json.Unmarshal(b, &creds) == nil && creds.AdminToken != "" {
			if resp, err := http.Get("http://" + addr + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return &gateway{url: "http://" + addr, adminURL: creds.AdminURL, adminToken: creds.AdminToken}
				}
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dataDir, "gateway.log"))
			t.Fatalf("the demo gateway did not start in 30 s:\n%s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// freeAddr is a loopback address with a port nobody listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// newKey creates an account on plan and returns an API key of it, through the admin API.
func (g *gateway) newKey(t *testing.T, email, plan string) string {
	t.Helper()
	var acct struct {
		ID string `json:"id"`
	}
	g.admin(t, "/admin/v1/accounts", map[string]string{"email": email, "plan": plan}, &acct)
	var key struct {
		Secret string `json:"key"`
	}
	g.admin(t, "/admin/v1/accounts/"+acct.ID+"/keys", map[string]string{"name": "client-suite"}, &key)
	return key.Secret
}

func (g *gateway) admin(t *testing.T, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	status, raw := post(t, g.adminURL+path, string(b), "Authorization", "Bearer "+g.adminToken)
	if status != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", path, status, raw)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatal(fmt.Errorf("POST %s: %w", path, err))
	}
}

// refusesAutomated proves the suite's plan admits coding clients only: the same key with
// curl's User-Agent gets 403 coding_agent_required, so a passing cell was recognised.
func refusesAutomated(t *testing.T, gatewayURL, key string) {
	t.Helper()
	body := `{"model":"sim-chat","messages":[{"role":"user","content":"Hello"}]}`
	status, raw := post(t, gatewayURL+"/v1/chat/completions", body, "Authorization", "Bearer "+key, "User-Agent", "curl/8.5.0")
	if status != http.StatusForbidden || !strings.Contains(string(raw), "coding_agent_required") {
		t.Fatalf("plan %q must refuse curl: got %d %s", plan, status, raw)
	}
}

// post sends a JSON body with the given headers (name, value pairs) and reads the answer.
func post(t *testing.T, url, body string, headers ...string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}
