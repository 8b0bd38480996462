package admin_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// apiError is the OpenAI-style error body every failure carries.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// keyOut is the answer to a key creation: the key's metadata plus, for minted keys only,
// its secret.
type keyOut struct {
	persistence.Key
	Secret string `json:"key"`
}

type usageOut struct {
	Object string `json:"object"`
	Data   []struct {
		persistence.LogEntry
		CostUSD string `json:"list_cost_usd"` // the per-token worth; what was charged is cost_usd
	} `json:"data"`
	Total string `json:"total_list_cost_usd"`
}

var secretRe = regexp.MustCompile(`^sk-token-[A-Za-z0-9]{48}$`)

// admin sends an admin request with the right token and returns the status and body.
func admin(t *testing.T, env *nodetest.Env, method, path, body string) (int, []byte) {
	t.Helper()
	resp := env.Admin(method, path, body)
	raw := nodetest.Read(t, resp)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, raw
}

func Decode(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// wantError checks an error answer's status, type, code and param, and that its message
// contains every one of words.
func wantError(t *testing.T, status int, raw []byte, wantStatus int, typ, code, param string, words ...string) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("status %d, want %d: %s", status, wantStatus, raw)
	}
	var e apiError
	Decode(t, raw, &e)
	gotParam, gotCode := "", ""
	if e.Error.Param != nil {
		gotParam = *e.Error.Param
	}
	if e.Error.Code != nil {
		gotCode = *e.Error.Code
	}
	if e.Error.Type != typ || gotCode != code || gotParam != param {
		t.Fatalf("error = %s, want type %q code %q param %q", raw, typ, code, param)
	}
	for _, w := range words {
		if !strings.Contains(e.Error.Message, w) {
			t.Fatalf("message %q does not mention %q", e.Error.Message, w)
		}
	}
}

func accountCount(t *testing.T, env *nodetest.Env) int {
	t.Helper()
	accts, err := env.Node.Store.ListAccounts()
	if err != nil {
		t.Fatal(err)
	}
	return len(accts)
}

// createKey makes a key through the admin API and returns the answer.
func createKey(t *testing.T, env *nodetest.Env, acct, body string) keyOut {
	t.Helper()
	status, raw := admin(t, env, http.MethodPost, "/admin/v1/accounts/"+acct+"/keys", body)
	if status != http.StatusCreated {
		t.Fatalf("create key: %d %s", status, raw)
	}
	var k keyOut
	Decode(t, raw, &k)
	return k
}

// modelIDs lists the models GET /v1/models shows the key, or fails with the status.
func modelIDs(t *testing.T, env *nodetest.Env, key string) []string {
	t.Helper()
	resp := env.Do(http.MethodGet, "/v1/models", key, "")
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/models: %d %s", resp.StatusCode, raw)
	}
	var out struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	Decode(t, raw, &out)
	ids := []string{}
	for _, m := range out.Data {
		ids = append(ids, m.ID)
	}
	return ids
}

func chatStatus(t *testing.T, env *nodetest.Env, key, text string) (int, []byte) {
	t.Helper()
	resp := env.Post("/v1/chat/completions", key, `{"model":"chat","messages":[{"role":"user","content":"`+text+`"}]}`)
	return resp.StatusCode, nodetest.Read(t, resp)
}

