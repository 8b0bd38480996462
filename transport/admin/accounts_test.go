package admin_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

type accountListOut struct {
	Object     string                `json:"object"`
	Data       []persistence.Account `json:"data"`
	HasMore    bool                  `json:"has_more"`
	NextCursor *string               `json:"next_cursor"`
}

// listAccounts gets one page of GET /admin/v1/accounts with the query.
func listAccounts(t *testing.T, env *nodetest.Env, query string) accountListOut {
	t.Helper()
	status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts"+query, "")
	if status != 200 {
		t.Fatalf("GET /admin/v1/accounts%s: %d %s", query, status, raw)
	}
	var out accountListOut
	Decode(t, raw, &out)
	if out.Object != "list" || out.Data == nil || out.HasMore != (out.NextCursor != nil) {
		t.Fatalf("GET /admin/v1/accounts%s = %s", query, raw)
	}
	return out
}

// TestAdminListsAccounts: GET /admin/v1/accounts lists the accounts oldest first, a page at a
// time (has_more, next_cursor), or finds one by e-mail ignoring case; what it cannot read is a
// 400 naming the parameter.
func TestAdminListsAccounts(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	all := []string{env.Account.ID}
	for _, email := range []string{"b@example.com", "C@Example.com", "d@example.com"} {
		status, raw := admin(t, env, http.MethodPost, "/admin/v1/accounts", `{"email":"`+email+`"}`)
		var a persistence.Account
		Decode(t, raw, &a)
		if status != 201 {
			t.Fatalf("create %s: %d %s", email, status, raw)
		}
		all = append(all, a.ID)
	}
	pages := func(query string) [][]string {
		var out [][]string
		cursor := ""
		for {
			q := query
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p := listAccounts(t, env, q)
			out = append(out, ids(p.Data))
			if !p.HasMore {
				return out
			}
			cursor = *p.NextCursor
		}
	}
	for _, tc := range []struct {
		name, query string
		want        [][]string
	}{
		{"default page", "?", [][]string{all}},
		{"pages of three", "?limit=3", [][]string{all[:3], all[3:]}},
		{"pages of one", "?limit=1", [][]string{all[:1], all[1:2], all[2:3], all[3:]}},
		{"by e-mail", "?email=b@example.com", [][]string{all[1:2]}},
		{"by e-mail in another case", "?email=c%40EXAMPLE.COM", [][]string{all[2:3]}},
		{"by the test account's e-mail", "?email=" + env.Account.Email + "&limit=1", [][]string{all[:1]}},
		{"by an unknown e-mail", "?email=nobody@example.com", [][]string{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := pages(tc.query); !slices.EqualFunc(got, tc.want, slices.Equal) {
				t.Fatalf("pages %v, want %v", got, tc.want)
			}
		})
	}
	// A page holds the whole accounts, as GET /admin/v1/accounts/{id} gives them.
	if p := listAccounts(t, env, "?limit=1"); len(p.Data) != 1 || p.Data[0] != env.Account {
		t.Fatalf("first page %+v, want %+v", p.Data, env.Account)
	}

	for _, tc := range []struct {
		name, query, code, param, mentioning string
	}{
		{"limit 0", "?limit=0", "invalid_limit", "limit", "from 1 to 1000"},
		{"limit too big", "?limit=1001", "invalid_limit", "limit", "from 1 to 1000"},
		{"limit not a number", "?limit=ten", "invalid_limit", "limit", `"ten"`},
		{"cursor not given out", "?cursor=bm9wZQ", "invalid_cursor", "cursor", "start again without it"},
		{"misspelt email", "?emial=b@example.com", "unknown_parameter", "emial", "takes email, cursor and limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodGet, "/admin/v1/accounts"+tc.query, "")
			wantError(t, status, raw, 400, "invalid_request_error", tc.code, tc.param, tc.mentioning)
		})
	}
}

// TestAdminRefusesATakenEmail: creating an account with an e-mail another account has, in any
// case, is a 409 in the admin error envelope naming that account, and creates nothing.
func TestAdminRefusesATakenEmail(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	for _, email := range []string{env.Account.Email, "TEST@example.com", "Test@Example.Com"} {
		t.Run(email, func(t *testing.T) {
			status, raw := admin(t, env, http.MethodPost, "/admin/v1/accounts", `{"email":"`+email+`","plan":"pro"}`)
			wantError(t, status, raw, 409, "invalid_request_error", "email_taken", "email",
				"the e-mail "+email+" is taken: account "+env.Account.ID+" has it (e-mails are compared ignoring case)")
		})
	}
	if n := accountCount(t, env); n != 1 {
		t.Fatalf("accounts = %d after refused creations", n)
	}
}

func ids(accts []persistence.Account) []string {
	out := []string{}
	for _, a := range accts {
		out = append(out, a.ID)
	}
	return out
}

// The operator sets an account's password: it can log in with it (the e-mail counts as
// verified); a refused password, an unknown account or a bad body changes nothing.
func TestAdminSetsAnAccountsPassword(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	path := "/admin/v1/accounts/" + env.Account.ID + "/password"
	login := func(password string) int {
		r := env.Do(http.MethodPost, "/auth/login", "", `{"email":"test@example.com","password":"`+password+`"}`)
		nodetest.Read(t, r)
		return r.StatusCode
	}
	for _, tc := range []struct {
		name, path, body string
		status           int
		code, param      string
	}{
		{"too short", path, `{"password":"short"}`, 400, "invalid_request", "password"},
		{"the e-mail", path, `{"password":"TEST@example.com"}`, 400, "invalid_request", "password"},
		{"not JSON", path, `{"password":`, 400, "invalid_json", ""},
		{"unknown account", "/admin/v1/accounts/acct_nosuch/password", `{"password":"a long password"}`, 404, "account_not_found", ""},
	} {
		status, raw := admin(t, env, http.MethodPut, tc.path, tc.body)
		var e struct {
			Error struct{ Code, Param string }
		}
		Decode(t, raw, &e)
		if status != tc.status || e.Error.Code != tc.code || e.Error.Param != tc.param {
			t.Errorf("%s: %d %s; want %d %s naming %q", tc.name, status, raw, tc.status, tc.code, tc.param)
		}
	}
	if got := login("a long password"); got != 401 {
		t.Fatalf("login before the password is set: %d, want 401", got)
	}
	status, raw := admin(t, env, http.MethodPut, path, `{"password":"a long password"}`)
	var acct persistence.Account
	if Decode(t, raw, &acct); status != 200 || acct.ID != env.Account.ID {
		t.Fatalf("set password: %d %s", status, raw)
	}
	if got := login("a long password"); got != 200 {
		t.Fatalf("login with the password the operator set: %d, want 200", got)
	}
}
