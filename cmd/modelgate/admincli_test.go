package main

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// deadAddr is an address nothing listens on: a command sent there fails.
const deadAddr = "127.0.0.1:1"

// TestItem12AdminFindsTheGateway: issue #12 item 12, the admin commands call the gateway at
// --url, else MODELGATE_URL, else the listen address MODELGATE_ADDR (a wildcard host reached
// over loopback), else 127.0.0.1:8080.
func TestItem12AdminFindsTheGateway(t *testing.T) {
	env := adminTestEnv(t)
	nodeURL, _ := url.Parse(env.Node.URL)
	port := nodeURL.Port()
	cases := []struct {
		name               string
		flag, envURL, addr string
		err                string // "" when the command reaches the node
	}{
		{name: "--url", flag: env.Node.URL, envURL: "http://" + deadAddr, addr: deadAddr},
		{name: "--url with a trailing slash", flag: env.Node.URL + "/"},
		{name: "MODELGATE_URL", envURL: env.Node.URL, addr: deadAddr},
		{name: "MODELGATE_ADDR", addr: "127.0.0.1:" + port},
		{name: "MODELGATE_ADDR on every interface", addr: "0.0.0.0:" + port},
		{name: "MODELGATE_ADDR with no host", addr: ":" + port},
		{name: "MODELGATE_URL before MODELGATE_ADDR", envURL: "http://" + deadAddr, addr: "127.0.0.1:" + port, err: "connection refused"},
		{name: "--url before the rest", flag: "http://" + deadAddr, envURL: env.Node.URL, addr: "127.0.0.1:" + port, err: "connection refused"},
		{name: "MODELGATE_ADDR without a port", addr: "127.0.0.1", err: `MODELGATE_ADDR "127.0.0.1" is not a listen address like 127.0.0.1:8080; pass --url`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MODELGATE_URL", tc.envURL)
			t.Setenv("MODELGATE_ADDR", tc.addr)
			args := []string{"accounts", "get", env.Account.ID, "--token", nodetest.AdminToken}
			if tc.flag != "" {
				args = append(args, "--url", tc.flag)
			}
			var out bytes.Buffer
			err := adminCmd(args, &out)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("admin %v: %v", args, err)
			}
			var a persistence.Account
			adminJSON(t, out.Bytes(), &a)
			if a != env.Account {
				t.Fatalf("got %+v", a)
			}
		})
	}
}

// TestItem12AdminFlagsAnywhere: issue #12 item 12, flags are read before, between and after
// the words; after "--" everything is a word.
func TestItem12AdminFlagsAnywhere(t *testing.T) {
	env := adminTestEnv(t)
	t.Setenv("MODELGATE_URL", env.Node.URL)
	t.Setenv("MODELGATE_ADMIN_TOKEN", nodetest.AdminToken)
	id := env.Account.ID
	for i, args := range [][]string{
		{"accounts", "credits", id, "--amount", "1", "--key", "k0"},
		{"accounts", "credits", "--amount", "1", id, "--key", "k1"},
		{"--amount", "1", "--key", "k2", "accounts", "credits", id},
		{"accounts", "--amount=1", "credits", "--key", "k3", id},
		{"--url", env.Node.URL, "accounts", "credits", "--amount", "1", "--key", "k4", "--", id},
	} {
		var out bytes.Buffer
		if err := adminCmd(args, &out); err != nil {
			t.Fatalf("admin %v: %v", args, err)
		}
		var credit struct {
			Balance string `json:"balance_usd"`
			Added   bool   `json:"added"`
		}
		adminJSON(t, out.Bytes(), &credit)
		if want := []string{"1", "2", "3", "4", "5"}[i]; !credit.Added || credit.Balance != want {
			t.Fatalf("admin %v: %+v, want balance %s", args, credit, want)
		}
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"accounts", "get", id, "extra"}, `accounts get takes one id, not "` + id + ` extra"`},
		{[]string{"accounts", "list", "ops@example.com"}, `accounts list takes no argument "ops@example.com" (flags: modelgate admin help)`},
		{[]string{"keys", "revoke", "--"}, "keys revoke needs a key id"},
		{[]string{"accounts", "get", "--", "--amount"}, "GET /admin/v1/accounts/--amount: 404 Not Found: {"},
	} {
		var out bytes.Buffer
		if err := adminCmd(tc.args, &out); err == nil || !strings.HasPrefix(err.Error(), tc.err) || out.Len() != 0 {
			t.Fatalf("admin %v: err %v, output %q; want %q", tc.args, err, out.String(), tc.err)
		}
	}
}

// TestItem13AdminCmdListsAccounts: issue #12 item 13, "admin accounts list" prints a page of
// accounts (--limit, --cursor) or finds one by --email, ignoring case; a taken e-mail is
// refused with the API's 409.
func TestItem13AdminCmdListsAccounts(t *testing.T) {
	env := adminTestEnv(t)
	all := []persistence.Account{env.Account}
	for _, e := range []string{"one@example.com", "Two@Example.com"} {
		var a persistence.Account
		adminJSON(t, runAdmin(t, env, "accounts", "create", "--email", e), &a)
		all = append(all, a)
	}
	type page struct {
		Object     string                `json:"object"`
		Data       []persistence.Account `json:"data"`
		HasMore    bool                  `json:"has_more"`
		NextCursor string                `json:"next_cursor"`
	}
	var p page
	adminJSON(t, runAdmin(t, env, "accounts", "list"), &p)
	if p.Object != "list" || !slices.Equal(p.Data, all) || p.HasMore || p.NextCursor != "" {
		t.Fatalf("list = %+v", p)
	}
	var got []persistence.Account
	for cursor := ""; ; {
		args := []string{"accounts", "list", "--limit", "2"}
		if cursor != "" {
			args = append(args, "--cursor", cursor)
		}
		p = page{}
		adminJSON(t, runAdmin(t, env, args...), &p)
		if len(p.Data) > 2 {
			t.Fatalf("page of %d with --limit 2", len(p.Data))
		}
		got = append(got, p.Data...)
		if !p.HasMore {
			break
		}
		cursor = p.NextCursor
	}
	if !slices.Equal(got, all) {
		t.Fatalf("pages hold %+v, want %+v", got, all)
	}
	for _, e := range []string{"two@example.com", "TWO@EXAMPLE.COM"} {
		p = page{}
		adminJSON(t, runAdmin(t, env, "accounts", "list", "--email", e), &p)
		if !slices.Equal(p.Data, all[2:]) {
			t.Fatalf("--email %s: %+v", e, p.Data)
		}
	}
	var out bytes.Buffer
	err := adminCmd([]string{"accounts", "create", "--email", "ONE@example.com", "--url", env.Node.URL, "--token", nodetest.AdminToken}, &out)
	if want := "POST /admin/v1/accounts: 409 Conflict: {"; err == nil || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), `"code": "email_taken"`) || !strings.Contains(err.Error(), all[1].ID) {
		t.Fatalf("duplicate e-mail: %v", err)
	}
}
