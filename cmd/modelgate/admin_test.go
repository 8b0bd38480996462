package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// adminTestEnv starts a node and clears the environment adminCmd reads defaults from.
func adminTestEnv(t *testing.T) *nodetest.Env {
	t.Helper()
	for _, v := range []string{"MODELGATE_ADMIN_URL", "MODELGATE_ADMIN_ADDR", "MODELGATE_URL", "MODELGATE_ADDR"} {
		t.Setenv(v, "")
	}
	t.Setenv("MODELGATE_ADMIN_TOKEN", "")
	t.Setenv("MODELGATE_DATA", t.TempDir()) // holds no admin-token
	return nodetest.Start(t, "", nodetest.Options{})
}

// runAdmin runs adminCmd against env with the admin token and returns its output.
func runAdmin(t *testing.T, env *nodetest.Env, args ...string) []byte {
	t.Helper()
	var out bytes.Buffer
	env.WaitIdle() // usage must see the requests answered so far
	args = append(args, "--admin-url", env.Node.AdminURL, "--token", nodetest.AdminToken)
	if err := adminCmd(args, &out); err != nil {
		t.Fatalf("admin %s: %v (output %s)", strings.Join(args, " "), err, out.Bytes())
	}
	return out.Bytes()
}

// adminJSON decodes a command's output, which must be indented JSON ending in a newline.
func adminJSON(t *testing.T, out []byte, v any) {
	t.Helper()
	if !bytes.HasSuffix(out, []byte("}\n")) || !bytes.Contains(out, []byte("\n  \"")) {
		t.Fatalf("output is not indented JSON: %q", out)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("decode %s: %v", out, err)
	}
}

type adminKeyOut struct {
	persistence.Key
	Secret string `json:"key"`
}

func TestAdminCmdAccounts(t *testing.T) {
	env := adminTestEnv(t)
	var a persistence.Account
	adminJSON(t, runAdmin(t, env, "accounts", "create", "--email", "ops@example.com", "--plan", "pro"), &a)
	if !strings.HasPrefix(a.ID, "acct_") || a.Email != "ops@example.com" || a.Plan != "pro" {
		t.Fatalf("created %+v", a)
	}
	var d persistence.Account
	adminJSON(t, runAdmin(t, env, "accounts", "create", "--email", "dev@example.com"), &d)
	if d.Plan != "free" {
		t.Fatalf("no --plan gives plan %q, want default", d.Plan)
	}
	var got persistence.Account
	adminJSON(t, runAdmin(t, env, "accounts", "get", a.ID), &got)
	if got != a {
		t.Fatalf("get = %+v, want %+v", got, a)
	}
	stored, err := env.Node.Store.GetAccount(a.ID)
	if err != nil || stored != a {
		t.Fatalf("store has %+v, %v", stored, err)
	}
}