func TestCreateAndGetAccount(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	cases := []struct {
		name       string
		body       string
		status     int
		email      string
		plan       string
		code       string // error code when status is not 201
		mentioning string // a word the error message must contain
	}{
		{name: "with plan", body: `{"email":"ops@example.com","plan":"pro"}`, status: 201, email: "ops@example.com", plan: "pro"},
		{name: "plan defaults", body: `{"email":"dev@example.com"}`, status: 201, email: "dev@example.com", plan: "free"},
		{name: "invalid email", body: `{"email":"not-an-email"}`, status: 400, code: "invalid_request", mentioning: "email"},
		{name: "missing email", body: `{"plan":"pro"}`, status: 400, code: "invalid_request", mentioning: "email"},
		{name: "email with space", body: `{"email":"a b@example.com"}`, status: 400, code: "invalid_request", mentioning: "email"},
		{name: "unknown field", body: `{"email":"x@example.com","role":"owner"}`, status: 400, code: "invalid_json", mentioning: `"role"`},
		{name: "malformed json", body: `{"email":`, status: 400, code: "invalid_json"},
		{name: "wrong type", body: `{"email":42}`, status: 400, code: "invalid_json", mentioning: "email"},
	}
	created := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now().Unix()
			status, raw := admin(t, env, http.MethodPost, "/admin/v1/accounts", tc.body)
			if tc.status != 201 {
				param := map[string]string{"invalid_request": "email"}[tc.code] // the store's refusals name the field
				wantError(t, status, raw, tc.status, "invalid_request_error", tc.code, param, tc.mentioning)
				return
			}
			if status != 201 {
				t.Fatalf("status %d: %s", status, raw)
			}
			created++
			var a persistence.Account
			Decode(t, raw, &a)
			if !regexp.MustCompile(`^acct_[A-Za-z0-9]{20}$`).MatchString(a.ID) || a.Email != tc.email || a.Plan != tc.plan ||
				a.CreatedAt < before || a.CreatedAt > time.Now().Unix() {
				t.Fatalf("account = %s", raw)
			}
			// The account reads back identically.
			status, raw = admin(t, env, http.MethodGet, "/admin/v1/accounts/"+a.ID, "")
			var got persistence.Account
			Decode(t, raw, &got)
			if status != 200 || got != a {
				t.Fatalf("get = %d %s, want %+v", status, raw, a)
			}
		})
	}
	if n := accountCount(t, env); n != 1+created || created != 2 {
		t.Fatalf("accounts = %d after %d creations; refused requests must create nothing", n, created)
	}
}

func TestGetAccount(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts/"+env.Account.ID, "")
	var a persistence.Account
	Decode(t, raw, &a)
	if status != 200 || a != env.Account {
		t.Fatalf("get = %d %s, want %+v", status, raw, env.Account)
	}
	for _, id := range []string{"acct_doesnotexist000000", "nope"} {
		status, raw = admin(t, env, http.MethodGet, "/admin/v1/accounts/"+id, "")
		wantError(t, status, raw, 404, "invalid_request_error", "account_not_found", "", id)
	}
}

func TestCreateKey(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	path := "/admin/v1/accounts/" + env.Account.ID + "/keys"
	cases := []struct {
		name    string
		body    string
		models  []string
		zdr     bool
		visible []string // GET /v1/models with the new key
	}{
		// ZDR hides "open-only" and "embed", which have no ZDR route.
		{name: "restricted zdr", body: `{"name":"ci","models":["chat","embed"],"zdr":true}`, models: []string{"chat", "embed"}, zdr: true, visible: []string{"chat"}},
		{name: "restricted", body: `{"name":"ci-2","models":["embed"]}`, models: []string{"embed"}, visible: []string{"embed"}},
		{name: "unrestricted", body: `{"name":"plain"}`, models: []string{}, visible: []string{"chat", "embed", "gem", "gimg", "img", "msg", "open-only", "resp", "vid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now().Unix()
			status, raw := admin(t, env, http.MethodPost, path, tc.body)
			if status != 201 {
				t.Fatalf("status %d: %s", status, raw)
			}
			var k keyOut
			Decode(t, raw, &k)
			if !secretRe.MatchString(k.Secret) {
				t.Fatalf("key %q does not look like sk-token-<48 base62>", k.Secret)
			}
			if !regexp.MustCompile(`^key_[A-Za-z0-9]{20}$`).MatchString(k.ID) || k.AccountID != env.Account.ID ||
				!slices.Equal(k.Models, tc.models) || k.ZDR != tc.zdr || k.Hint != "sk-token-…"+k.Secret[len(k.Secret)-4:] ||
				k.CreatedAt < before || k.CreatedAt > time.Now().Unix() || k.RevokedAt != 0 {
				t.Fatalf("key = %s", raw)
			}
			if tc.models != nil && len(tc.models) == 0 && !bytes.Contains(raw, []byte(`"models":[]`)) {
				t.Fatalf("unrestricted models must be [] not null: %s", raw)
			}
			if bytes.Contains(raw, []byte("revoked_at")) {
				t.Fatalf("an active key shows revoked_at: %s", raw)
			}
			// The store agrees, and the secret works with exactly the key's policy.
			stored, err := env.Node.Store.LookupKey(k.Secret)
			if err != nil || stored.ID != k.ID {
				t.Fatalf("lookup = %+v, %v", stored, err)
			}
			if got := modelIDs(t, env, k.Secret); !slices.Equal(got, tc.visible) {
				t.Fatalf("visible models %v, want %v", got, tc.visible)
			}
		})
	}

	errCases := []struct {
		name, path, body string
		status           int
		code, param      string
		mentioning       string
	}{
		{"unknown account", "/admin/v1/accounts/acct_doesnotexist000000/keys", `{"name":"x"}`, 404, "account_not_found", "", `no account "acct_doesnotexist000000"`},
		{"missing name", path, `{"models":["chat"]}`, 400, "invalid_request", "name", "key name is required"},
		{"duplicate model", path, `{"name":"x","models":["chat","chat"]}`, 400, "invalid_request", "models", `models[1] "chat" is listed twice`},
		{"empty model", path, `{"name":"x","models":[""]}`, 400, "invalid_request", "models", "models[0] is empty"},
		{"models not in the catalog", path, `{"name":"x","models":["chat","gpt-9","chat-latest","nope"]}`, 400, "unknown_model", "models", "not in the catalog: gpt-9, nope"},
		{"unknown field", path, `{"name":"x","secret":"sk-token-abc"}`, 400, "invalid_json", "", `documented fields: unknown field "secret"`},
		{"models not a list", path, `{"name":"x","models":"chat"}`, 400, "invalid_json", "", "models must be an array, not string"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodPost, tc.path, tc.body)
			wantError(t, status, raw, tc.status, "invalid_request_error", tc.code, tc.param, tc.mentioning)
			if bytes.Contains(raw, []byte("persistence")) || bytes.Contains(raw, []byte("json:")) || bytes.Contains(raw, []byte("Go ")) {
				t.Fatalf("the message carries Go words: %s", raw)
			}
		})
	}
	keys, _ := env.Node.Store.ListKeys(env.Account.ID)
	if len(keys) != 1+len(cases) {
		t.Fatalf("keys = %d; refused requests must create nothing", len(keys))
	}
}

