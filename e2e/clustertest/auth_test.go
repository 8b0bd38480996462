package clustertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/mail/mailtest"
)

// TestSignupSessionsAndAccountAPIWorkAcrossNodes: a person's whole path through the account
// side of a 3-node cluster, each step on another node than the one before. Signed up on node
// 1, the mailed link (pointing at node 2, auth.base_url) verifies on node 2; the session made
// on node 3 is known on node 1; a key made with it on node 2 answers on node 3 with a cost
// that node 1's generation and node 2's usage agree with; an rpm set on node 1 holds on node
// 2; a logout on node 1 ends the cookie on nodes 2 and 3 (their local replicas, within 2 s);
// and an account disabled on node 2 has its key refused on every node at once (the
// linearizable key check) and its login refused.
func TestSignupSessionsAndAccountAPIWorkAcrossNodes(t *testing.T) {
	smtp := mailtest.Start(t)
	c := New(t, Options{Nodes: 3, Shards: 4})
	n1, n2, n3 := c.Nodes[0], c.Nodes[1], c.Nodes[2]
	c.appendCatalog(fmt.Sprintf("auth:\n  signup_plan: %s\n  base_url: %s\n  mail: {host: 127.0.0.1, port: %d, security: none, from: \"gw <noreply@example.com>\"}\n",
		Plan, n2.URL(), smtp.Port))
	c.StartAll()
	creds := map[string]string{"email": "ann@example.com", "password": "ann's long password"}

	// 1. Sign up on node 1; the mailed link is node 2's and verifies there.
	if r := authCall(t, n1, "POST", "/auth/signup", creds, "", ""); r.status != 202 || r.body != `{"status":"verification_sent"}` {
		t.Fatalf("signup: %d %s", r.status, r.body)
	}
	m := smtp.Next(t)
	link := m.Link(t)
	if len(m.To) != 1 || m.To[0] != "ann@example.com" || !strings.HasPrefix(link, n2.URL()+"/auth/verify?token=") {
		t.Fatalf("mail to %v with link %q; want ann@example.com and node 2's /auth/verify", m.To, link)
	}
	if r := authCall(t, n2, "GET", strings.TrimPrefix(link, n2.URL()), nil, "", ""); r.status != 303 || r.header.Get("Location") != "/dashboard/login?verified=1" {
		t.Fatalf("verify on node 2: %d %v %s", r.status, r.header, r.body)
	}

	// 2. Log in on node 3; node 1 knows the session.
	r := authCall(t, n3, "POST", "/auth/login", creds, "", "")
	var login struct {
		Account struct{ ID, Email, Plan string }
		CSRF    string `json:"csrf_token"`
	}
	json.Unmarshal([]byte(r.body), &login)
	session := sessionCookie(r.header)
	if r.status != 200 || session == "" || login.CSRF == "" || login.Account.Email != "ann@example.com" || login.Account.Plan != Plan {
		t.Fatalf("login on node 3: %d %s (cookie %q)", r.status, r.body, session)
	}
	acct := login.Account.ID
	r = authCall(t, n1, "GET", "/auth/session", nil, session, "")
	var seen struct {
		Account struct{ ID string }
		CSRF    string `json:"csrf_token"`
	}
	json.Unmarshal([]byte(r.body), &seen)
	if r.status != 200 || seen.Account.ID != acct || seen.CSRF != login.CSRF {
		t.Fatalf("GET /auth/session on node 1: %d %s; want account %s and the login's CSRF token", r.status, r.body, acct)
	}

	// 3. A key made on node 2 with the session calls through node 3; node 1's generation and
	// node 2's usage show the call and its cost.
	r = authCall(t, n2, "POST", "/account/v1/keys", map[string]any{"name": "laptop"}, session, login.CSRF)
	var key struct{ ID, Name, Key string }
	json.Unmarshal([]byte(r.body), &key)
	if r.status != 201 || key.Name != "laptop" || !strings.HasPrefix(key.Key, "sk-") || key.ID == "" {
		t.Fatalf("create key on node 2: %d %s", r.status, r.body)
	}
	status, h, b := n3.Do(http.MethodPost, "/v1/chat/completions", key.Key, chatBody())
	rid, cost := h.Get("X-Request-Id"), h.Get("X-Modelgate-Cost")
	if status != 200 || rid == "" || cost != "0" { // within the plan: nothing taken from credits
		t.Fatalf("chat on node 3: %d cost %q id %q %s; want 200, cost 0", status, cost, rid, b)
	}
	var gen struct {
		Data struct {
			ID      string `json:"id"`
			Model   string `json:"model"`
			CostUSD string `json:"cost_usd"`
			ListUSD string `json:"list_cost_usd"`
			Status  int    `json:"status"`
		} `json:"data"`
	}
	waitTask(t, 2*time.Second, func() bool {
		status, _, b = n1.Do(http.MethodGet, "/v1/generations/"+rid, key.Key, nil)
		return status == 200
	}, "the generation on node 1")
	json.Unmarshal(b, &gen)
	if gen.Data.ID != rid || gen.Data.Model != Model || gen.Data.CostUSD != cost || gen.Data.Status != 200 || mustMoney(t, gen.Data.ListUSD) <= 0 {
		t.Fatalf("generation on node 1: %s; want id %s, model %s, cost %s, a list cost", b, rid, Model, cost)
	}
	var usage struct {
		Data []struct {
			RequestID string `json:"request_id"`
			KeyID     string `json:"key_id"`
			CostUSD   string `json:"cost_usd"`
			ListUSD   string `json:"list_cost_usd"`
		}
		Totals struct{ Count int64 }
	}
	waitTask(t, 2*time.Second, func() bool {
		r = authCall(t, n2, "GET", "/account/v1/usage", nil, session, "")
		return r.status == 200 && json.Unmarshal([]byte(r.body), &usage) == nil && usage.Totals.Count >= 1
	}, "the call in node 2's usage")
	if len(usage.Data) != 1 || usage.Totals.Count != 1 || usage.Data[0].RequestID != rid || usage.Data[0].KeyID != key.ID ||
		usage.Data[0].CostUSD != cost || usage.Data[0].ListUSD != gen.Data.ListUSD {
		t.Fatalf("usage on node 2: %s; want the one call %s of key %s costing %s (list %s)", r.body, rid, key.ID, cost, gen.Data.ListUSD)
	}

	// 4. An rpm of 1 set on node 1 holds on node 2.
	if r = authCall(t, n1, "PATCH", "/account/v1/keys/"+key.ID, map[string]any{"limits": map[string]any{"rpm": 1}}, session, login.CSRF); r.status != 200 || !strings.Contains(r.body, `"rpm":1`) {
		t.Fatalf("PATCH rpm on node 1: %d %s", r.status, r.body)
	}
	if status, b := n2.Chat(key.Key); status != 200 {
		t.Fatalf("first call under rpm 1 on node 2: %d %s", status, b)
	}
	status, h, b = n2.Do(http.MethodPost, "/v1/chat/completions", key.Key, chatBody())
	if status != 429 || h.Get("Retry-After") == "" || !strings.Contains(string(b), `"code":"key_rpm_exceeded"`) {
		t.Fatalf("second call under rpm 1 on node 2: %d Retry-After %q %s; want 429 key_rpm_exceeded with Retry-After", status, h.Get("Retry-After"), b)
	}

	// 5. Logged out on node 1, the cookie is refused on nodes 2 and 3 once they applied it.
	if r = authCall(t, n1, "POST", "/auth/logout", nil, session, login.CSRF); r.status != 204 {
		t.Fatalf("logout on node 1: %d %s", r.status, r.body)
	}
	for _, n := range []*Node{n2, n3} {
		waitTask(t, 2*time.Second, func() bool {
			r = authCall(t, n, "GET", "/auth/session", nil, session, "")
			return r.status == 401
		}, fmt.Sprintf("the ended session refused by node %d", n.ID))
		if !strings.Contains(r.body, `"code":"not_authenticated"`) {
			t.Errorf("node %d: the ended session: %d %s", n.ID, r.status, r.body)
		}
	}

	// 6. Disabled on node 2: the key is refused on every node at once, and so is the login.
	if status, b := n2.Admin(http.MethodPost, "/admin/v1/accounts/"+acct+"/disable", nil); status != 200 || !strings.Contains(string(b), `"disabled":true`) {
		t.Fatalf("disable on node 2: %d %s", status, b)
	}
	for _, n := range c.Nodes {
		if status, b := n.Chat(key.Key); status != 403 || !strings.Contains(string(b), `"code":"account_disabled"`) {
			t.Errorf("node %d: the disabled account's key: %d %s; want 403 account_disabled", n.ID, status, b)
		}
	}
	if r = authCall(t, n3, "POST", "/auth/login", creds, "", ""); r.status != 403 || !strings.Contains(r.body, `"code":"account_disabled"`) {
		t.Errorf("login of the disabled account on node 3: %d %s; want 403 account_disabled", r.status, r.body)
	}
}

// appendCatalog adds top-level sections to the catalog the nodes start with.
func (c *Cluster) appendCatalog(yaml string) {
	c.t.Helper()
	f, err := os.OpenFile(c.Catalog, os.O_APPEND|os.O_WRONLY, 0)
	if err == nil {
		_, err = f.WriteString(yaml)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		c.t.Fatal(err)
	}
}

type browserAnswer struct {
	status int
	header http.Header
	body   string
}

// authCall sends a JSON request as a browser would: the session cookie and CSRF token when
// given, redirects not followed.
func authCall(t *testing.T, n *Node, method, path string, body any, session, csrf string) browserAnswer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, n.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if session != "" {
		req.AddCookie(&http.Cookie{Name: "mg_session", Value: session})
	}
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("node %d: %s %s: %v", n.ID, method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return browserAnswer{resp.StatusCode, resp.Header, strings.TrimSpace(string(b))}
}

func sessionCookie(h http.Header) string {
	for _, ck := range (&http.Response{Header: h}).Cookies() {
		if ck.Name == "mg_session" {
			return ck.Value
		}
	}
	return ""
}
