package node_test

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// A browser reaches /v1 (shared decisions, "Browsers and public addresses"): by default every
// origin gets CORS, preflights are answered by the gateway with the path's methods, and
// every answer (errors too) is readable by the page; the admin API never answers CORS; an
// operator's origin list refuses other origins' preflights in the path's envelope.
func TestCORS(t *testing.T) {
	open := nodetest.Start(t, "", nodetest.Options{})
	listed := nodetest.Start(t, strings.Replace(nodetest.DefaultCatalog, "server: {", "server: {cors_origins: ['https://app.example.com'], ", 1), nodetest.Options{})
	const hello = `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	preflight := func(method, reqHeaders string) []string {
		return []string{"Origin", "https://app.example.com", "Access-Control-Request-Method", method, "Access-Control-Request-Headers", reqHeaders}
	}
	cases := []struct {
		name               string
		env                *nodetest.Env
		method, path, body string
		key                bool
		headers            []string
		status             int
		allowOrigin        string
		allowMethods       string
		allowHeaders       string
		exposes            bool   // Access-Control-Expose-Headers lists X-Request-Id
		code               string // the error code in the body, "" = none checked
	}{
		{name: "preflight of chat", env: open, method: "OPTIONS", path: "/v1/chat/completions",
			headers: preflight("POST", "authorization, content-type, x-stainless-os"), status: 204, allowOrigin: "*",
			allowMethods: "POST", allowHeaders: "authorization, content-type, x-stainless-os"},
		{name: "preflight of a gemini action", env: open, method: "OPTIONS", path: "/v1beta/models/chat:streamGenerateContent",
			headers: preflight("POST", "x-goog-api-key, content-type"), status: 204, allowOrigin: "*",
			allowMethods: "GET, POST", allowHeaders: "x-goog-api-key, content-type"},
		{name: "preflight of the model list", env: open, method: "OPTIONS", path: "/v1/models",
			headers: preflight("GET", ""), status: 204, allowOrigin: "*", allowMethods: "GET"},
		{name: "a call from a page", env: open, method: "POST", path: "/v1/chat/completions", body: hello, key: true,
			headers: []string{"Origin", "https://app.example.com"}, status: 200, allowOrigin: "*", exposes: true},
		{name: "an error a page reads", env: open, method: "POST", path: "/v1/chat/completions", body: hello,
			headers: []string{"Origin", "https://app.example.com", "Authorization", "Bearer sk-user-nope"}, status: 401, allowOrigin: "*", exposes: true, code: "invalid_api_key"},
		{name: "preflight of an unknown path: its 404, readable", env: open, method: "OPTIONS", path: "/v1/completions",
			headers: preflight("POST", ""), status: 404, allowOrigin: "*", exposes: true, code: "unknown_url"},
		{name: "the admin API answers no CORS", env: open, method: "OPTIONS", path: "/admin/v1/accounts",
			headers: preflight("POST", "authorization"), status: 405, code: "method_not_allowed"},
		{name: "OPTIONS that is no preflight", env: open, method: "OPTIONS", path: "/v1/chat/completions",
			headers: []string{"Origin", "https://app.example.com"}, status: 405, allowOrigin: "*", exposes: true, code: "method_not_allowed"},
		{name: "a call without Origin gets no CORS", env: open, method: "POST", path: "/v1/chat/completions", body: hello, key: true, status: 200},
		{name: "a listed origin, named back", env: listed, method: "OPTIONS", path: "/v1/messages",
			headers: []string{"Origin", "https://App.Example.com", "Access-Control-Request-Method", "POST"}, status: 204,
			allowOrigin: "https://App.Example.com", allowMethods: "POST"},
		{name: "an origin not listed: its preflight refused", env: listed, method: "OPTIONS", path: "/v1/messages",
			headers: []string{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"}, status: 403, code: "origin_not_allowed"},
		{name: "an origin not listed: its call served without CORS", env: listed, method: "POST", path: "/v1/chat/completions", body: hello, key: true,
			headers: []string{"Origin", "https://evil.example"}, status: 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := ""
			if c.key {
				key = c.env.Key
			}
			resp := c.env.Do(c.method, c.path, key, c.body, c.headers...)
			raw := string(nodetest.Read(t, resp))
			h := resp.Header
			if resp.StatusCode != c.status || h.Get("Access-Control-Allow-Origin") != c.allowOrigin ||
				h.Get("Access-Control-Allow-Methods") != c.allowMethods || h.Get("Access-Control-Allow-Headers") != c.allowHeaders {
				t.Fatalf("%d origin %q methods %q headers %q; want %d %q %q %q: %s", resp.StatusCode, h.Get("Access-Control-Allow-Origin"),
					h.Get("Access-Control-Allow-Methods"), h.Get("Access-Control-Allow-Headers"), c.status, c.allowOrigin, c.allowMethods, c.allowHeaders, raw)
			}
			if got := strings.Contains(h.Get("Access-Control-Expose-Headers"), "X-Request-Id"); got != c.exposes {
				t.Errorf("Expose-Headers %q", h.Get("Access-Control-Expose-Headers"))
			}
			if c.status == 204 && (h.Get("Access-Control-Max-Age") != "7200" || raw != "" || h.Get("X-Request-Id") == "") {
				t.Errorf("preflight: max-age %q, request id %q, body %q", h.Get("Access-Control-Max-Age"), h.Get("X-Request-Id"), raw)
			}
			if c.code != "" && !strings.Contains(raw, `"`+c.code+`"`) {
				t.Errorf("body lacks code %q: %s", c.code, raw)
			}
			if c.allowOrigin != "" && c.allowOrigin != "*" && !strings.Contains(strings.Join(h.Values("Vary"), ","), "Origin") {
				t.Errorf("Vary %q lacks Origin", h.Values("Vary"))
			}
		})
	}
	if s := open.Sim.Calls("a") + open.Sim.Calls("b"); s != 2 {
		t.Errorf("%d upstream calls, want the 2 served ones", s)
	}
}