func TestImportKey(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	const secret = nodetest.ImportedKey
	path := "/admin/v1/accounts/" + env.Account.ID + "/keys"
	status, raw := admin(t, env, http.MethodPost, path, `{"name":"legacy","models":["chat"],"import_key":"`+secret+`"}`)
	if status != 201 {
		t.Fatalf("import: %d %s", status, raw)
	}
	if bytes.Contains(raw, []byte(secret)) || bytes.Contains(raw, []byte(`"key"`)) {
		t.Fatalf("the import answer echoes the secret: %s", raw)
	}
	var k keyOut
	Decode(t, raw, &k)
	if k.AccountID != env.Account.ID || k.Name != "legacy" || !slices.Equal(k.Models, []string{"chat"}) || k.ZDR || k.Hint != "sk-user-…whMj" {
		t.Fatalf("imported key = %s", raw)
	}
	// The imported secret authenticates, with the key's restriction.
	if got := modelIDs(t, env, secret); !slices.Equal(got, []string{"chat"}) {
		t.Fatalf("models for imported key = %v", got)
	}
	if s, raw := chatStatus(t, env, secret, "hello"); s != 200 {
		t.Fatalf("chat with imported key: %d %s", s, raw)
	}

	other, err := env.Node.Store.CreateAccount("other@example.com", "default")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, acct, body string
		status           int
		code, param      string
		mentioning       string
	}{
		{"same account again", env.Account.ID, `{"name":"again","import_key":"` + secret + `"}`, 409, "conflict", "import_key", "already registered"},
		{"another account", other.ID, `{"name":"stolen","import_key":"` + secret + `"}`, 409, "conflict", "import_key", "already registered"},
		{"minted secret re-imported", env.Account.ID, `{"name":"dup","import_key":"` + env.Key + `"}`, 409, "conflict", "import_key", "already registered"},
		{"bad prefix", env.Account.ID, `{"name":"x","import_key":"pk-live-0123456789abcdefghijkl"}`, 400, "invalid_request", "import_key", "sk-user-"},
		{"too short", env.Account.ID, `{"name":"x","import_key":"sk-user-short"}`, 400, "invalid_request", "import_key", "min 20"},
		{"12 characters of secret", env.Account.ID, `{"name":"x","import_key":"sk-user-aaaaaaaaaaaa"}`, 400, "invalid_request", "import_key",
			"the secret after sk-user- has about 4 bits of entropy, under the 128 needed"},
		{"a guessable secret", env.Account.ID, `{"name":"x","import_key":"sk-token-Password1234567890"}`, 400, "invalid_request", "import_key",
			"the secret after sk-token- has about 59 bits of entropy, under the 128 needed"},
		{"unknown account", "acct_doesnotexist000000", `{"name":"x","import_key":"` + nodetest.ImportedKey + `2"}`, 404, "account_not_found", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodPost, "/admin/v1/accounts/"+tc.acct+"/keys", tc.body)
			wantError(t, status, raw, tc.status, "invalid_request_error", tc.code, tc.param, tc.mentioning)
			var in struct {
				Import string `json:"import_key"`
			}
			Decode(t, []byte(tc.body), &in)
			if bytes.Contains(raw, []byte(in.Import)) {
				t.Fatalf("the error echoes the secret: %s", raw)
			}
		})
	}
	if keys, _ := env.Node.Store.ListKeys(other.ID); len(keys) != 0 {
		t.Fatalf("the refused import left keys on the other account: %+v", keys)
	}
}

