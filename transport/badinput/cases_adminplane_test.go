package badinput_test

import (
	"net/http"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// adminPlaneCases: the admin API and the cluster's operator routes sent to the public port,
// the admin token included. Each is a 404 in the admin API's envelope naming where the admin
// API is, whatever the method, path trick or credential; nothing is created, changed or
// revoked, and no upstream is called.
func adminPlaneCases() []badCase {
	elsewhere := chatErr(404, "invalid_request_error", "admin_elsewhere", "", "the admin API is served on its own listener; see server.admin_addr")
	call := func(method, name, path, body string) badCase {
		return badCase{endpoint: "adminplane", name: name, method: method, path: path, body: body, key: keyAdmin, want: elsewhere, eff: nothing}
	}
	const acct = "/admin/v1/accounts/{acct}"
	return []badCase{
		call("GET", "the account list", "/admin/v1/accounts", ""),
		call("POST", "a new account", "/admin/v1/accounts", `{"email":"new@example.com","plan":"roomy"}`),
		call("POST", "a new key", acct+"/keys", `{"name":"k"}`),
		call("POST", "a top-up", acct+"/credits", `{"amount_usd":"5","idempotency_key":"t1"}`),
		call("PUT", "a plan", acct+"/plan", `{"plan":"free"}`),
		call("POST", "disabling the account", acct+"/disable", "").withCheck(keyStillWorks),
		call("PUT", "a password", acct+"/password", `{"password":"a long new password"}`),
		call("PATCH", "a key's limits", "/admin/v1/keys/{keyid}", `{"limits":{"rpm":1}}`).withCheck(keyStillWorks),
		call("DELETE", "revoking the key", "/admin/v1/keys/{keyid}", "").withCheck(keyStillWorks),
		call("GET", "route health", "/admin/v1/routes", ""),
		call("GET", "the prefix alone", "/admin/v1", ""),
		call("GET", "no token", "/admin/v1/accounts", "").withKey(keyNone),
		call("GET", "an API key as the token", "/admin/v1/accounts", "").withKey(keyMain),
		call("HEAD", "HEAD", "/admin/v1/accounts", "").withWant(answer{status: 404}),
		call("OPTIONS", "a browser's preflight", "/admin/v1/accounts", "").
			withHeaders("Origin", "https://app.example.com", "Access-Control-Request-Method", "POST"),
		call("FOO", "a method HTTP does not have", "/admin/v1/accounts", ""),
		call("GET", "a dot-dot path from /admin/v1 to the API", "/admin/v1/../../v1/models", ""),
		call("GET", "an encoded slash", "/admin%2Fv1/accounts", ""),
		call("GET", "cluster status", "/admin/cluster/status", ""),
		call("POST", "a cluster join", "/admin/cluster/members", `{"node_id":2,"raft_addr":"10.0.0.2:7001"}`),
		call("DELETE", "a cluster removal", "/admin/cluster/members/2", ""),
		call("POST", "a drain", "/admin/cluster/members/1/drain", ""),
		call("GET", "another case is another path", "/ADMIN/v1/accounts", "").
			withWant(chatErr(404, "invalid_request_error", "unknown_url", "", "no endpoint at /ADMIN/v1/accounts")),
	}
}

// withCheck looks further at the case's answer.
func (c badCase) withCheck(f func(*testing.T, *suite, *caseAccount, []byte)) badCase {
	c.check = f
	return c
}

// withWant replaces the case's expected answer.
func (c badCase) withWant(w answer) badCase { c.want = w; return c }

// keyStillWorks: the case account's key is neither revoked, limited nor disabled.
func keyStillWorks(t *testing.T, s *suite, c *caseAccount, _ []byte) {
	for range 2 { // twice: an rpm of 1 would refuse the second
		resp := s.env.Do(http.MethodGet, "/v1/models", c.key, "")
		if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
			t.Fatalf("the account's key after the case: %d %s", resp.StatusCode, raw)
		}
	}
}
