package node_test

import (
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// accountClient calls the account API as one caller: a session (cookie, and the CSRF token
// unless csrf is "-") or an API key.
type accountClient struct {
	env           *nodetest.Env
	session, csrf string
	key           string
}

func (c accountClient) do(t *testing.T, method, path, body string) (int, string, http.Header) {
	t.Helper()
	var headers []string
	if c.session != "" {
		headers = append(headers, "Cookie", "mg_session="+c.session)
		if c.csrf != "-" {
			headers = append(headers, "X-CSRF-Token", c.csrf)
		}
	}
	r := c.env.Do(method, path, c.key, body, headers...)
	return r.StatusCode, string(nodetest.Read(t, r)), r.Header
}

// sessionOf is the account's browser session (nodetest's Session).
func sessionOf(t *testing.T, env *nodetest.Env, acct string) accountClient {
	t.Helper()
	h := env.Session(acct)
	return accountClient{env: env, session: strings.TrimPrefix(h[1], "mg_session="), csrf: h[3]}
}

func decodeJSON(t *testing.T, body string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
}

// The account API over a whole node: a session creates, changes and revokes a key whose
// call then shows in usage, usage.csv and credits; the account's own API key reads the same.
func TestAccountAPIManagesKeysAndShowsUsageAndCredits(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	ses := sessionOf(t, env, env.Account.ID)
	if r := env.Admin("POST", "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"10.00","idempotency_key":"t1"}`); r.StatusCode != 200 {
		t.Fatalf("top-up: %d %s", r.StatusCode, nodetest.Read(t, r))
	}

	status, body, _ := ses.do(t, "POST", "/account/v1/keys", `{"name":"laptop","models":[],"zdr":false,"limits":{"budget":{"amount_usd":"12.50","period":"week"},"rpm":30}}`)
	var created struct {
		ID, Name, Key string
		Limits        persistence.KeyLimitsJSON
	}
	decodeJSON(t, body, &created)
	if status != 201 || created.Name != "laptop" || !strings.HasPrefix(created.Key, "sk-token-") || created.Limits.RPM == nil || *created.Limits.RPM != 30 ||
		created.Limits.Budget == nil || created.Limits.Budget.AmountUSD != "12.5" || created.Limits.Budget.Period != "week" {
		t.Fatalf("create: %d %s", status, body)
	}
	if r := env.Post("/v1/chat/completions", created.Key, chat("chat", "hi")); r.StatusCode != 200 {
		t.Fatalf("a call with the new key: %d %s", r.StatusCode, nodetest.Read(t, r))
	}

	status, body, _ = ses.do(t, "PATCH", "/account/v1/keys/"+created.ID, `{"name":"work","limits":{}}`)
	if status != 200 || !strings.Contains(body, `"name":"work"`) || !strings.Contains(body, `"limits":{"budget":null,"expires_at":null,"rpm":null}`) {
		t.Fatalf("patch: %d %s", status, body)
	}

	keyCaller := accountClient{env: env, key: env.Key}
	for _, c := range []accountClient{ses, keyCaller} {
		status, body, hdr := c.do(t, "GET", "/account/v1/me", "")
		var me struct {
			AccountID string `json:"account_id"`
			Email     string
			Plan      string
			Balance   string `json:"balance_usd"`
			Window    struct {
				ResetsAt string `json:"resets_at"`
			}
		}
		decodeJSON(t, body, &me)
		if status != 200 || me.AccountID != env.Account.ID || me.Email != "test@example.com" || me.Plan != "demo" || me.Balance != "10" ||
			hdr.Get("Cache-Control") != "no-store" {
			t.Errorf("me: %d %s", status, body)
		}
		status, body, _ = c.do(t, "GET", "/account/v1/usage?key="+created.ID, "")
		var page struct {
			Data []struct {
				KeyID   string `json:"key_id"`
				Model   string
				Status  int
				ListUSD string `json:"list_cost_usd"`
			}
			HasMore bool `json:"has_more"`
			Totals  struct{ Count int64 }
		}
		decodeJSON(t, body, &page)
		if status != 200 || len(page.Data) != 1 || page.Totals.Count != 1 || page.HasMore || page.Data[0].KeyID != created.ID ||
			page.Data[0].Model != "chat" || page.Data[0].Status != 200 || page.Data[0].ListUSD == "0" {
			t.Errorf("usage: %d %s", status, body)
		}
		status, body, _ = c.do(t, "GET", "/account/v1/credits", "")
		var credits struct {
			Balance string                                         `json:"balance_usd"`
			History []struct{ Date, Kind, Amount, Balance string } `json:"history"`
		}
		decodeJSON(t, body, &credits)
		if status != 200 || credits.Balance != "10" || len(credits.History) != 1 || credits.History[0].Kind != "top_up" ||
			credits.History[0].Date != time.Now().UTC().Format(time.DateOnly) || !strings.Contains(body, `"amount_usd":"10"`) {
			t.Errorf("credits: %d %s", status, body)
		}
	}

	status, body, hdr := ses.do(t, "GET", "/account/v1/usage.csv?key="+created.ID, "")
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if status != 200 || err != nil || hdr.Get("Content-Type") != "text/csv; charset=utf-8" || len(rows) != 2 ||
		rows[0][0] != "request_id" || rows[1][2] != created.ID || rows[1][3] != "chat" || rows[1][4] != "200" {
		t.Fatalf("usage.csv: %d %v %q", status, err, body)
	}

	status, body, _ = ses.do(t, "DELETE", "/account/v1/keys/"+created.ID, "")
	if status != 200 || !strings.Contains(body, `"revoked_at":`) {
		t.Fatalf("revoke: %d %s", status, body)
	}
	if r := env.Post("/v1/chat/completions", created.Key, chat("chat", "hi")); r.StatusCode != 401 {
		t.Fatalf("a call with the revoked key: %d", r.StatusCode)
	}
	status, body, _ = keyCaller.do(t, "GET", "/account/v1/keys", "")
	if status != 200 || strings.Count(body, `"id":"key_`) != 2 || !strings.Contains(body, `"name":"work"`) {
		t.Errorf("keys: %d %s", status, body)
	}
	status, body, hdr = accountClient{env: env}.do(t, "GET", "/account/v1/openapi.yaml", "")
	if status != 200 || hdr.Get("Content-Type") != "application/yaml" || !strings.HasPrefix(body, "openapi: 3.1.0") {
		t.Errorf("openapi.yaml: %d %.40s", status, body)
	}
}

// Bad input and other accounts: each refusal names its cause and field, and changes nothing.
func TestAccountAPIRefusesBadInputAndOtherAccounts(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	ses := sessionOf(t, env, env.Account.ID)
	other, err := env.Node.Store.CreateAccount("other@example.com", "demo")
	if err != nil {
		t.Fatal(err)
	}
	otherKey, otherSecret, err := env.Node.Store.CreateKey(other.ID, persistence.KeySpec{Name: "b's"})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // three entries: a page of 1 has a cursor
		if r := env.Post("/v1/chat/completions", env.Key, chat("chat", "hi")); r.StatusCode != 200 {
			t.Fatalf("call: %d", r.StatusCode)
		}
	}
	_, body, _ := ses.do(t, "GET", "/account/v1/usage?limit=1", "")
	var page struct {
		Next string `json:"next_cursor"`
	}
	decodeJSON(t, body, &page)
	raw, _ := base64.RawURLEncoding.DecodeString(page.Next)
	tampered := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), `"n":1`, `"n":"x"`, 1)))

	noCSRF := ses
	noCSRF.csrf = "-"
	wrongCSRF := ses
	wrongCSRF.csrf = "not-the-token"
	key := accountClient{env: env, key: env.Key}
	for _, tc := range []struct {
		name         string
		c            accountClient
		method, path string
		body         string
		status       int
		code, param  string
	}{
		{"no credentials", accountClient{env: env}, "GET", "/account/v1/me", "", 401, "not_authenticated", ""},
		{"unknown API key", accountClient{env: env, key: "sk-token-nosuchkey000000000000"}, "GET", "/account/v1/me", "", 401, "invalid_api_key", ""},
		{"ended session", accountClient{env: env, session: "nosuchsession"}, "GET", "/account/v1/me", "", 401, "not_authenticated", ""},
		{"API key creating a key", key, "POST", "/account/v1/keys", `{"name":"x"}`, 403, "session_required", ""},
		{"API key revoking a key", key, "DELETE", "/account/v1/keys/" + otherKey.ID, "", 403, "session_required", ""},
		{"CSRF token missing", noCSRF, "POST", "/account/v1/keys", `{"name":"x"}`, 403, "csrf_token_invalid", ""},
		{"CSRF token wrong", wrongCSRF, "PATCH", "/account/v1/keys/" + otherKey.ID, `{"name":"x"}`, 403, "csrf_token_invalid", ""},
		{"renaming another account's key", ses, "PATCH", "/account/v1/keys/" + otherKey.ID, `{"name":"mine now"}`, 404, "key_not_found", "id"},
		{"revoking another account's key", ses, "DELETE", "/account/v1/keys/" + otherKey.ID, "", 404, "key_not_found", "id"},
		{"unknown key id", ses, "PATCH", "/account/v1/keys/key_nosuchkey", `{"name":"x"}`, 404, "key_not_found", "id"},
		{"usage of another account's key", key, "GET", "/account/v1/usage?key=" + otherKey.ID, "", 404, "key_not_found", "key"},
		{"usage.csv of another account's key", ses, "GET", "/account/v1/usage.csv?key=" + otherKey.ID, "", 404, "key_not_found", "key"},
		{"limit 0", ses, "GET", "/account/v1/usage?limit=0", "", 400, "invalid_limit", "limit"},
		{"limit above 1000", ses, "GET", "/account/v1/usage?limit=1001", "", 400, "invalid_limit", "limit"},
		{"limit not a number", key, "GET", "/account/v1/usage?limit=ten", "", 400, "invalid_limit", "limit"},
		{"tampered cursor", ses, "GET", "/account/v1/usage?cursor=" + tampered, "", 400, "invalid_request", "cursor"},
		{"cursor of garbage", ses, "GET", "/account/v1/usage.csv?cursor=!!", "", 400, "invalid_request", "cursor"},
		{"cursor with another filter", ses, "GET", "/account/v1/usage?model=msg&cursor=" + page.Next, "", 400, "invalid_request", "cursor"},
		{"bad from", ses, "GET", "/account/v1/usage?from=yesterday", "", 400, "invalid_time", "from"},
		{"unknown parameter", ses, "GET", "/account/v1/usage?account=" + other.ID, "", 400, "unknown_parameter", "account"},
		{"budget not a number", ses, "POST", "/account/v1/keys", `{"name":"x","limits":{"budget":{"amount_usd":"lots","period":"day"}}}`, 400, "invalid_request", "limits.budget.amount_usd"},
		{"budget period unknown", ses, "POST", "/account/v1/keys", `{"name":"x","limits":{"budget":{"amount_usd":"1","period":"year"}}}`, 400, "invalid_request", "limits.budget.period"},
		{"rpm 0", ses, "POST", "/account/v1/keys", `{"name":"x","limits":{"rpm":0}}`, 400, "invalid_request", "limits.rpm"},
		{"expiry in the past", ses, "POST", "/account/v1/keys", `{"name":"x","limits":{"expires_at":"2001-01-01T00:00:00Z"}}`, 400, "invalid_request", "limits.expires_at"},
		{"unknown model", ses, "POST", "/account/v1/keys", `{"name":"x","models":["nope"]}`, 400, "unknown_model", "models"},
		{"importing a secret", ses, "POST", "/account/v1/keys", `{"name":"x","import_key":"sk-token-aaaaaaaaaaaaaaaaaaaaaaaa"}`, 400, "invalid_json", "import_key"},
		{"unknown member", ses, "POST", "/account/v1/keys", `{"name":"x","account_id":"` + other.ID + `"}`, 400, "invalid_json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := tc.c.do(t, tc.method, tc.path, tc.body)
			var e struct {
				Error struct{ Code, Param string }
			}
			decodeJSON(t, body, &e)
			if status != tc.status || e.Error.Code != tc.code || e.Error.Param != tc.param {
				t.Errorf("%d %s; want %d code %q param %q", status, body, tc.status, tc.code, tc.param)
			}
		})
	}
	keys, err := env.Node.Store.ListKeys(env.Account.ID)
	if err != nil || len(keys) != 1 {
		t.Errorf("the refusals wrote keys: %v %v", keys, err)
	}
	if k, err := env.Node.Store.LookupKey(otherSecret); err != nil || k.Name != "b's" || k.RevokedAt != 0 {
		t.Errorf("the other account's key changed: %+v %v", k, err)
	}
}
