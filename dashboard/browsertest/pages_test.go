package browsertest

import (
	"encoding/json"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/dashboard"
)

// Each form shows the API's refusal where its param points: at the named field (with
// aria-invalid and the message tied to it), or above the form when the param names no field.
func TestFormsShowTheAPIsErrorAtTheFieldItsParamNames(t *testing.T) {
	b := Start(t)
	cases := []struct {
		name      string
		page      string
		fill      map[string]string
		submit    string
		route     string
		answer    reply
		wantAt    string // where the message shows
		invalid   string // the control marked aria-invalid ("" for a form-level error)
		wantExtra string // more text expected with the message
	}{
		{name: "signup weak password", page: "signup", fill: map[string]string{"#email": "ada@example.com", "#password": "short1!"},
			submit: "#signup-form button[type=submit]", route: "POST /auth/signup",
			answer: reply{status: 400, fixture: "signup-weak-password.json"}, wantAt: "#password-error", invalid: "#password"},
		{name: "signup malformed email", page: "signup", fill: map[string]string{"#email": "ada@", "#password": "correct horse battery"},
			submit: "#signup-form button[type=submit]", route: "POST /auth/signup",
			answer: reply{status: 400, fixture: "signup-malformed-email.json"}, wantAt: "#email-error", invalid: "#email"},
		{name: "signup throttled", page: "signup", fill: map[string]string{"#email": "ada@example.com", "#password": "correct horse battery"},
			submit: "#signup-form button[type=submit]", route: "POST /auth/signup",
			answer: reply{status: 429, fixture: "signup-throttled.json", headers: map[string]string{"Retry-After": "30"}},
			wantAt: "#signup-form .form-error", wantExtra: "Try again in 30 seconds.",
		},
		{name: "login wrong password", page: "login", fill: map[string]string{"#email": "ada@example.com", "#password": "not the password"},
			submit: "#login-form button[type=submit]", route: "POST /auth/login",
			answer: reply{status: 401, fixture: "login-invalid-credentials.json"}, wantAt: "#login-form .form-error"},
		{name: "reset link expired", page: "reset?token=tok_expired", fill: map[string]string{"#password": "a new long password", "#confirm": "a new long password"},
			submit: "#reset-form button[type=submit]", route: "POST /auth/password/reset",
			answer: reply{status: 400, fixture: "reset-expired.json"}, wantAt: "#reset-form .form-error"},
		{name: "key budget refused", page: "keys", fill: map[string]string{"#create-name": "notebook", "#create-budget": "0.0000001"},
			submit: "#create-key-form button[type=submit]", route: "POST /account/v1/keys",
			answer: reply{status: 400, fixture: "key-invalid-budget.json"}, wantAt: "#create-budget-error", invalid: "#create-budget"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b.Use(t)
			f := startFakeGateway(t)
			f.loggedIn()
			f.answer(c.route, c.answer)
			b.Open(f.URL + dashboard.Prefix + c.page)
			if strings.HasPrefix(c.page, "keys") {
				b.WaitText("#key-rows", "laptop")
			}
			for sel, v := range c.fill {
				b.Fill(sel, v)
			}
			b.Click(c.submit)
			want := fixtureMessage(t, c.answer.fixture)
			if c.wantExtra != "" {
				want += " " + c.wantExtra
			}
			if got := b.WaitText(c.wantAt, want); got != want {
				t.Errorf("%s shows %q, want %q", c.wantAt, got, want)
			}
			b.Screenshot(strings.ReplaceAll(c.name, " ", "-"))
			if c.invalid != "" {
				if got := b.Attr(c.invalid, "aria-invalid"); got != "true" {
					t.Errorf("%s aria-invalid = %q, want true", c.invalid, got)
				}
				errID := strings.TrimPrefix(c.wantAt, "#")
				if got := b.Attr(c.invalid, "aria-describedby"); !strings.Contains(" "+got+" ", " "+errID+" ") {
					t.Errorf("%s aria-describedby = %q, want it to name %s", c.invalid, got, errID)
				}
				if n := b.Count("[aria-invalid=true]"); n != 1 {
					t.Errorf("%d controls marked invalid, want only %s", n, c.invalid)
				}
				if top := b.Text("form .form-error"); top != "" {
					t.Errorf("form-level error %q shown beside the field's", top)
				}
			} else if n := b.Count("[aria-invalid=true]"); n != 0 {
				t.Errorf("%d controls marked invalid for a form-level error", n)
			}
			method, path, _ := strings.Cut(c.route, " ")
			if n := len(f.callsTo(method, path)); n != 1 {
				t.Errorf("%s called %d times, want once", c.route, n)
			}
			b.ExpectNoProblems()
		})
	}
}

