package auth

import (
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
)

// Every refusal of bad input: the status, the code and the field named, and the rule said.
func TestBadInputIsRefusedNamingTheField(t *testing.T) {
	e := newEnv(t, Limits{})
	e.signupVerified("ada@example.com", "ada's good password")
	session, csrf := e.login("ada@example.com", "ada's good password")

	// Tokens in each state: used (the verify link above), expired, fresh.
	e.call("POST", "/auth/signup", `{"email":"late@example.com","password":"a fine password"}`, "", "")
	lateVerify := token(t, e.smtp.Next(t).Link(t))
	e.call("POST", "/auth/password/forgot", `{"email":"ada@example.com"}`, "", "")
	usedReset := token(t, e.smtp.Next(t).Link(t))
	if a := e.call("POST", "/auth/password/reset", `{"token":"`+usedReset+`","password":"ada's next password"}`, "", ""); a.status != 204 {
		t.Fatalf("reset: %d %s", a.status, a.body)
	}
	if m := e.smtp.Next(t); m.Subject != "Your modelgate password was changed" {
		t.Fatalf("after a reset the mail %q, want the notice that the password changed", m.Subject)
	}
	session, csrf = e.login("ada@example.com", "ada's next password")
	e.call("POST", "/auth/password/forgot", `{"email":"ada@example.com"}`, "", "")
	lateReset := token(t, e.smtp.Next(t).Link(t))
	e.call("POST", "/auth/signup", `{"email":"used@example.com","password":"a fine password"}`, "", "")
	usedVerify := token(t, e.smtp.Next(t).Link(t))
	if a := e.call("POST", "/auth/verify", `{"token":"`+usedVerify+`"}`, "", ""); a.status != 200 || a.body != `{"status":"verified"}`+"\n" {
		t.Fatalf("verify: %d %s", a.status, a.body)
	}
	e.clock.Add(25 * time.Hour) // past both lifetimes (24 h, 1 h), judged by the proposer's clock
	session, csrf = e.login("ada@example.com", "ada's next password")

	long := strings.Repeat("x", 129)
	for _, tc := range []struct {
		name, method, path, body string
		session, csrf            string
		status                   int
		code, param, says        string
	}{
		{"short password", "POST", "/auth/signup", `{"email":"n@example.com","password":"short"}`, "", "", 400, "invalid_password", "password", "password must be 12 to 128 characters (it is 5)"},
		{"over-long password", "POST", "/auth/signup", `{"email":"n@example.com","password":"` + long + `"}`, "", "", 400, "invalid_password", "password", "password must be 12 to 128 characters (it is 129)"},
		{"whitespace password", "POST", "/auth/signup", `{"email":"n@example.com","password":"            "}`, "", "", 400, "invalid_password", "password", "password must not be only whitespace"},
		{"password is the e-mail", "POST", "/auth/signup", `{"email":"nobody@example.com","password":"NOBODY@example.com"}`, "", "", 400, "invalid_password", "password", "password must not be the e-mail address"},
		{"e-mail without @", "POST", "/auth/signup", `{"email":"nobody.example.com","password":"a fine password"}`, "", "", 400, "invalid_email", "email", `email \"nobody.example.com\" must contain one '@' with text on both sides`},
		{"e-mail with a space", "POST", "/auth/signup", `{"email":"no body@example.com","password":"a fine password"}`, "", "", 400, "invalid_email", "email", "contains whitespace"},
		{"empty e-mail", "POST", "/auth/password/forgot", `{"email":""}`, "", "", 400, "invalid_email", "email", "email is required"},
		{"malformed login e-mail", "POST", "/auth/login", `{"email":"@","password":"a fine password"}`, "", "", 400, "invalid_email", "email", "must contain one '@'"},
		{"unknown field", "POST", "/auth/signup", `{"email":"n@example.com","password":"a fine password","plan":"pro"}`, "", "", 400, "invalid_json", "", `unknown field \"plan\"`},
		{"replayed verify link", "POST", "/auth/verify", `{"token":"` + usedVerify + `"}`, "", "", 400, "token_used", "token", "has been used already"},
		{"expired verify link", "POST", "/auth/verify", `{"token":"` + lateVerify + `"}`, "", "", 400, "token_expired", "token", "the link has expired"},
		{"forged verify link", "POST", "/auth/verify", `{"token":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, "", "", 400, "token_invalid", "token", "the link is not valid"},
		{"reset link as verify link", "POST", "/auth/verify", `{"token":"` + lateReset + `"}`, "", "", 400, "token_invalid", "token", "the link is not valid"},
		{"replayed reset link", "POST", "/auth/password/reset", `{"token":"` + usedReset + `","password":"yet another one"}`, "", "", 400, "token_used", "token", "has been used already"},
		{"expired reset link", "POST", "/auth/password/reset", `{"token":"` + lateReset + `","password":"yet another one"}`, "", "", 400, "token_expired", "token", "the link has expired"},
		{"empty reset token", "POST", "/auth/password/reset", `{"token":"","password":"yet another one"}`, "", "", 400, "token_invalid", "token", "the link is not valid"},
		{"weak new password on reset", "POST", "/auth/password/reset", `{"token":"` + lateReset + `","password":"short"}`, "", "", 400, "invalid_password", "password", "password must be 12 to 128 characters"},
		{"weak new password on change", "POST", "/auth/password/change", `{"current_password":"ada's next password","new_password":"ada@example.com"}`, "S", "C", 400, "invalid_new_password", "new_password", "new_password must not be the e-mail address"},
		{"CSRF token missing", "POST", "/auth/password/change", `{"current_password":"ada's next password","new_password":"a fine password"}`, "S", "", 403, "csrf_token_invalid", "", "X-CSRF-Token"},
		{"CSRF token wrong", "POST", "/auth/logout", ``, "S", "0123", 403, "csrf_token_invalid", "", "X-CSRF-Token"},
		{"no session", "POST", "/auth/logout", ``, "", "", 401, "not_authenticated", "", "not logged in"},
		{"forged session", "GET", "/auth/session", ``, "forged-session-id", "", 401, "not_authenticated", "", "the session has ended"},
		{"wrong password", "POST", "/auth/login", `{"email":"ada@example.com","password":"not her password"}`, "", "", 401, "invalid_credentials", "", "the e-mail or the password is wrong"},
		{"unverified login", "POST", "/auth/login", `{"email":"late@example.com","password":"a fine password"}`, "", "", 403, "email_not_verified", "email", "not verified yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := tc.session, tc.csrf
			if s == "S" {
				s = session
			}
			if c == "C" {
				c = csrf
			}
			a := e.call(tc.method, tc.path, tc.body, s, c)
			if a.status != tc.status || !strings.Contains(a.body, `"code":"`+tc.code+`"`) || !strings.Contains(a.body, `"param":`+quoteOrNull(tc.param)) ||
				!strings.Contains(a.body, tc.says) {
				t.Fatalf("%d %s\nwant %d %s on %q saying %q", a.status, a.body, tc.status, tc.code, tc.param, tc.says)
			}
		})
	}
	// Nothing was half-written: no account for any refused sign-up, the session still works.
	for _, email := range []string{"n@example.com", "nobody@example.com"} {
		if _, err := e.store.AccountByEmail(email); err == nil {
			t.Errorf("a refused sign-up made an account for %s", email)
		}
	}
	if a := e.call("GET", "/auth/session", "", session, ""); a.status != 200 {
		t.Errorf("the session after the refusals: %d %s", a.status, a.body)
	}
	if l := must(e.store.GetLogin(must(e.store.AccountByEmail("ada@example.com"))(t).ID))(t); !persistence.VerifyPassword(l.PasswordHash, "ada's next password") {
		t.Error("a refused change changed the password")
	}
}

func quoteOrNull(s string) string {
	if s == "" {
		return "null"
	}
	return `"` + s + `"`
}

// Sign-up and forgotten-password answers say nothing of whether the e-mail is registered:
// the same status, headers and bytes. Who gets which mail is what differs.
func TestSignupAndForgotAnswerAlikeForKnownAndUnknownEmails(t *testing.T) {
	e := newEnv(t, Limits{})
	e.signupVerified("ada@example.com", "ada's good password")
	for _, ep := range []struct{ path, known, unknown string }{
		{"/auth/signup", `{"email":"ada@example.com","password":"some new password"}`, `{"email":"new@example.com","password":"some new password"}`},
		{"/auth/password/forgot", `{"email":"ada@example.com"}`, `{"email":"nobody@example.com"}`},
	} {
		k := e.call("POST", ep.path, ep.known, "", "")
		u := e.call("POST", ep.path, ep.unknown, "", "")
		if k.status != u.status || k.body != u.body || k.header.Get("Content-Type") != u.header.Get("Content-Type") ||
			k.header.Get("Content-Length") != u.header.Get("Content-Length") || k.status != 202 {
			t.Errorf("%s: known %d %q, unknown %d %q", ep.path, k.status, k.body, u.status, u.body)
		}
	}
	got := map[string]string{}
	for range 3 { // the notice to ada, the link to new, the reset to ada; none to nobody
		m := e.smtp.Next(t)
		got[m.To[0]+" "+m.Subject] = m.Link(t)
	}
	e.smtp.None(t, 300*time.Millisecond)
	if got["ada@example.com Someone tried to sign up to modelgate with your address"] != e.url+"/dashboard/login" ||
		!strings.HasPrefix(got["new@example.com Verify your e-mail address for modelgate"], e.url+"/auth/verify?token=") ||
		!strings.HasPrefix(got["ada@example.com Reset your modelgate password"], e.url+"/dashboard/reset?token=") {
		t.Fatalf("mails: %v", got)
	}
}
