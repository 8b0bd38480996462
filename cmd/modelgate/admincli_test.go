package main

import (
	"bytes"
	"cmp"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// deadAddr is an address nothing listens on: a command sent there fails.
const deadAddr = "127.0.0.1:1"

// TestAdminFindsTheAdminListener: the admin commands call the gateway's admin listener at
// --admin-url (or --url), else MODELGATE_ADMIN_URL, else MODELGATE_URL, else the admin
// address MODELGATE_ADMIN_ADDR that serve reads (a wildcard host reached over loopback; off
// refused), else serve's default 127.0.0.1:9465. MODELGATE_ADDR is not read, and a URL that
// turns out to be a public port says so.
func TestAdminFindsTheAdminListener(t *testing.T) {
	env := adminTestEnv(t)
	admin, public := env.Node.AdminURL, env.Node.URL
	parsed, _ := url.Parse(admin)
	port := parsed.Port()
	cases := []struct {
		name                                             string
		flag, envAdminURL, envAdminAddr, envURL, envAddr string
		flagName                                         string // the flag's name ("" is --admin-url)
		want                                             string // the URL chosen; the node's admin URL is called too
		err                                              string // adminURL's error, exactly
		runErr                                           string // the command's error, exactly, when the URL is chosen but wrong
	}{
		{name: "--admin-url first", flag: admin, envAdminURL: "http://" + deadAddr, envAdminAddr: deadAddr, envURL: public, envAddr: deadAddr, want: admin},
		{name: "--admin-url without its trailing slash", flag: admin + "/", want: admin},
		{name: "--url, its older name", flag: admin, flagName: "--url", envAdminURL: "http://" + deadAddr, want: admin},
		{name: "MODELGATE_ADMIN_URL second", envAdminURL: admin + "/", envAdminAddr: deadAddr, envURL: public, want: admin},
		{name: "MODELGATE_URL third", envURL: admin, envAdminAddr: deadAddr, envAddr: deadAddr, want: admin},
		{name: "MODELGATE_ADMIN_ADDR fourth", envAdminAddr: "127.0.0.1:" + port, envAddr: deadAddr, want: admin},
		{name: "MODELGATE_ADMIN_ADDR on every interface", envAdminAddr: "0.0.0.0:" + port, want: admin},
		{name: "MODELGATE_ADMIN_ADDR with no host", envAdminAddr: ":" + port, want: admin},
		{name: "MODELGATE_ADMIN_ADDR on every IPv6 interface", envAdminAddr: "[::]:9999", want: "http://[::1]:9999"},
		{name: "MODELGATE_ADMIN_ADDR off", envAdminAddr: "off",
			err: "MODELGATE_ADMIN_ADDR is off: the gateway serves no admin API; pass --admin-url if another one does"},
		{name: "MODELGATE_ADMIN_ADDR without a port", envAdminAddr: "127.0.0.1",
			err: `MODELGATE_ADMIN_ADDR "127.0.0.1" is not a listen address like 127.0.0.1:9465; pass --admin-url`},
		{name: "MODELGATE_URL naming the public port says so", envURL: public, envAddr: deadAddr, want: public,
			runErr: public + " is the gateway's public port, which serves no admin API: give its admin listener's URL (server.admin_addr) instead"},
		{name: "MODELGATE_ADDR is not the admin address", envAddr: strings.TrimPrefix(public, "http://"), want: "http://127.0.0.1:9465"},
		{name: "nothing set: serve's default", want: "http://127.0.0.1:9465"},
		{name: "a public port given as the admin URL", flag: public, want: public,
			runErr: public + " is the gateway's public port, which serves no admin API: give its admin listener's URL (server.admin_addr) instead"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MODELGATE_ADMIN_URL", tc.envAdminURL)
			t.Setenv("MODELGATE_ADMIN_ADDR", tc.envAdminAddr)
			t.Setenv("MODELGATE_URL", tc.envURL)
			t.Setenv("MODELGATE_ADDR", tc.envAddr)
			got, err := adminURL(tc.flag)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("%q, %v; want the error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
			if got != admin && tc.runErr == "" {
				return // not this test's node: where it points is what is checked
			}
			args := []string{"accounts", "get", env.Account.ID, "--token", nodetest.AdminToken}
			if tc.flag != "" {
				args = append(args, cmp.Or(tc.flagName, "--admin-url"), tc.flag)
			}
			var out bytes.Buffer
			err = adminCmd(args, &out)
			if tc.runErr != "" {
				if err == nil || err.Error() != tc.runErr {
					t.Fatalf("err = %v, want %q", err, tc.runErr)
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

// TestAdminFlagsAnywhere: flags are read before, between and after the words; after
// "--" everything is a word.
func TestAdminFlagsAnywhere(t *testing.T) {
	env := adminTestEnv(t)
	t.Setenv("MODELGATE_ADMIN_URL", env.Node.AdminURL)
	t.Setenv("MODELGATE_ADMIN_TOKEN", nodetest.AdminToken)
	id := env.Account.ID
	for i, args := range [][]string{
		{"accounts", "credits", id, "--amount", "1", "--key", "k0"},
		{"accounts", "credits", "--amount", "1", id, "--key", "k1"},
		{"--amount", "1", "--key", "k2", "accounts", "credits", id},
		{"accounts", "--amount=1", "credits", "--key", "k3", id},
		{"--admin-url", env.Node.AdminURL, "accounts", "credits", "--amount", "1", "--key", "k4", "--", id},
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

// TestAdminCmdListsAccounts: "admin accounts list" prints a page of accounts
// (--limit, --cursor) or finds one by --email, ignoring case; a taken e-mail is
// refused with the API's 409.
func TestAdminCmdListsAccounts(t *testing.T) {
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
	err := adminCmd([]string{"accounts", "create", "--email", "ONE@example.com", "--admin-url", env.Node.AdminURL, "--token", nodetest.AdminToken}, &out)
	if want := "POST /admin/v1/accounts: 409 Conflict: {"; err == nil || !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), `"code": "email_taken"`) || !strings.Contains(err.Error(), all[1].ID) {
		t.Fatalf("duplicate e-mail: %v", err)
	}
}