func TestListKeysNeverShowsSecrets(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	path := "/admin/v1/accounts/" + env.Account.ID + "/keys"
	minted1 := createKey(t, env, env.Account.ID, `{"name":"one"}`)
	minted2 := createKey(t, env, env.Account.ID, `{"name":"two","models":["embed"],"zdr":true}`)
	const imported = nodetest.ImportedKey + "List"
	imp := createKey(t, env, env.Account.ID, `{"name":"three","import_key":"`+imported+`"}`)
	revoked := createKey(t, env, env.Account.ID, `{"name":"four"}`)
	if s, raw := admin(t, env, http.MethodDelete, "/admin/v1/keys/"+revoked.ID, ""); s != 200 {
		t.Fatalf("revoke: %d %s", s, raw)
	}

	status, raw := admin(t, env, http.MethodGet, path, "")
	if status != 200 {
		t.Fatalf("list: %d %s", status, raw)
	}
	for _, secret := range []string{env.Key, minted1.Secret, minted2.Secret, imported, revoked.Secret} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("the key list shows secret %q: %s", secret, raw)
		}
		// Not even the random part without its prefix.
		if i := strings.LastIndex(secret, "-"); bytes.Contains(raw, []byte(secret[i+1:])) {
			t.Fatalf("the key list shows the body of secret %q: %s", secret, raw)
		}
	}
	var out struct {
		Object string   `json:"object"`
		Data   []keyOut `json:"data"`
	}
	Decode(t, raw, &out)
	envKey, _ := env.Node.Store.LookupKey(env.Key)
	want := []struct {
		id, name, hint string
		revoked        bool
	}{
		{envKey.ID, "test", "sk-token-…" + env.Key[len(env.Key)-4:], false},
		{minted1.ID, "one", minted1.Hint, false},
		{minted2.ID, "two", minted2.Hint, false},
		{imp.ID, "three", "sk-user-…List", false},
		{revoked.ID, "four", revoked.Hint, true},
	}
	if out.Object != "list" || len(out.Data) != len(want) {
		t.Fatalf("list = %s", raw)
	}
	for i, w := range want {
		k := out.Data[i]
		if k.Secret != "" || k.ID != w.id || k.Name != w.name || k.Hint != w.hint || (k.RevokedAt != 0) != w.revoked || k.AccountID != env.Account.ID {
			t.Fatalf("data[%d] = %+v, want %+v", i, k, w)
		}
	}
	if !slices.Equal(out.Data[2].Models, []string{"embed"}) || !out.Data[2].ZDR {
		t.Fatalf("policy not listed: %+v", out.Data[2])
	}

	// An account with no keys lists an empty array; an unknown one is 404.
	empty, _ := env.Node.Store.CreateAccount("empty@example.com", "default")
	status, raw = admin(t, env, http.MethodGet, "/admin/v1/accounts/"+empty.ID+"/keys", "")
	if status != 200 || !bytes.Equal(bytes.TrimSpace(raw), []byte(`{"data":[],"object":"list"}`)) {
		t.Fatalf("empty list = %d %s", status, raw)
	}
	status, raw = admin(t, env, http.MethodGet, "/admin/v1/accounts/acct_doesnotexist000000/keys", "")
	wantError(t, status, raw, 404, "invalid_request_error", "account_not_found", "", "acct_doesnotexist000000")
}

