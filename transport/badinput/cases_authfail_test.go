package badinput_test

import (
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// authFailCases: a client that failed server.auth_failures_per_minute key, token or session
// checks is refused every auth attempt with 429 in its surface's envelope (chat, messages,
// Google, the admin API's, the account API's, /auth's), unchecked: the right credential too.
// Each case comes from a loopback address of its own, which first fails the limit's worth of
// checks with the case's own request (each a 401), so the suite's 127.0.0.1 is never refused.
// Nothing is logged or charged and no upstream is called; the failures and refusals are
// counted in modelgate_auth_failures_total and modelgate_auth_refusals_total by kind. And an
// imported key needs 128 bits of entropy after its prefix.
func authFailCases() []badCase {
	chat := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	limited := func(format string) answer {
		if format == "google" {
			return googleErr(429, "RESOURCE_EXHAUSTED", "too_many_auth_failures", "", "too many failed authentication attempts from this address")
		}
		if format == "messages" {
			return messagesErr(429, "rate_limit_error", "too_many_auth_failures", "too many failed authentication attempts from this address")
		}
		return chatErr(429, "rate_limit_error", "too_many_auth_failures", "", "too many failed authentication attempts from this address")
	}
	wrongKey := "Bearer sk-token-" + strings.Repeat("g", 48)
	wrongCookie := "mg_session=" + strings.Repeat("g", 43)
	const api, admin, session = "api_key", "admin_token", "session"
	return []badCase{
		guess{"chat completions", "127.0.0.11", "POST", "/v1/chat/completions", chat, limited("chat"),
			api, []string{"Authorization", wrongKey}, api, []string{"Authorization", "Bearer {key}"}}.badCase(),
		guess{"messages", "127.0.0.12", "POST", "/v1/messages", `{"model":"msg","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`, limited("messages"),
			api, []string{"x-api-key", wrongKey[len("Bearer "):]}, api, []string{"x-api-key", "{key}"}}.badCase(),
		guess{"gemini generateContent", "127.0.0.13", "POST", "/v1beta/models/gem:generateContent", `{"contents":[{"parts":[{"text":"hi"}]}]}`, limited("google"),
			api, []string{"x-goog-api-key", wrongKey[len("Bearer "):]}, api, []string{"x-goog-api-key", "{key}"}}.badCase(),
		guess{"the model list", "127.0.0.14", "GET", "/v1/models", "", limited("chat"),
			api, []string{"Authorization", wrongKey}, api, []string{"Authorization", "Bearer {key}"}}.badCase(),
		guess{"the admin API", "127.0.0.15", "GET", "/admin/v1/accounts", "", limited("chat"),
			admin, []string{"Authorization", "Bearer mg-admin-" + strings.Repeat("g", 40)}, admin, []string{"Authorization", "Bearer " + nodetest.AdminToken}}.badCase(),
		guess{"the account API with a key", "127.0.0.16", "GET", "/account/v1/me", "", limited("chat"),
			api, []string{"Authorization", wrongKey}, api, []string{"Authorization", "Bearer {key}"}}.badCase(),
		guess{"the account API with a session", "127.0.0.17", "GET", "/account/v1/me", "", limited("chat"),
			session, []string{"Cookie", wrongCookie}, api, []string{"Authorization", "Bearer {key}"}}.badCase(),
		guess{"the session of /auth", "127.0.0.18", "GET", "/auth/session", "", limited("chat"),
			session, []string{"Cookie", wrongCookie}, session, []string{"Cookie", "mg_session=" + strings.Repeat("h", 43)}}.badCase(),
		{endpoint: "auth failures", name: "importing a key of 12 repeated characters", method: "POST", path: "/admin/v1/accounts/{acct}/keys", admin: true,
			body: `{"name":"k","import_key":"sk-user-aaaaaaaaaaaa"}`, key: keyAdmin, eff: nothing,
			want: chatErr(400, "invalid_request_error", "invalid_request", "import_key",
				"the secret after sk-user- has about 4 bits of entropy, under the 128 needed: use at least 22 random letters and digits")},
		{endpoint: "auth failures", name: "importing a key with a guessable secret", method: "POST", path: "/admin/v1/accounts/{acct}/keys", admin: true,
			body: `{"name":"k","import_key":"sk-token-abcdefghijklmnopqrstuvwxyz0123456789"}`, key: keyAdmin, eff: nothing,
			want: chatErr(400, "invalid_request_error", "invalid_request", "import_key", "the secret after sk-token- has about 20 bits of entropy")},
	}
}

// guess is a case whose client, from its own address, has failed the limit's worth of
// checks of kind with the very request the case sends (wrong: the wrong credential's
// header). The case's answer is want; after it the right credential (right, whose values may
// name {key}; a check of rightKind) is refused too, with Retry-After and the same wait in
// its message.
type guess struct {
	name, from, method, path, body string
	want                           answer
	kind                           string
	wrong                          []string
	rightKind                      string
	right                          []string
}

func (g guess) badCase() badCase {
	var failures float64
	refusals := map[string]float64{} // by kind, before the case
	bc := badCase{endpoint: "auth failures", name: g.name, from: g.from, method: g.method, path: g.path, body: g.body, key: keyNone,
		headers: g.wrong, want: g.want, eff: nothing, admin: strings.HasPrefix(g.path, "/admin/")}
	bc.prepare = func(t *testing.T, s *suite, c *caseAccount) {
		failures = s.authCounter(t, "failures", g.kind)
		for _, kind := range []string{g.kind, g.rightKind} {
			refusals[kind] = s.authCounter(t, "refusals", kind)
		}
		limit := s.env.Node.Catalog.Load().Server.AuthFailuresPerMinute
		for i := range limit {
			if resp, raw := s.send(t, bc, c); resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("failure %d of %d: %d %.300s", i+1, limit, resp.StatusCode, raw)
			}
		}
	}
	bc.check = func(t *testing.T, s *suite, c *caseAccount, _ []byte) {
		limit := float64(s.env.Node.Catalog.Load().Server.AuthFailuresPerMinute)
		again := bc
		again.headers = g.right
		resp, raw := s.send(t, again, c)
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		if resp.StatusCode != http.StatusTooManyRequests || after < 1 || after > 60 ||
			!strings.Contains(string(raw), "try again in "+strconv.Itoa(after)+" seconds") {
			t.Errorf("the right credential from the refused address: %d Retry-After %q: %.300s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
		}
		if got := s.authCounter(t, "failures", g.kind) - failures; got != limit {
			t.Errorf("modelgate_auth_failures_total{kind=%q} moved %v, want %v", g.kind, got, limit)
		}
		want := map[string]float64{} // the case's refusal and the right credential's
		want[g.kind]++
		want[g.rightKind]++
		for kind, n := range want {
			if got := s.authCounter(t, "refusals", kind) - refusals[kind]; got != n {
				t.Errorf("modelgate_auth_refusals_total{kind=%q} moved %v, want %v (the case's and the right credential's)", kind, got, n)
			}
		}
	}
	return bc
}

// clientFrom is the suite's client, its connections made from the loopback address from
// ("": 127.0.0.1). Linux's loopback takes any 127/8 source address, so each is a client of
// its own for the gateway's per-address limits.
func (s *suite) clientFrom(from string) *http.Client {
	if from == "" {
		return s.client
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	return &http.Client{Timeout: 30 * time.Second, CheckRedirect: s.client.CheckRedirect,
		Transport: &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}}
}

// authCounter reads modelgate_auth_<what>_total{kind} from the node's metrics (0 when absent).
func (s *suite) authCounter(t *testing.T, what, kind string) float64 {
	t.Helper()
	line := regexp.MustCompile(`(?m)^modelgate_auth_` + what + `_total\{kind="` + kind + `"\} (\S+)$`).FindStringSubmatch(s.env.Metrics())
	if line == nil {
		return 0
	}
	v, err := strconv.ParseFloat(line[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