func TestAdminCmdKeysAndUsage(t *testing.T) {
	env := adminTestEnv(t)
	acct := env.Account.ID

	var k adminKeyOut
	adminJSON(t, runAdmin(t, env, "keys", "create", "--account", acct, "--name", "ci", "--models", "chat, embed,", "--zdr"), &k)
	if !regexp.MustCompile(`^sk-token-[A-Za-z0-9]{48}$`).MatchString(k.Secret) || k.Name != "ci" ||
		!slices.Equal(k.Models, []string{"chat", "embed"}) || !k.ZDR || k.AccountID != acct {
		t.Fatalf("created %+v", k)
	}
	var plain adminKeyOut
	adminJSON(t, runAdmin(t, env, "keys", "create", "--account", acct, "--name", "plain"), &plain)
	if plain.ZDR || plain.Models == nil || len(plain.Models) != 0 || plain.Secret == "" {
		t.Fatalf("created %+v", plain)
	}
	const imported = nodetest.ImportedKey
	out := runAdmin(t, env, "keys", "create", "--account", acct, "--name", "legacy", "--import", imported)
	if bytes.Contains(out, []byte(imported)) {
		t.Fatalf("import output shows the secret: %s", out)
	}
	var imp adminKeyOut
	adminJSON(t, out, &imp)
	if imp.Secret != "" || imp.Hint != "sk-user-…whMj" || imp.Name != "legacy" {
		t.Fatalf("imported %+v", imp)
	}
	if _, err := env.Node.Store.LookupKey(imported); err != nil {
		t.Fatalf("imported key not stored: %v", err)
	}

	out = runAdmin(t, env, "keys", "list", "--account", acct)
	for _, s := range []string{env.Key, k.Secret, plain.Secret, imported} {
		if bytes.Contains(out, []byte(s)) {
			t.Fatalf("key list shows a secret: %s", out)
		}
	}
	var list struct {
		Object string        `json:"object"`
		Data   []adminKeyOut `json:"data"`
	}
	adminJSON(t, out, &list)
	var names []string
	for _, d := range list.Data {
		names = append(names, d.Name)
	}
	if list.Object != "list" || !slices.Equal(names, []string{"test", "ci", "plain", "legacy"}) {
		t.Fatalf("list = %s", out)
	}

	var rev persistence.Key
	adminJSON(t, runAdmin(t, env, "keys", "revoke", plain.ID), &rev)
	if rev.ID != plain.ID || rev.RevokedAt == 0 {
		t.Fatalf("revoked %+v", rev)
	}
	resp := env.Post("/v1/chat/completions", plain.Secret, `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`)
	if nodetest.Read(t, resp); resp.StatusCode != 401 {
		t.Fatalf("revoked key answered %d", resp.StatusCode)
	}

	// Usage: one request of 3 prompt words and the simulator's 16 answer words costs
	// 3 × 0.000001 + 16 × 0.000002 = 0.000035.
	resp = env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"one two three"}]}`)
	if raw := nodetest.Read(t, resp); resp.StatusCode != 200 {
		t.Fatalf("chat: %d %s", resp.StatusCode, raw)
	}
	type usage struct {
		Data []struct {
			CostUSD     string `json:"list_cost_usd"`
			InputTokens int64  `json:"input_tokens"`
			Status      int    `json:"status"`
			KeyID       string `json:"key_id"`
		} `json:"data"`
		Total      string  `json:"total_list_cost_usd"`
		NextCursor *string `json:"next_cursor"`
		Totals     struct {
			Count int64 `json:"count"`
		} `json:"totals"`
	}
	mainKey, _ := env.Node.Store.LookupKey(env.Key)
	now := time.Now()
	// The log holds the revoked key's 401, then the chat call.
	cases := []struct {
		name     string
		args     []string
		statuses []int
		total    string
		more     bool
	}{
		{"no bounds", nil, []int{401, 200}, "0.000035", false},
		{"rfc3339", []string{"--from", now.Add(-time.Hour).UTC().Format(time.RFC3339), "--to", now.Add(time.Hour).Format(time.RFC3339)}, []int{401, 200}, "0.000035", false},
		{"unix seconds", []string{"--from", strconv.FormatInt(now.Add(-time.Hour).Unix(), 10)}, []int{401, 200}, "0.000035", false},
		{"window in the future", []string{"--from", strconv.FormatInt(now.Add(time.Hour).Unix(), 10)}, []int{}, "0", false},
		{"window in the past", []string{"--to", "2020-01-01T00:00:00+01:00"}, []int{}, "0", false},
		{"one key", []string{"--key", mainKey.ID}, []int{200}, "0.000035", false},
		{"the revoked key", []string{"--key", plain.ID}, []int{401}, "0", false},
		{"one model", []string{"--model", "chat"}, []int{200}, "0.000035", false}, // the 401 named no model
		{"another model", []string{"--model", "msg"}, []int{}, "0", false},
		{"a page of one", []string{"--limit", "1"}, []int{401}, "0.000035", true},
		{"every page of one", []string{"--limit", "1", "--all"}, []int{401, 200}, "0.000035", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var u usage
			adminJSON(t, runAdmin(t, env, append([]string{"usage", "--account", acct}, tc.args...)...), &u)
			var statuses []int
			for _, d := range u.Data {
				statuses = append(statuses, d.Status)
			}
			if !slices.Equal(statuses, tc.statuses) || u.Total != tc.total || (u.NextCursor != nil) != tc.more {
				t.Fatalf("usage = %+v, want statuses %v totalling %s, more %v", u, tc.statuses, tc.total, tc.more)
			}
			for _, d := range u.Data {
				if d.Status == 200 && (d.CostUSD != "0.000035" || d.InputTokens != 3 || d.KeyID != mainKey.ID) ||
					d.Status == 401 && (d.CostUSD != "0" || d.KeyID != plain.ID) {
					t.Fatalf("entry = %+v", d)
				}
			}
			if tc.more {
				var next usage
				adminJSON(t, runAdmin(t, env, "usage", "--account", acct, "--limit", "1", "--cursor", *u.NextCursor), &next)
				if len(next.Data) != 1 || next.Data[0].Status != 200 || next.NextCursor != nil || next.Totals.Count != 2 {
					t.Fatalf("the next page = %+v", next)
				}
			}
		})
	}
}

// "admin routes" prints every catalog route's health, as the admin API gives it.
func TestAdminCmdRoutes(t *testing.T) {
	env := adminTestEnv(t)
	var view struct {
		Object string `json:"object"`
		Data   []struct {
			Route     string `json:"route"`
			Model     string `json:"model"`
			Available bool   `json:"available"`
		} `json:"data"`
	}
	adminJSON(t, runAdmin(t, env, "routes"), &view)
	var got []string
	for _, r := range view.Data {
		if !r.Available {
			t.Errorf("route %s unavailable on a fresh node", r.Route)
		}
		got = append(got, r.Route+"="+r.Model)
	}
	if want := "a=chat b=chat c=open-only e=embed g=gem gi=gimg i=img m=msg r=resp v=vid"; view.Object != "list" || strings.Join(got, " ") != want {
		t.Fatalf("routes %v, want %s", got, want)
	}
}

func TestAdminCmdErrors(t *testing.T) {
	env := adminTestEnv(t)
	conn := []string{"--admin-url", env.Node.AdminURL, "--token", nodetest.AdminToken}
	cases := []struct {
		name      string
		args      []string
		err       string // the error's exact text, or with a trailing "…" its prefix
		showsHelp bool
	}{
		{"nothing", nil, "admin needs a resource and an action", true},
		{"resource only", []string{"accounts"}, "admin needs a resource and an action", true},
		{"accounts create without email", append([]string{"accounts", "create", "--plan", "pro"}, conn...), "accounts create needs --email", false},
		{"accounts get without id", append([]string{"accounts", "get"}, conn...), "accounts get needs an account id", false},
		{"keys create without account", append([]string{"keys", "create", "--name", "x"}, conn...), "keys create needs --account", false},
		{"keys list without account", append([]string{"keys", "list"}, conn...), "keys list needs --account", false},
		{"keys revoke without id", append([]string{"keys", "revoke"}, conn...), "keys revoke needs a key id", false},
		{"usage without account", append([]string{"usage", "--from", "0"}, conn...), "usage needs --account", false},
		{"usage with an action", append([]string{"usage", "list", "--account", "x"}, conn...), "usage takes flags only", false},
		{"routes with an action", append([]string{"routes", "list"}, conn...), "routes takes flags only", false},
		{"unknown action", append([]string{"accounts", "delete", "acct_x"}, conn...), `unknown admin command "accounts delete"`, true},
		{"unknown resource", append([]string{"widgets", "list"}, conn...), `unknown admin command "widgets list"`, true},
		{"unknown flag", []string{"keys", "list", "--acount", "x"}, "flag provided but not defined: -acount", false},
		{"api error", append([]string{"accounts", "get", "acct_doesnotexist000000"}, conn...),
			"GET /admin/v1/accounts/acct_doesnotexist000000: 404 Not Found: {…", false},
		{"api refusal", append([]string{"keys", "create", "--account", env.Account.ID}, conn...),
			"POST /admin/v1/accounts/" + env.Account.ID + "/keys: 400 Bad Request: {…", false},
		{"wrong token", []string{"accounts", "get", env.Account.ID, "--admin-url", env.Node.AdminURL, "--token", "nope"},
			"GET /admin/v1/accounts/" + env.Account.ID + ": 401 Unauthorized: {…", false},
		{"no token anywhere", []string{"accounts", "get", env.Account.ID, "--admin-url", env.Node.AdminURL, "--data", t.TempDir()},
			"no admin token: pass --token, set MODELGATE_ADMIN_TOKEN, or point --data at the gateway's data directory", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := adminCmd(tc.args, &out)
			if err == nil {
				t.Fatalf("no error; output %s", out.Bytes())
			}
			if prefix, ok := strings.CutSuffix(tc.err, "…"); ok && !strings.HasPrefix(err.Error(), prefix) || !ok && err.Error() != tc.err {
				t.Fatalf("error %q, want %q", err, tc.err)
			}
			if tc.showsHelp != (out.String() == adminUsage) || !tc.showsHelp && out.Len() != 0 {
				t.Fatalf("output %q (help expected: %v)", out.String(), tc.showsHelp)
			}
		})
	}
	// Refused commands changed nothing.
	if accts, _ := env.Node.Store.ListAccounts(); len(accts) != 1 {
		t.Fatalf("accounts = %+v", accts)
	}
	if keys, _ := env.Node.Store.ListKeys(env.Account.ID); len(keys) != 1 {
		t.Fatalf("keys = %+v", keys)
	}

	// "help" prints the usage and succeeds.
	var out bytes.Buffer
	if err := adminCmd([]string{"help"}, &out); err != nil || out.String() != adminUsage {
		t.Fatalf("help: %v %q", err, out.String())
	}
}

func TestAdminCmdTokenSources(t *testing.T) {
	env := adminTestEnv(t)
	get := []string{"accounts", "get", env.Account.ID}

	// --data DIR: the token is read from DIR/admin-token, surrounding space trimmed.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin-token"), []byte("  "+nodetest.AdminToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := adminCmd(append(get, "--admin-url", env.Node.AdminURL, "--data", dir), &out); err != nil {
		t.Fatalf("token from --data: %v", err)
	}
	var a persistence.Account
	adminJSON(t, out.Bytes(), &a)
	if a != env.Account {
		t.Fatalf("got %+v", a)
	}

	// --token wins over the file.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "admin-token"), []byte("wrong\n"), 0o600)
	out.Reset()
	if err := adminCmd(append(get, "--admin-url", env.Node.AdminURL, "--data", bad, "--token", nodetest.AdminToken), &out); err != nil {
		t.Fatalf("--token with a wrong file: %v", err)
	}
	out.Reset()
	if err := adminCmd(append(get, "--admin-url", env.Node.AdminURL, "--data", bad), &out); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong file token: %v", err)
	}

	// MODELGATE_DATA, MODELGATE_ADMIN_URL and MODELGATE_ADMIN_TOKEN supply the defaults.
	t.Setenv("MODELGATE_DATA", dir)
	t.Setenv("MODELGATE_ADMIN_URL", env.Node.AdminURL+"/")
	out.Reset()
	if err := adminCmd(get, &out); err != nil {
		t.Fatalf("token from MODELGATE_DATA: %v", err)
	}
	t.Setenv("MODELGATE_DATA", bad)
	t.Setenv("MODELGATE_ADMIN_TOKEN", nodetest.AdminToken)
	out.Reset()
	if err := adminCmd(get, &out); err != nil {
		t.Fatalf("token from MODELGATE_ADMIN_TOKEN: %v", err)
	}
}

func TestAdminBillingCommands(t *testing.T) {
	env := adminTestEnv(t)
	var a persistence.Account
	adminJSON(t, runAdmin(t, env, "accounts", "create", "--email", "pay@example.com", "--plan", "free"), &a)
	var moved persistence.Account
	adminJSON(t, runAdmin(t, env, "accounts", "plan", a.ID, "--plan", "pro"), &moved)
	if moved.Plan != "pro" {
		t.Fatalf("plan %q", moved.Plan)
	}
	var credit struct {
		Balance string `json:"balance_usd"`
		Added   bool   `json:"added"`
	}
	for i, want := range []bool{true, false} {
		adminJSON(t, runAdmin(t, env, "accounts", "credits", a.ID, "--amount", "12.50", "--key", "k1"), &credit)
		if credit.Balance != "12.5" || credit.Added != want {
			t.Fatalf("top-up %d: %+v", i, credit)
		}
	}
	var q struct {
		Plan    string `json:"plan"`
		Balance string `json:"balance_usd"`
	}
	adminJSON(t, runAdmin(t, env, "accounts", "quota", a.ID), &q)
	if q.Plan != "pro" || q.Balance != "12.5" {
		t.Fatalf("quota %+v", q)
	}
	var out bytes.Buffer
	err := adminCmd([]string{"accounts", "plan", a.ID, "--plan", "gold", "--admin-url", env.Node.AdminURL, "--token", nodetest.AdminToken}, &out)
	if err == nil || !strings.Contains(err.Error(), "plan gold is not in the catalog") {
		t.Fatalf("unknown plan: %v", err)
	}
}
