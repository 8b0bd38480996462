//go:build faults

package main

// Guessing against the real gateway process (killtest_proc_test.go's helpers), over real
// sockets: clients bound to 127.0.0.2 and 127.0.0.1 (Linux's loopback takes any 127/8
// source) are two client addresses to the gateway.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// afCatalog: one chat model on the simulator, a plan with room for the valid caller, and
// the default server.auth_failures_per_minute (30); the penalty is long enough that the
// attack ends inside it however slow the machine.
const afCatalog = `server:
  auth_penalty: 10m
models:
  - id: af-chat
    kind: chat
    routes: [{id: af-a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: sim-model, credential_env: ` + ktSimKeyEnv + `}]
plans:
  - {name: af-roomy, window_requests: 100000, burst_rpm: 10000, allow_automated: true}
`

// TestFaultGuessingIsRefusedPerAddress: 1,000 wrong keys from 127.0.0.2 get 401 for the
// first 30 and 429 with Retry-After from the 31st on, while the valid key from 127.0.0.1 gets
// 200 throughout; then six wrong passwords for the owner's e-mail from 127.0.0.2 (on a fresh
// gateway) lock 127.0.0.2 out of it, and the owner logs in from 127.0.0.1 at once.
func TestFaultGuessingIsRefusedPerAddress(t *testing.T) {
	gatewayBin, simBin := ktBuild(t)
	_, simBase := ktStart(t, "modelgate-sim", simBin, nil, regexp.MustCompile(`modelgate-sim listening.* base_url=(http://\S+)`), "--addr", "127.0.0.1:0")
	gateway := func(t *testing.T) (*ktRun, string, string) {
		tmp := t.TempDir()
		r := &ktRun{t: t, gatewayBin: gatewayBin, data: filepath.Join(tmp, "data"), catalog: filepath.Join(tmp, "catalog.yaml")}
		if err := os.WriteFile(r.catalog, []byte(strings.ReplaceAll(afCatalog, "{{SIM}}", simBase)), 0o600); err != nil {
			t.Fatal(err)
		}
		r.start("guessing")
		var acct struct {
			ID string `json:"id"`
		}
		r.c.admin(http.MethodPost, "/accounts", map[string]string{"email": "owner@test.local", "plan": "af-roomy"}, 201, &acct)
		var key struct {
			Secret string `json:"key"`
		}
		r.c.admin(http.MethodPost, "/accounts/"+acct.ID+"/keys", map[string]string{"name": "owner"}, 201, &key)
		return r, acct.ID, key.Secret
	}
	attacker, owner := afClient(t, "127.0.0.2"), afClient(t, "127.0.0.1")

	t.Run("keys", func(t *testing.T) {
		r, _, valid := gateway(t)
		chat := `{"model":"af-chat","messages":[{"role":"user","content":"hi"}]}`
		statuses := map[int]int{}
		for i := 1; i <= 1000; i++ {
			status, header, body := afDo(t, attacker, http.MethodPost, r.c.base+"/v1/chat/completions", fmt.Sprintf("sk-token-guess%048d", i), chat)
			statuses[status]++
			want := http.StatusUnauthorized
			if i > 30 {
				want = http.StatusTooManyRequests
			}
			after, _ := strconv.Atoi(header.Get("Retry-After"))
			if status != want || (want == 429 && (after < 1 || after > 600 || !strings.Contains(body, `"code":"too_many_auth_failures"`))) {
				t.Fatalf("wrong key %d: %d Retry-After %q, want %d: %s", i, status, header.Get("Retry-After"), want, body)
			}
			if i%50 == 0 {
				if status, _, body := afDo(t, owner, http.MethodPost, r.c.base+"/v1/chat/completions", valid, chat); status != http.StatusOK {
					t.Fatalf("the valid key from 127.0.0.1 after %d wrong keys from 127.0.0.2: %d %s", i, status, body)
				}
			}
		}
		if status, _, body := afDo(t, attacker, http.MethodPost, r.c.base+"/v1/chat/completions", valid, chat); status != http.StatusTooManyRequests {
			t.Fatalf("the valid key from 127.0.0.2 during its penalty: %d %s", status, body)
		}
		t.Logf("1,000 wrong keys from 127.0.0.2: %v (status: count); the valid key from 127.0.0.1: 200 twenty times", statuses)
	})

	t.Run("login", func(t *testing.T) {
		r, acct, _ := gateway(t)
		const password = "the owner's own password"
		r.c.admin(http.MethodPut, "/accounts/"+acct+"/password", map[string]string{"password": password}, 200, nil)
		login := func(c *http.Client, pw string) (int, time.Duration) {
			began := time.Now()
			body, _ := json.Marshal(map[string]string{"email": "owner@test.local", "password": pw})
			status, _, _ := afDo(t, c, http.MethodPost, r.c.base+"/auth/login", "", string(body))
			return status, time.Since(began)
		}
		var took []string
		for i, want := range []int{401, 401, 401, 401, 401, 429} {
			status, d := login(attacker, fmt.Sprintf("a wrong guess %d", i))
			if status != want {
				t.Fatalf("wrong password %d from 127.0.0.2: %d, want %d", i+1, status, want)
			}
			took = append(took, fmt.Sprintf("%d in %v", status, d.Round(time.Millisecond)))
		}
		status, d := login(owner, password)
		if status != http.StatusOK {
			t.Fatalf("the owner from 127.0.0.1: %d, want 200", status)
		}
		if again, _ := login(attacker, password); again != http.StatusTooManyRequests {
			t.Fatalf("the right password from 127.0.0.2 while it is locked out: %d, want 429", again)
		}
		t.Logf("wrong passwords from 127.0.0.2: %s; the owner from 127.0.0.1: 200 in %v", strings.Join(took, ", "), d.Round(time.Millisecond))
	})
}

// afClient is an HTTP client whose connections come from the loopback address from.
func afClient(t *testing.T, from string) *http.Client {
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: dialer.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 30 * time.Second, Transport: tr}
}

// afDo sends a request (a bearer key when not empty, a JSON body when not empty) and reads
// the answer.
func afDo(t *testing.T, c *http.Client, method, url, key, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(raw)
}
