package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node"
)

// demoRun is one startDemo; stop closes the node and the simulator once.
type demoRun struct {
	n     *node.Node
	creds credentials
	stop  func()
}

func startDemoT(t *testing.T, dir string) *demoRun {
	t.Helper()
	n, creds, stopSim, err := startDemo(dir, "127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("startDemo: %v", err)
	}
	r := &demoRun{n: n, creds: creds}
	stopped := false
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := n.Close(ctx); err != nil {
			t.Errorf("close node: %v", err)
		}
		stopSim()
	}
	t.Cleanup(r.stop)
	return r
}

// demoEnv clears what startDemo reads from the environment (and restores what it sets).
func demoEnv(t *testing.T) {
	t.Setenv("MODELGATE_ADMIN_TOKEN", "")
	t.Setenv("MODELGATE_SIM_KEY", "")
	t.Setenv("MODELGATE_METRICS_ADDR", "127.0.0.1:0") // never the host's default metrics port
}

func demoPost(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// checkDemoChat proves the key works for a plain chat completion on sim-chat.
func checkDemoChat(t *testing.T, creds credentials) {
	t.Helper()
	resp, raw := demoPost(t, creds.BaseURL+"/chat/completions", creds.APIKey, `{"model":"sim-chat","messages":[{"role":"user","content":"hello demo"}]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, raw)
	}
	var out struct {
		Model   string `json:"model"`
		Choices []struct {
			Message struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	if out.Model != "sim-chat" || len(out.Choices) != 1 || out.Choices[0].Message.Role != "assistant" ||
		len(strings.Fields(out.Choices[0].Message.Content)) != 16 || out.Usage.PromptTokens != 2 || out.Usage.CompletionTokens != 16 {
		t.Fatalf("chat answer = %s", raw)
	}
}

// checkDemoAdmin proves the admin token opens the admin API.
func checkDemoAdmin(t *testing.T, r *demoRun, acctID string) {
	t.Helper()
	if r.creds.AdminURL != r.n.AdminURL || !strings.HasPrefix(r.creds.AdminURL, "http://127.0.0.1:") {
		t.Fatalf("admin_url %q, the node's admin listener %q", r.creds.AdminURL, r.n.AdminURL)
	}
	req, _ := http.NewRequest(http.MethodGet, r.creds.AdminURL+"/admin/v1/accounts/"+acctID, nil)
	req.Header.Set("Authorization", "Bearer "+r.creds.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), demoEmail) {
		t.Fatalf("admin with the demo token: %d %s", resp.StatusCode, raw)
	}
}

func readDemoCreds(t *testing.T, dir string) credentials {
	t.Helper()
	path := filepath.Join(dir, "demo-credentials.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return c
}

// demoAccounts returns the store's demo accounts and the keys of the only one.
func demoAccounts(t *testing.T, s *persistence.Store) (persistence.Account, []persistence.Key) {
	t.Helper()
	accts, err := s.ListAccounts()
	if err != nil {
		t.Fatal(err)
	}
	if len(accts) != 1 || accts[0].Email != demoEmail || accts[0].Plan != "demo" {
		t.Fatalf("accounts = %+v, want exactly the demo account", accts)
	}
	keys, err := s.ListKeys(accts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return accts[0], keys
}

func TestDemoStartsReadyAndReusesItsCredentials(t *testing.T) {
	demoEnv(t)
	dir := t.TempDir()
	first := startDemoT(t, dir)
	creds := first.creds

	if saved := readDemoCreds(t, dir); saved != creds {
		t.Fatalf("saved %+v, returned %+v", saved, creds)
	}
	if !regexp.MustCompile(`^sk-token-[A-Za-z0-9]{48}$`).MatchString(creds.APIKey) {
		t.Fatalf("api_key %q", creds.APIKey)
	}
	if !regexp.MustCompile(`^mg-admin-[A-Za-z0-9]{40}$`).MatchString(creds.AdminToken) {
		t.Fatalf("admin_token %q", creds.AdminToken)
	}
	if creds.BaseURL != first.n.URL+"/v1" || !strings.HasSuffix(creds.BaseURL, "/v1") {
		t.Fatalf("base_url %q, node at %q", creds.BaseURL, first.n.URL)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "admin-token")); strings.TrimSpace(string(b)) != creds.AdminToken {
		t.Fatalf("admin-token file %q, credentials %q", b, creds.AdminToken)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{24}$`).MatchString(creds.Password) || creds.Email != demoEmail ||
		creds.Dashboard != first.n.URL+"/dashboard/" {
		t.Fatalf("login %q / %q, dashboard %q", creds.Email, creds.Password, creds.Dashboard)
	}
	checkDemoLogin(t, first.n.URL, creds)
	acct, keys := demoAccounts(t, first.n.Store)
	if len(keys) != 1 || keys[0].Name != "demo" || len(keys[0].Models) != 0 || keys[0].ZDR {
		t.Fatalf("demo keys = %+v", keys)
	}
	if creds.AccountID != acct.ID { // the operator's commands need it
		t.Fatalf("account_id %q, demo account %s", creds.AccountID, acct.ID)
	}

	checkDemoChat(t, creds)
	checkDemoLinks(t, first)
	checkDemoAdmin(t, first, acct.ID)

	// Streamed: chunks, then data: [DONE] last.
	resp, raw := demoPost(t, creds.BaseURL+"/chat/completions", creds.APIKey, `{"model":"sim-chat","stream":true,"messages":[{"role":"user","content":"reply with 5 words"}]}`)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var data []string
	var text strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
			var chunk struct {
				Choices []struct {
					Delta struct {
						Content string `json:"content"`
					} `json:"delta"`
				} `json:"choices"`
			}
			if d != "[DONE]" && json.Unmarshal([]byte(d), &chunk) == nil && len(chunk.Choices) > 0 {
				text.WriteString(chunk.Choices[0].Delta.Content)
			}
		}
	}
	if len(data) < 3 || data[len(data)-1] != "[DONE]" || !strings.HasSuffix(strings.TrimRight(string(raw), "\n"), "data: [DONE]") {
		t.Fatalf("stream = %s", raw)
	}
	if n := len(strings.Fields(text.String())); n != 5 {
		t.Fatalf("streamed text %q has %d words, want 5", text.String(), n)
	}

	// Embeddings on sim-embed.
	resp, raw = demoPost(t, creds.BaseURL+"/embeddings", creds.APIKey, `{"model":"sim-embed","input":["first text","second"]}`)
	if resp.StatusCode != 200 {
		t.Fatalf("embeddings: %d %s", resp.StatusCode, raw)
	}
	var emb struct {
		Object string `json:"object"`
		Model  string `json:"model"`
		Data   []struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &emb); err != nil {
		t.Fatal(err)
	}
	if emb.Object != "list" || emb.Model != "sim-embed" || len(emb.Data) != 2 || emb.Data[1].Index != 1 ||
		len(emb.Data[0].Embedding) == 0 || len(emb.Data[0].Embedding) != len(emb.Data[1].Embedding) || emb.Usage.PromptTokens != 3 {
		t.Fatalf("embeddings = %s", raw)
	}

	// Restart on the same directory: the same key and token, still working, one account.
	first.stop()
	second := startDemoT(t, dir)
	if second.creds.APIKey != creds.APIKey || second.creds.AdminToken != creds.AdminToken || second.creds.AccountID != creds.AccountID ||
		second.creds.Password != creds.Password {
		t.Fatalf("restart made new credentials: %+v, was %+v", second.creds, creds)
	}
	if second.creds.BaseURL != second.n.URL+"/v1" {
		t.Fatalf("base_url %q, node at %q", second.creds.BaseURL, second.n.URL)
	}
	if saved := readDemoCreds(t, dir); saved != second.creds {
		t.Fatalf("saved %+v, returned %+v", saved, second.creds)
	}
	acct2, keys := demoAccounts(t, second.n.Store)
	if acct2 != acct || len(keys) != 1 {
		t.Fatalf("after restart: account %+v (was %+v), keys %+v", acct2, acct, keys)
	}
	checkDemoChat(t, second.creds)
	checkDemoLogin(t, second.n.URL, second.creds)
	checkDemoAdmin(t, second, acct.ID)
}