// The sign-up form posts exactly the typed e-mail and password, and then says only that a
// link may be on its way (the same answer whether or not the address is registered).
func TestSignupPostsTheFormAndShowsTheSameAnswerForEveryAddress(t *testing.T) {
	b := Start(t)
	f := startFakeGateway(t)
	f.answer("POST /auth/signup", reply{status: 202})
	b.Open(f.URL + "/dashboard/signup")
	b.Screenshot("signup")
	b.Fill("#email", "ada@example.com")
	b.Fill("#password", "correct horse battery")
	b.Click("#signup-form button[type=submit]")
	b.WaitVisible("#signup-done")
	if got := b.Text("#signup-email"); got != "ada@example.com" {
		t.Errorf("confirmation names %q", got)
	}
	calls := f.callsTo("POST", "/auth/signup")
	if len(calls) != 1 || calls[0].body != `{"email":"ada@example.com","password":"correct horse battery"}` {
		t.Fatalf("sign-up calls = %+v", calls)
	}
	b.Screenshot("signup-sent")
	b.ExpectNoProblems()
}

// Without a session an authed page sends the visitor to log in, and the login returns there.
func TestAuthedPageWithoutSessionGoesToLoginAndBack(t *testing.T) {
	b := Start(t)
	f := startFakeGateway(t)
	f.answer("GET /auth/session", reply{status: 401, fixture: "no-session.json"})
	b.Open(f.URL + "/dashboard/credits")
	b.WaitPath("/dashboard/login")
	if got, _ := url.Parse(b.URL()); got.Query().Get("next") != "/dashboard/credits" {
		t.Fatalf("login page at %s, want next=/dashboard/credits", b.URL())
	}
	f.answer("POST /auth/login", reply{status: 200, fixture: "login-ok.json"})
	f.loggedIn()
	b.Fill("#email", "ada@example.com")
	b.Fill("#password", "correct horse battery")
	b.Click("#login-form button[type=submit]")
	b.WaitPath("/dashboard/credits")
	b.WaitText("#balance", "$7.25")
	b.ExpectNoProblems()
}

// A created key's secret is shown once with a copy button, the creation carries the
// session's CSRF token and the limits typed, and "I have saved it" takes it off the page.
func TestKeyCreationShowsTheSecretOnceAndSendsTheCSRFToken(t *testing.T) {
	b := Start(t)
	f := startFakeGateway(t)
	f.loggedIn()
	f.answer("POST /account/v1/keys", reply{status: 201, fixture: "key-created.json"})
	b.Open(f.URL + "/dashboard/keys")
	b.WaitText("#key-rows", "laptop")
	if got := b.Text("#key-rows tr:nth-child(1) td:nth-child(4)"); got != "$12.50 per month, 30 rpm" {
		t.Errorf("laptop's limits show %q", got)
	}
	if got := b.Text("#key-rows tr:nth-child(2) td:nth-child(6)"); got != "revoked" {
		t.Errorf("ci's status shows %q", got)
	}
	b.Fill("#create-name", "notebook")
	b.Fill("#create-budget", "12.50")
	b.SetValue("#create-period", "week")
	b.Fill("#create-rpm", "30")
	b.Click("#create-key-form button[type=submit]")
	b.WaitVisible("#new-secret")
	const secret = "sk-token-FIXTUREsecretShownOnce0123456789abcdefQx7w"
	if got := b.Value("#secret-value"); got != secret {
		t.Fatalf("secret field = %q", got)
	}
	if b.Text("#copy-secret") != "Copy" {
		t.Errorf("no copy button")
	}
	b.Screenshot("key-created")
	calls := f.callsTo("POST", "/account/v1/keys")
	if len(calls) != 1 {
		t.Fatalf("%d creations", len(calls))
	}
	if calls[0].csrf != "csrf-fixture-7f3a9c" {
		t.Errorf("X-CSRF-Token = %q, want the session's", calls[0].csrf)
	}
	var sent, want any
	json.Unmarshal([]byte(calls[0].body), &sent)
	json.Unmarshal([]byte(`{"name":"notebook","models":[],"zdr":false,"limits":{"budget":{"amount_usd":"12.50","period":"week"},"rpm":30}}`), &want)
	if !reflect.DeepEqual(sent, want) {
		t.Errorf("creation body = %s", calls[0].body)
	}
	b.Click("#secret-done")
	if b.Value("#secret-value") != "" || !b.Hidden("#new-secret") {
		t.Errorf("the secret stays on the page after it was saved")
	}
	b.ExpectNoProblems()
}

