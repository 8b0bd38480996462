package node_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestAdminPathsOnThePublicPortSayWhereTheyAre: /admin/v1/... and /admin/cluster/... on the
// public port are 404 with every method, the admin token or not, in the admin API's envelope
// saying only that the admin API has its own listener; nothing is done. Paths beside them
// are ordinary unknown paths.
func TestAdminPathsOnThePublicPortSayWhereTheyAre(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	adminHost := strings.TrimPrefix(env.Node.AdminURL, "http://")
	paths := []string{"/admin/v1", "/admin/v1/accounts", "/admin/v1/accounts/" + env.Account.ID, "/admin/v1/accounts/" + env.Account.ID + "/credits",
		"/admin/v1/keys/key_x", "/admin/v1/routes", "/admin/v1/accounts/..%2Fkeys", "/admin/v1/", "/admin/cluster", "/admin/cluster/status",
		"/admin/cluster/members", "/admin/cluster/members/2", "/admin/cluster/members/2/drain"}
	methods := []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
	for _, path := range paths {
		for _, method := range methods {
			for _, token := range []string{nodetest.AdminToken, ""} {
				t.Run(method+" "+path+" token="+token, func(t *testing.T) {
					resp := env.Do(method, path, token, `{"email":"intruder@example.com","amount_usd":"5","idempotency_key":"k"}`)
					raw := nodetest.Read(t, resp)
					id := resp.Header.Get("X-Request-Id")
					if resp.StatusCode != http.StatusNotFound || id == "" || resp.Header.Get("Allow") != "" {
						t.Fatalf("%d, request id %q, Allow %q: %s", resp.StatusCode, id, resp.Header.Get("Allow"), raw)
					}
					if method == http.MethodHead {
						if len(raw) != 0 {
							t.Fatalf("HEAD answered a body: %s", raw)
						}
						return
					}
					e, err := nodetest.ReadEnvelope(raw)
					if err != nil {
						t.Fatal(err)
					}
					want := nodetest.Envelope{Format: "chat", Type: "invalid_request_error", Code: "admin_elsewhere", Message: node.AdminElsewhere,
						RequestID: id, Fields: map[string]string{}}
					if e.Format != want.Format || e.Type != want.Type || e.Code != want.Code || e.Param != "" || e.Message != want.Message ||
						e.RequestID != want.RequestID || len(e.Fields) != 0 {
						t.Fatalf("\n got %+v\nwant %+v", e, want)
					}
					if strings.Contains(string(raw), adminHost) {
						t.Fatalf("the answer discloses the admin address: %s", raw)
					}
				})
			}
		}
	}
	accounts, err := env.Node.Store.ListAccountsPage(persistence.AccountQuery{Limit: 100})
	if err != nil || len(accounts.Accounts) != 1 {
		t.Fatalf("accounts %+v, %v: the public port changed something", accounts.Accounts, err)
	}
	beside := []struct{ method, path string }{{"GET", "/admin"}, {"GET", "/admin/"}, {"POST", "/admin/v1x"}, {"GET", "/admin/v2/accounts"},
		{"GET", "/admin/clusters"}, {"GET", "/v1/admin/v1/accounts"}}
	for _, b := range beside {
		resp := env.Do(b.method, b.path, nodetest.AdminToken, "")
		e, err := nodetest.ReadEnvelope(nodetest.Read(t, resp))
		if err != nil || resp.StatusCode != http.StatusNotFound || e.Code != "unknown_url" {
			t.Errorf("%s %s: %d %+v %v, want 404 unknown_url", b.method, b.path, resp.StatusCode, e, err)
		}
	}
}

