package node_test

import (
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// A browser reaches /v1 (docs/decisions.md, "Browsers (CORS)"): by default every
// origin gets CORS, preflights are answered by the gateway with the path's methods, and
// every answer (errors too) is readable by the page; the admin API never answers CORS; an
// operator's origin list refuses other origins' preflights in the path's envelope.
func TestCORS(t *testing.T) {
	const allowed = "Authorization, Content-Type, x-api-key, anthropic-version, anthropic-beta, x-goog-api-key"
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
			allowMethods: "POST", allowHeaders: allowed + ", x-stainless-os"},
		{name: "preflight of a gemini action", env: open, method: "OPTIONS", path: "/v1beta/models/chat:streamGenerateContent",
			headers: preflight("POST", "x-goog-api-key, content-type"), status: 204, allowOrigin: "*",
			allowMethods: "GET, POST", allowHeaders: allowed},
		{name: "preflight of the model list", env: open, method: "OPTIONS", path: "/v1/models",
			headers: preflight("GET", ""), status: 204, allowOrigin: "*", allowMethods: "GET", allowHeaders: allowed},
		{name: "a call from a page", env: open, method: "POST", path: "/v1/chat/completions", body: hello, key: true,
			headers: []string{"Origin", "https://app.example.com"}, status: 200, allowOrigin: "*", exposes: true},
		{name: "an error a page reads", env: open, method: "POST", path: "/v1/chat/completions", body: hello,
			headers: []string{"Origin", "https://app.example.com", "Authorization", "Bearer sk-user-nope"}, status: 401, allowOrigin: "*", exposes: true, code: "invalid_api_key"},
		{name: "preflight of an unknown path: its 404, readable", env: open, method: "OPTIONS", path: "/v1/completions",
			headers: preflight("POST", ""), status: 404, allowOrigin: "*", exposes: true, code: "unknown_url"},
		{name: "the admin API answers no CORS (nor is it on this port)", env: open, method: "OPTIONS", path: "/admin/v1/accounts",
			headers: preflight("POST", "authorization"), status: 404, code: "admin_elsewhere"},
		{name: "OPTIONS that is no preflight", env: open, method: "OPTIONS", path: "/v1/chat/completions",
			headers: []string{"Origin", "https://app.example.com"}, status: 405, allowOrigin: "*", exposes: true, code: "method_not_allowed"},
		{name: "a call without Origin gets no CORS", env: open, method: "POST", path: "/v1/chat/completions", body: hello, key: true, status: 200},
		{name: "a listed origin, named back", env: listed, method: "OPTIONS", path: "/v1/messages",
			headers: []string{"Origin", "https://App.Example.com", "Access-Control-Request-Method", "POST"}, status: 204,
			allowOrigin: "https://App.Example.com", allowMethods: "POST", allowHeaders: allowed},
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

// TestCORSPreflightHeadersAndSameOriginPaths: a preflight of /v1 allows each format's key
// header, the messages version and beta headers and the body's type whether or not the browser
// lists them, and the headers an SDK adds besides; the key-holder endpoints answer it with GET;
// answers expose X-Modelgate-Cost; /auth, /account and /dashboard are same-origin: no CORS.
func TestCORSPreflightHeadersAndSameOriginPaths(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	preflight := func(method, reqHeaders string) []string {
		return []string{"Origin", "https://app.example.com", "Access-Control-Request-Method", method, "Access-Control-Request-Headers", reqHeaders}
	}
	cases := []struct {
		name, method, path string
		headers            []string
		status             int // 0: not checked (the same-origin paths are other helpers' routes)
		allowOrigin        string
		allowMethods       string
		allows             []string // each in Access-Control-Allow-Headers
		exposes            string   // in Access-Control-Expose-Headers
	}{
		{name: "Authorization", method: "OPTIONS", path: "/v1/chat/completions", headers: preflight("POST", "authorization"),
			status: 204, allowOrigin: "*", allowMethods: "POST", allows: []string{"Authorization"}},
		{name: "x-api-key", method: "OPTIONS", path: "/v1/messages", headers: preflight("POST", "x-api-key"),
			status: 204, allowOrigin: "*", allowMethods: "POST", allows: []string{"x-api-key"}},
		{name: "anthropic-version", method: "OPTIONS", path: "/v1/messages", headers: preflight("POST", "anthropic-version"),
			status: 204, allowOrigin: "*", allowMethods: "POST", allows: []string{"anthropic-version"}},
		{name: "anthropic-beta", method: "OPTIONS", path: "/v1/messages", headers: preflight("POST", "anthropic-beta"),
			status: 204, allowOrigin: "*", allowMethods: "POST", allows: []string{"anthropic-beta"}},
		{name: "x-goog-api-key", method: "OPTIONS", path: "/v1beta/models/chat:generateContent", headers: preflight("POST", "x-goog-api-key"),
			status: 204, allowOrigin: "*", allowMethods: "GET, POST", allows: []string{"x-goog-api-key"}},
		{name: "Content-Type", method: "OPTIONS", path: "/v1/responses", headers: preflight("POST", "content-type"),
			status: 204, allowOrigin: "*", allowMethods: "POST", allows: []string{"Content-Type"}},
		{name: "none asked: all listed", method: "OPTIONS", path: "/v1/embeddings", headers: preflight("POST", ""),
			status: 204, allowOrigin: "*", allowMethods: "POST",
			allows: []string{"Authorization", "Content-Type", "x-api-key", "anthropic-version", "anthropic-beta", "x-goog-api-key"}},
		{name: "an SDK's own header, once", method: "OPTIONS", path: "/v1/chat/completions", headers: preflight("POST", "X-Stainless-Lang, AUTHORIZATION"),
			status: 204, allowOrigin: "*", allowMethods: "POST", allows: []string{"Authorization", "X-Stainless-Lang"}},
		{name: "GET /v1/key", method: "OPTIONS", path: "/v1/key", headers: preflight("GET", "x-goog-api-key"),
			status: 204, allowOrigin: "*", allowMethods: "GET", allows: []string{"x-goog-api-key"}},
		{name: "GET /v1/generations/{id}", method: "OPTIONS", path: "/v1/generations/req_1", headers: preflight("GET", "authorization"),
			status: 204, allowOrigin: "*", allowMethods: "GET", allows: []string{"Authorization"}},
		{name: "an answer exposes X-Modelgate-Cost", method: "GET", path: "/v1/key", headers: []string{"Origin", "https://app.example.com"},
			status: 401, allowOrigin: "*", exposes: "X-Modelgate-Cost"},
		{name: "/auth: same-origin", method: "OPTIONS", path: "/auth/login", headers: preflight("POST", "content-type")},
		{name: "/account/v1: same-origin", method: "OPTIONS", path: "/account/v1/me", headers: preflight("GET", "authorization")},
		{name: "/dashboard: same-origin", method: "OPTIONS", path: "/dashboard/", headers: preflight("GET", "")},
		{name: "/auth answer: no CORS", method: "POST", path: "/auth/login", headers: []string{"Origin", "https://app.example.com"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Do(c.method, c.path, "", "", c.headers...)
			raw := nodetest.Read(t, resp)
			h := resp.Header
			if c.status != 0 && resp.StatusCode != c.status || h.Get("Access-Control-Allow-Origin") != c.allowOrigin || h.Get("Access-Control-Allow-Methods") != c.allowMethods {
				t.Fatalf("%d origin %q methods %q; want %d %q %q: %s", resp.StatusCode, h.Get("Access-Control-Allow-Origin"),
					h.Get("Access-Control-Allow-Methods"), c.status, c.allowOrigin, c.allowMethods, raw)
			}
			listed := strings.Split(h.Get("Access-Control-Allow-Headers"), ", ")
			for _, want := range c.allows {
				n := 0
				for _, got := range listed {
					if strings.EqualFold(got, want) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("Allow-Headers %q lists %q %d times, want once", listed, want, n)
				}
			}
			if c.allowOrigin == "" && (h.Get("Access-Control-Allow-Headers") != "" || h.Get("Access-Control-Expose-Headers") != "") {
				t.Errorf("same-origin path answered CORS: %v", h)
			}
			if c.exposes != "" && !strings.Contains(h.Get("Access-Control-Expose-Headers"), c.exposes) {
				t.Errorf("Expose-Headers %q lacks %s", h.Get("Access-Control-Expose-Headers"), c.exposes)
			}
		})
	}
}
