package auth

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
)

// Sign-up → the verification mail through a real SMTP server → its link followed over HTTP
// → login with a session cookie → GET /auth/session → logout.
func TestSignupMailLinkLoginSessionLogout(t *testing.T) {
	e := newEnv(t, Limits{})
	a := e.call("POST", "/auth/signup", `{"email":"ada@example.com","password":"correct horse battery"}`, "", "")
	if a.status != 202 || a.body != `{"status":"verification_sent"}`+"\n" {
		t.Fatalf("signup: %d %q", a.status, a.body)
	}
	m := e.smtp.Next(t)
	if len(m.To) != 1 || m.To[0] != "ada@example.com" || m.Subject != "Verify your e-mail address for modelgate" {
		t.Fatalf("mail to %v: %q", m.To, m.Subject)
	}
	link := m.Link(t)
	if !strings.HasPrefix(link, e.url+"/auth/verify?token=") || len(token(t, link)) != 43 {
		t.Fatalf("link %q", link)
	}
	if a := e.call("POST", "/auth/login", `{"email":"ada@example.com","password":"correct horse battery"}`, "", ""); a.status != 403 ||
		!strings.Contains(a.body, `"code":"email_not_verified"`) {
		t.Fatalf("login before verifying: %d %s", a.status, a.body)
	}
	a = e.call("GET", strings.TrimPrefix(link, e.url), "", "", "")
	if a.status != 303 || a.header.Get("Location") != "/dashboard/login?verified=1" {
		t.Fatalf("following the link: %d %v", a.status, a.header.Get("Location"))
	}
	if a := e.call("GET", strings.TrimPrefix(link, e.url), "", "", ""); a.header.Get("Location") != "/dashboard/login?verify_error=used" {
		t.Fatalf("following it again: %d %v", a.status, a.header.Get("Location"))
	}

	a = e.call("POST", "/auth/login", `{"email":"ADA@example.com","password":"correct horse battery"}`, "", "")
	if a.status != 200 {
		t.Fatalf("login: %d %s", a.status, a.body)
	}
	ck := a.cookie(t)
	if !ck.HttpOnly || ck.SameSite != 2 /* Lax */ || ck.Path != "/" || ck.Secure || len(ck.Value) != 43 {
		t.Fatalf("cookie %+v (raw %q)", ck, a.header.Get("Set-Cookie"))
	}
	if !strings.Contains(a.header.Get("Set-Cookie"), "SameSite=Lax") {
		t.Fatalf("Set-Cookie %q", a.header.Get("Set-Cookie"))
	}
	acct := must(e.store.AccountByEmail("ada@example.com"))(t)
	csrf := persistence.CSRFToken(ck.Value)
	want := `{"account":{"id":"` + acct.ID + `","email":"ada@example.com","plan":"free"},"csrf_token":"` + csrf + `"}` + "\n"
	if a.body != want {
		t.Fatalf("login answer %s, want %s", a.body, want)
	}
	if a := e.call("GET", "/auth/session", "", ck.Value, ""); a.status != 200 || a.body != want {
		t.Fatalf("session: %d %s", a.status, a.body)
	}
	if a := e.call("POST", "/auth/logout", "", ck.Value, csrf); a.status != 204 || !strings.Contains(a.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("logout: %d %s %q", a.status, a.body, a.header.Get("Set-Cookie"))
	}
	if a := e.call("GET", "/auth/session", "", ck.Value, ""); a.status != 401 || !strings.Contains(a.body, `"code":"not_authenticated"`) {
		t.Fatalf("session after logout: %d %s", a.status, a.body)
	}
}

// A reset through the mailed link ends every session, and the old password stops working.
func TestResetThroughMailEndsSessionsAndTheOldPassword(t *testing.T) {
	e := newEnv(t, Limits{})
	e.signupVerified("bo@example.com", "bo's old password")
	s1, _ := e.login("bo@example.com", "bo's old password")
	s2, _ := e.login("bo@example.com", "bo's old password")
	if a := e.call("POST", "/auth/password/forgot", `{"email":"bo@example.com"}`, "", ""); a.status != 202 || a.body != `{"status":"reset_sent"}`+"\n" {
		t.Fatalf("forgot: %d %s", a.status, a.body)
	}
	m := e.smtp.Next(t)
	link := m.Link(t)
	if m.Subject != "Reset your modelgate password" || !strings.HasPrefix(link, e.url+"/dashboard/reset?token=") {
		t.Fatalf("reset mail %q with %q", m.Subject, link)
	}
	a := e.call("POST", "/auth/password/reset", `{"token":"`+token(t, link)+`","password":"bo's new password"}`, "", "")
	if a.status != 204 {
		t.Fatalf("reset: %d %s", a.status, a.body)
	}
	e.changedNotice("bo@example.com")
	for i, s := range []string{s1, s2} {
		if a := e.call("GET", "/auth/session", "", s, ""); a.status != 401 {
			t.Errorf("session %d after the reset: %d %s", i+1, a.status, a.body)
		}
	}
	if a := e.call("POST", "/auth/login", `{"email":"bo@example.com","password":"bo's old password"}`, "", ""); a.status != 401 {
		t.Fatalf("old password: %d %s", a.status, a.body)
	}
	e.login("bo@example.com", "bo's new password")
}

// A change of password ends the account's other sessions, not the one that asked.
func TestChangePasswordEndsOtherSessionsOnly(t *testing.T) {
	e := newEnv(t, Limits{})
	e.signupVerified("cy@example.com", "cy's first password")
	mine, csrf := e.login("cy@example.com", "cy's first password")
	other, _ := e.login("cy@example.com", "cy's first password")
	a := e.call("POST", "/auth/password/change", `{"current_password":"wrong password!","new_password":"cy's second password"}`, mine, csrf)
	if a.status != 400 || !strings.Contains(a.body, `"code":"invalid_current_password"`) || !strings.Contains(a.body, `"param":"current_password"`) {
		t.Fatalf("wrong current password: %d %s", a.status, a.body)
	}
	a = e.call("POST", "/auth/password/change", `{"current_password":"cy's first password","new_password":"cy's second password"}`, mine, csrf)
	if a.status != 204 {
		t.Fatalf("change: %d %s", a.status, a.body)
	}
	e.changedNotice("cy@example.com")
	if a := e.call("GET", "/auth/session", "", mine, ""); a.status != 200 {
		t.Errorf("the session that changed it: %d %s", a.status, a.body)
	}
	if a := e.call("GET", "/auth/session", "", other, ""); a.status != 401 {
		t.Errorf("the other session: %d %s", a.status, a.body)
	}
	if a := e.call("POST", "/auth/login", `{"email":"cy@example.com","password":"cy's first password"}`, "", ""); a.status != 401 {
		t.Errorf("the old password: %d", a.status)
	}
	e.login("cy@example.com", "cy's second password")
}

// changedNotice checks the next mail tells to the account's owner that its password changed
// (ASVS V2.2.3, V2.5.5), with a link that starts a reset.
func (e *env) changedNotice(to string) {
	e.t.Helper()
	m := e.smtp.Next(e.t)
	if m.Subject != "Your modelgate password was changed" || len(m.To) != 1 || m.To[0] != to || m.Link(e.t) != e.url+"/dashboard/forgot" {
		e.t.Fatalf("after a password change: mail %q to %v with %q", m.Subject, m.To, m.Link(e.t))
	}
}

func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
