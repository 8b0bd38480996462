package node_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/mail/mailtest"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// A whole node mailing through a real SMTP server: sign up, verify, log in; then the
// operator disables the account — its key is refused at once in each client's format, its
// session has ended, it cannot log in — and enables it again: the key and logins work.
func TestDisablingAnAccountStopsItsKeysAndSessionsAtOnce(t *testing.T) {
	smtp := mailtest.Start(t)
	cat := nodetest.DefaultCatalog + "auth:\n  signup_plan: demo\n  mail: {host: 127.0.0.1, port: " + strconv.Itoa(smtp.Port) + ", security: none, from: \"gw <noreply@example.com>\"}\n"
	env := nodetest.Start(t, cat, nodetest.Options{})
	send := func(method, path, body, cookie, csrf string) (int, string, *http.Response) {
		t.Helper()
		req, _ := http.NewRequest(method, env.Node.URL+path, strings.NewReader(body))
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "mg_session", Value: cookie})
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(raw), resp
	}
	creds := `{"email":"eve@example.com","password":"eve's long password"}`
	if status, body, _ := send("POST", "/auth/signup", creds, "", ""); status != 202 {
		t.Fatalf("signup: %d %s", status, body)
	}
	link := smtp.Next(t).Link(t)
	if !strings.HasPrefix(link, env.Node.URL+"/auth/verify?token=") {
		t.Fatalf("the link %q does not point at the node", link)
	}
	if status, _, resp := send("GET", strings.TrimPrefix(link, env.Node.URL), "", "", ""); status != 303 || resp.Header.Get("Location") != "/dashboard/login?verified=1" {
		t.Fatalf("verify: %d %v", status, resp.Header)
	}
	login := func() (string, string) {
		t.Helper()
		status, body, resp := send("POST", "/auth/login", creds, "", "")
		if status != 200 {
			t.Fatalf("login: %d %s", status, body)
		}
		var out struct {
			Account struct{ ID, Plan string }
			CSRF    string `json:"csrf_token"`
		}
		json.Unmarshal([]byte(body), &out)
		if out.Account.Plan != "demo" {
			t.Fatalf("signed-up plan %q, want demo (auth.signup_plan)", out.Account.Plan)
		}
		return resp.Cookies()[0].Value, out.CSRF
	}
	session, _ := login()
	acct, err := env.Node.Store.AccountByEmail("eve@example.com")
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := env.Node.Store.CreateKey(acct.ID, persistence.KeySpec{Name: "eve"})
	if err != nil {
		t.Fatal(err)
	}
	if r := env.Post("/v1/chat/completions", key, chat("chat", "hi")); r.StatusCode != 200 {
		t.Fatalf("a call before the disable: %d %s", r.StatusCode, nodetest.Read(t, r))
	}

	r := env.Admin("POST", "/admin/v1/accounts/"+acct.ID+"/disable", "")
	if body := string(nodetest.Read(t, r)); r.StatusCode != 200 || !strings.Contains(body, `"disabled":true`) {
		t.Fatalf("disable: %d %s", r.StatusCode, body)
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", chat("chat", "hi"), `"code":"account_disabled"`},
		{"/v1/messages", `{"model":"msg","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, `"type":"permission_error"`},
	} {
		r := env.Post(tc.path, key, tc.body)
		if body := string(nodetest.Read(t, r)); r.StatusCode != 403 || !strings.Contains(body, tc.want) || !strings.Contains(body, "disabled") {
			t.Errorf("%s while disabled: %d %s", tc.path, r.StatusCode, body)
		}
	}
	if status, body, _ := send("GET", "/auth/session", "", session, ""); status != 401 {
		t.Errorf("the session while disabled: %d %s", status, body)
	}
	if status, body, _ := send("POST", "/auth/login", creds, "", ""); status != 403 || !strings.Contains(body, `"code":"account_disabled"`) {
		t.Errorf("login while disabled: %d %s", status, body)
	}
	r = env.Admin("GET", "/admin/v1/accounts?email=eve@example.com", "")
	if body := string(nodetest.Read(t, r)); !strings.Contains(body, `"disabled":true`) {
		t.Errorf("accounts list does not show the state: %s", body)
	}

	if r := env.Admin("POST", "/admin/v1/accounts/"+acct.ID+"/enable", ""); r.StatusCode != 200 || !strings.Contains(string(nodetest.Read(t, r)), `"disabled":false`) {
		t.Fatalf("enable: %d", r.StatusCode)
	}
	if r := env.Post("/v1/chat/completions", key, chat("chat", "hi")); r.StatusCode != 200 {
		t.Fatalf("a call after the enable: %d %s", r.StatusCode, nodetest.Read(t, r))
	}
	session, csrf := login()
	if status, body, _ := send("POST", "/auth/logout", "", session, csrf); status != 204 {
		t.Fatalf("logout after the enable: %d %s", status, body)
	}
}