// TestAdminListenerServesTheAdminAPI: the admin listener (loopback, a port of its own)
// serves the admin API behind its token with the API's 404/405 and request ids, and serves
// nothing of the public port: no API, dashboard, /auth, /account or metrics; a single node
// has no /admin/cluster.
func TestAdminListenerServesTheAdminAPI(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	if !strings.HasPrefix(env.Node.AdminURL, "http://127.0.0.1:") || env.Node.AdminURL == env.Node.URL ||
		strings.HasPrefix(env.Node.MetricsURL, env.Node.AdminURL+"/") {
		t.Fatalf("admin at %q, the API at %q, metrics at %q", env.Node.AdminURL, env.Node.URL, env.Node.MetricsURL)
	}
	cases := []struct {
		name, method, path, token, body string
		status                          int
		code                            string // the error's code; "" for a success
		allow                           string
		contains                        string
	}{
		{"accounts", "GET", "/admin/v1/accounts", nodetest.AdminToken, "", 200, "", "", `"email":"test@example.com"`},
		{"a new account", "POST", "/admin/v1/accounts", nodetest.AdminToken, `{"email":"ops@example.com","plan":"demo"}`, 201, "", "", `"email":"ops@example.com"`},
		{"route health", "GET", "/admin/v1/routes", nodetest.AdminToken, "", 200, "", "", `"route":"a"`},
		{"no token", "GET", "/admin/v1/routes", "", "", 401, "invalid_admin_token", "", ""},
		{"an API key as the token", "GET", "/admin/v1/accounts", env.Key, "", 401, "invalid_admin_token", "", ""},
		{"a wrong method", "DELETE", "/admin/v1/accounts", nodetest.AdminToken, "", 405, "method_not_allowed", "GET, POST", ""},
		{"an unknown admin path", "GET", "/admin/v1/secrets", nodetest.AdminToken, "", 404, "unknown_url", "", ""},
		{"no cluster on a single node", "GET", "/admin/cluster/status", nodetest.AdminToken, "", 404, "unknown_url", "", ""},
		{"no API", "POST", "/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, 404, "unknown_url", "", ""},
		{"no model list", "GET", "/v1/models", env.Key, "", 404, "unknown_url", "", ""},
		{"no dashboard", "GET", "/dashboard/", "", "", 404, "unknown_url", "", ""},
		{"no sign-in", "POST", "/auth/login", "", `{"email":"test@example.com","password":"x"}`, 404, "unknown_url", "", ""},
		{"no account API", "GET", "/account/v1/me", env.Key, "", 404, "unknown_url", "", ""},
		{"no metrics", "GET", "/metrics", "", "", 404, "unknown_url", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.DoAdmin(c.method, c.path, c.token, c.body)
			raw := nodetest.Read(t, resp)
			id := resp.Header.Get("X-Request-Id")
			if resp.StatusCode != c.status || id == "" || resp.Header.Get("Allow") != c.allow || !strings.Contains(string(raw), c.contains) {
				t.Fatalf("%d, request id %q, Allow %q; want %d with %q, Allow %q: %.300s", resp.StatusCode, id, resp.Header.Get("Allow"),
					c.status, c.contains, c.allow, raw)
			}
			if c.code == "" {
				return
			}
			if e, err := nodetest.ReadEnvelope(raw); err != nil || e.Format != "chat" || e.Code != c.code || e.RequestID != id {
				t.Fatalf("%+v %v, want the chat envelope with code %s and request id %s", e, err, c.code, id)
			}
		})
	}
	if calls := env.Sim.Calls("a") + env.Sim.Calls("b"); calls != 0 {
		t.Fatalf("%d upstream calls from the admin listener", calls)
	}
}

// TestAdminAddrOffServesNoAdminPlane: with admin_addr off the node serves the API and no
// admin listener; the public port's answer is the same as when it is on. (Where off comes
// from, the flag or the catalog, is TestAdminAddressIsChosen's.)
func TestAdminAddrOffServesNoAdminPlane(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{AdminAddr: "off"})
	if env.Node.AdminURL != "" {
		t.Fatalf("AdminURL %q with the admin plane off", env.Node.AdminURL)
	}
	resp := env.Do(http.MethodGet, "/admin/v1/accounts", nodetest.AdminToken, "")
	e, err := nodetest.ReadEnvelope(nodetest.Read(t, resp))
	if err != nil || resp.StatusCode != 404 || e.Code != "admin_elsewhere" || e.Message != node.AdminElsewhere {
		t.Fatalf("%d %+v %v", resp.StatusCode, e, err)
	}
	if r := env.Do(http.MethodGet, "/v1/models", env.Key, ""); r.StatusCode != 200 {
		t.Fatalf("the API without an admin plane: %d", r.StatusCode)
	}
}