func TestDemoReplacesARevokedKey(t *testing.T) {
	demoEnv(t)
	dir := t.TempDir()
	first := startDemoT(t, dir)
	old := first.creds
	k, err := first.n.Store.LookupKey(old.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.n.Store.RevokeKey(k.ID); err != nil {
		t.Fatal(err)
	}
	first.stop()

	second := startDemoT(t, dir)
	creds := second.creds
	if creds.APIKey == old.APIKey || !regexp.MustCompile(`^sk-token-[A-Za-z0-9]{48}$`).MatchString(creds.APIKey) {
		t.Fatalf("api_key %q after revoking %q", creds.APIKey, old.APIKey)
	}
	if creds.AdminToken != old.AdminToken {
		t.Fatalf("admin token changed: %q, was %q", creds.AdminToken, old.AdminToken)
	}
	if saved := readDemoCreds(t, dir); saved != creds {
		t.Fatalf("saved %+v, returned %+v", saved, creds)
	}
	checkDemoChat(t, creds)
	resp, raw := demoPost(t, creds.BaseURL+"/chat/completions", old.APIKey, `{"model":"sim-chat","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 401 {
		t.Fatalf("revoked key: %d %s", resp.StatusCode, raw)
	}
	// The new key belongs to the same (only) demo account, next to the revoked one.
	acct, keys := demoAccounts(t, second.n.Store)
	if len(keys) != 2 || keys[0].ID != k.ID || keys[0].RevokedAt == 0 || keys[1].RevokedAt != 0 || keys[1].AccountID != acct.ID ||
		creds.AccountID != acct.ID {
		t.Fatalf("keys = %+v", keys)
	}

	// A credentials file whose key the store does not know (a wiped store, a hand-edited
	// file) also gets a fresh key on the same account.
	second.stop()
	unknown := old
	unknown.APIKey = "sk-token-" + strings.Repeat("x", 48)
	b, _ := json.Marshal(unknown)
	if err := os.WriteFile(filepath.Join(dir, "demo-credentials.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	third := startDemoT(t, dir)
	if k := third.creds.APIKey; k == unknown.APIKey || k == creds.APIKey || k == old.APIKey {
		t.Fatalf("third start kept key %q", k)
	}
	checkDemoChat(t, third.creds)
	if _, keys := demoAccounts(t, third.n.Store); len(keys) != 3 {
		t.Fatalf("keys = %+v", keys)
	}
}

// checkDemoLogin logs in with the credentials file's e-mail and password: the demo account's
// login is verified and works.
func checkDemoLogin(t *testing.T, url string, creds credentials) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": creds.Email, "password": creds.Password})
	resp, raw := demoPost(t, url+"/auth/login", "", string(body))
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"email":"`+demoEmail+`"`) {
		t.Fatalf("demo login: %d %s", resp.StatusCode, raw)
	}
}