// The usage page draws a fixture page of the request log: rows with their costs, the
// range's totals, a chart of every entry of the range, the CSV link with the filters, and
// the next page through the cursor.
func TestUsagePageRendersTheRequestLogFromFixtures(t *testing.T) {
	b := Start(t)
	f := startFakeGateway(t)
	f.loggedIn()
	b.Open(f.URL + "/dashboard/usage?from=2026-11-02T00:00:00Z&to=2026-11-03T00:00:00Z&model=")
	b.WaitText("#usage-rows", "sim-messages")
	rows := []string{}
	b.Eval(`[...document.querySelectorAll("#usage-rows tr")].map(r => r.dataset.requestId + " " + r.cells[1].textContent + " " + r.cells[2].textContent + " " + r.cells[3].textContent + " " + r.cells[7].textContent + " " + r.cells[8].textContent)`, &rows)
	want := []string{
		"req_fixture0001 sim-chat laptop 200 $0 $0.000044",
		"req_fixture0002 sim-messages laptop 200 $0.0081 $0.0081",
		"req_fixture0003 sim-chat ci 429 $0 $0", // ci is revoked, and still named: the key list has it
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows =\n%q\nwant\n%q", rows, want)
	}
	if got := b.Text("#usage-totals"); !strings.HasPrefix(got, "5 requests in the range · cost $0.0171 · at model prices $0.017188") {
		t.Errorf("totals = %q", got)
	}
	b.WaitFor("the chart", `document.querySelectorAll("#usage-chart rect.bar").length > 0`, func() string { return b.Text("#usage-chart") })
	var bars int
	b.Eval(`[...document.querySelectorAll("#usage-chart rect.bar")].reduce((s, r) => s + Number(r.dataset.count), 0)`, &bars)
	if bars != 5 {
		t.Errorf("chart bars count %d requests, want the range's 5 (both pages)", bars)
	}
	from := url.QueryEscape("2026-11-02T00:00:00Z")
	if got := b.Attr("#csv-link", "href"); got != "/account/v1/usage.csv?from="+from+"&to="+url.QueryEscape("2026-11-03T00:00:00Z") {
		t.Errorf("CSV link = %q", got)
	}
	b.Screenshot("usage")
	b.Click("#next-page")
	b.WaitText("#usage-rows", "790 ms")
	if n := b.Count("#usage-rows tr"); n != 2 {
		t.Errorf("page 2 shows %d rows, want 2", n)
	}
	if !b.Hidden("#next-page") {
		t.Errorf("next page offered after the last page")
	}
	var cursorCalls int
	for _, c := range f.callsTo("GET", "/account/v1/usage") {
		if c.query == "cursor=Y3Vyc29yLWZpeHR1cmUtcGFnZS0y" {
			cursorCalls++
		}
	}
	if cursorCalls != 2 { // the chart's second page and the table's
		t.Errorf("%d calls with the cursor alone, want 2", cursorCalls)
	}
	b.ExpectNoProblems()
}

// Every page loads its modules and styles under the CSP without an error, and is
// screenshotted as it first shows.
func TestEveryPageLoadsWithoutConsoleErrors(t *testing.T) {
	b := Start(t)
	f := startFakeGateway(t)
	f.loggedIn()
	f.answer("POST /auth/verify", reply{status: 200})
	ready := map[string][2]string{ // what each page shows once its data is in
		"overview": {"#allowance-rows", "500"},
		"keys":     {"#key-rows", "laptop"},
		"usage":    {"#usage-rows", "sim-chat"},
		"credits":  {"#credit-rows", "Top-up"},
		"plan":     {"#plan-next", "Moves to basic"},
		"signup":   {"h1", "Sign up"},
		"verify":   {"#verify-status", "Your e-mail is verified."},
		"login":    {"#login-notice", "Your e-mail is verified."},
		"forgot":   {"h1", "Forgot password"},
		"reset":    {"h1", "Choose a new password"},
	}
	query := map[string]string{"verify": "?token=tok_fixture", "login": "?verified=1", "usage": "?from=2026-11-02T00:00:00Z", "reset": "?token=tok_fixture"}
	for _, p := range dashboard.Pages {
		b.Open(f.URL + dashboard.Prefix + p.Name + query[p.Name])
		w := ready[p.Name]
		b.WaitText(w[0], w[1])
		if p.Authed {
			b.WaitText("#account-email", "ada@example.com")
		}
		if got := b.Text("title"); got != p.Title+" · modelgate" {
			t.Errorf("%s: title %q", p.Name, got)
		}
		b.Screenshot(p.Name)
	}
	// Token links leave no token in the address bar (nor in history).
	b.Open(f.URL + "/dashboard/reset?token=tok_fixture")
	b.WaitPath("/dashboard/reset")
	if u := b.URL(); strings.Contains(u, "tok_fixture") {
		t.Errorf("reset page keeps the token in its address: %s", u)
	}
	b.ExpectNoProblems()
}