func TestRevokeKey(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	k := createKey(t, env, env.Account.ID, `{"name":"doomed"}`)
	if s, raw := chatStatus(t, env, k.Secret, "before"); s != 200 {
		t.Fatalf("before revocation: %d %s", s, raw)
	}
	before := time.Now().Unix()
	status, raw := admin(t, env, http.MethodDelete, "/admin/v1/keys/"+k.ID, "")
	if status != 200 {
		t.Fatalf("revoke: %d %s", status, raw)
	}
	var got keyOut
	Decode(t, raw, &got)
	if got.ID != k.ID || got.Name != "doomed" || got.RevokedAt < before || got.RevokedAt > time.Now().Unix() || got.Secret != "" {
		t.Fatalf("revoked key = %s", raw)
	}
	s, raw := chatStatus(t, env, k.Secret, "after")
	wantError(t, s, raw, 401, "authentication_error", "invalid_api_key", "", "revoked")
	// Other keys of the account keep working.
	if s, raw := chatStatus(t, env, env.Key, "others"); s != 200 {
		t.Fatalf("the account's other key: %d %s", s, raw)
	}
	// Revoking again keeps the first revocation time.
	status, raw = admin(t, env, http.MethodDelete, "/admin/v1/keys/"+k.ID, "")
	var again keyOut
	Decode(t, raw, &again)
	if status != 200 || again.RevokedAt != got.RevokedAt {
		t.Fatalf("second revoke = %d %s", status, raw)
	}
	status, raw = admin(t, env, http.MethodDelete, "/admin/v1/keys/key_doesnotexist00000000", "")
	wantError(t, status, raw, 404, "invalid_request_error", "key_not_found", "", `no key "key_doesnotexist00000000"`)
}

// TestGuard: every route refuses every request without the exact bearer admin token, and
// a refused request changes nothing.
func TestGuard(t *testing.T) {
	env := nodetest.Start(t, nodetest.ManyAuthFailures(nodetest.DefaultCatalog), nodetest.Options{}) // 64 wrong tokens
	envKey, _ := env.Node.Store.LookupKey(env.Key)
	acct := env.Account.ID
	routes := []struct{ method, path, body string }{
		{http.MethodPost, "/admin/v1/accounts", `{"email":"intruder@example.com"}`},
		{http.MethodGet, "/admin/v1/accounts/" + acct, ""},
		{http.MethodGet, "/admin/v1/accounts?email=" + env.Account.Email, ""},
		{http.MethodPost, "/admin/v1/accounts/" + acct + "/keys", `{"name":"intruder"}`},
		{http.MethodGet, "/admin/v1/accounts/" + acct + "/keys", ""},
		{http.MethodGet, "/admin/v1/accounts/" + acct + "/usage", ""},
		{http.MethodDelete, "/admin/v1/keys/" + envKey.ID, ""},
		{http.MethodGet, "/admin/v1/routes", ""},
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+nodetest.AdminToken))
	auths := []struct {
		name    string
		headers []string
	}{
		{"no token", nil},
		{"wrong token", []string{"Authorization", "Bearer wrong-token"}},
		{"token prefix", []string{"Authorization", "Bearer " + nodetest.AdminToken[:20]}},
		{"token with suffix", []string{"Authorization", "Bearer " + nodetest.AdminToken + "2"}},
		{"basic scheme", []string{"Authorization", basic}},
		{"basic with raw token", []string{"Authorization", "Basic " + nodetest.AdminToken}},
		{"token without scheme", []string{"Authorization", nodetest.AdminToken}},
		{"empty bearer", []string{"Authorization", "Bearer "}},
		{"api key header", []string{"x-api-key", nodetest.AdminToken}},
		{"user api key", []string{"Authorization", "Bearer " + env.Key}},
	}
	for _, rt := range routes {
		for _, a := range auths {
			t.Run(rt.method+" "+rt.path+"/"+a.name, func(t *testing.T) {
				resp := env.DoAdmin(rt.method, rt.path, "", rt.body, a.headers...)
				raw := nodetest.Read(t, resp)
				wantError(t, resp.StatusCode, raw, 401, "authentication_error", "invalid_admin_token", "", "Bearer")
				for _, secret := range []string{acct, env.Account.Email, envKey.ID, "intruder"} {
					if bytes.Contains(raw, []byte(secret)) {
						t.Fatalf("a refused request answers with data (%q): %s", secret, raw)
					}
				}
			})
		}
	}
	// The right token passes on the same routes (the GETs, which change nothing).
	for _, rt := range routes {
		if rt.method == http.MethodGet {
			if s, raw := admin(t, env, rt.method, rt.path, rt.body); s != 200 {
				t.Fatalf("%s %s with the admin token: %d %s", rt.method, rt.path, s, raw)
			}
		}
	}
	if n := accountCount(t, env); n != 1 {
		t.Fatalf("accounts = %d: a refused request created one", n)
	}
	if keys, _ := env.Node.Store.ListKeys(acct); len(keys) != 1 || keys[0].RevokedAt != 0 {
		t.Fatalf("keys = %+v: a refused request created or revoked one", keys)
	}
}
