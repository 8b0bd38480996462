package node_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// unroutedBody is an error answer of any envelope: chat ({"error":{…,"request_id"}}),
// messages ({"type":"error","error":{…},"request_id"}) or Google's (status and a RequestInfo).
type unroutedBody struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Error     struct {
		Type      string `json:"type"`
		Code      any    `json:"code"`
		Status    string `json:"status"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
		Details   []struct {
			Type      string `json:"@type"`
			Reason    string `json:"reason"`
			RequestID string `json:"requestId"`
		} `json:"details"`
	} `json:"error"`
}

// format names the envelope and returns its code and request id.
func (b unroutedBody) format() (format, code, requestID string) {
	switch {
	case b.Error.Status != "":
		for _, d := range b.Error.Details {
			if strings.HasSuffix(d.Type, "ErrorInfo") {
				code = strings.ToLower(d.Reason)
			}
			if strings.HasSuffix(d.Type, "RequestInfo") {
				requestID = d.RequestID
			}
		}
		return "google", code, requestID
	case b.Type == "error":
		c, _ := b.Error.Code.(string)
		return "messages", c, b.RequestID
	}
	c, _ := b.Error.Code.(string)
	return "chat", c, b.Error.RequestID
}

// TestWrongMethodsAndUnknownPaths: a wrong method on an existing path is 405 with Allow, and an
// unknown path 404, in the path's own envelope (messages under /v1/messages, Google's under
// /v1beta, chat elsewhere); a doubled version (/v1/v1/…, a base URL that ends in /v1 for a
// client that adds /v1) is a 404 that says to drop it, in the envelope of the client's own
// path. Every one carries its request id.
func TestWrongMethodsAndUnknownPaths(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	base := env.Node.URL
	doubled := func(path, baseEnd, added, who string) string {
		return "no endpoint at " + path + ": the base URL ends in /" + baseEnd + " and the client adds /" + added +
			" itself; drop /" + baseEnd + " from the base URL (use " + base + "); " + who
	}
	const anthropicWho = "Anthropic SDKs and Claude Code (ANTHROPIC_BASE_URL) add /v1 themselves"
	const googleWho = "Google's SDKs and Gemini CLI (GOOGLE_GEMINI_BASE_URL) add /v1beta themselves"
	cases := []struct {
		name, method, path string
		status             int
		allow              string
		format, code       string
		message            string // "" = not checked
	}{
		{"chat, GET", "GET", "/v1/chat/completions", 405, "POST", "chat", "method_not_allowed", "method GET is not allowed on /v1/chat/completions; use POST"},
		{"messages, PUT", "PUT", "/v1/messages", 405, "POST", "messages", "method_not_allowed", "method PUT is not allowed on /v1/messages; use POST"},
		{"count_tokens, GET", "GET", "/v1/messages/count_tokens", 405, "POST", "messages", "method_not_allowed", ""},
		{"responses, DELETE", "DELETE", "/v1/responses", 405, "POST", "chat", "method_not_allowed", ""},
		{"model list, POST", "POST", "/v1/models", 405, "GET", "chat", "method_not_allowed", ""},
		{"video poll, POST", "POST", "/v1/videos/video_x", 405, "GET", "chat", "method_not_allowed", ""},
		{"gemini list, DELETE", "DELETE", "/v1beta/models", 405, "GET", "google", "method_not_allowed", ""},
		{"gemini action, PUT", "PUT", "/v1beta/models/chat:generateContent", 405, "GET, POST", "google", "method_not_allowed",
			"method PUT is not allowed on /v1beta/models/chat:generateContent; use GET or POST"},
		{"admin on the public port, DELETE", "DELETE", "/admin/v1/accounts", 404, "", "chat", "admin_elsewhere",
			"the admin API is served on its own listener; see server.admin_addr"},
		{"healthz, POST", "POST", "/healthz", 405, "GET", "chat", "method_not_allowed", ""},
		{"asset, PUT", "PUT", "/assets/gen/x.png", 405, "GET, HEAD", "chat", "method_not_allowed", ""},
		{"unknown path", "GET", "/v2/chat", 404, "", "chat", "unknown_url", "no endpoint at /v2/chat; the API lives under /v1 (the Gemini API under /v1beta)"},
		{"unknown path under /v1", "POST", "/v1/completions", 404, "", "chat", "unknown_url", ""},
		{"unknown path under /v1beta", "GET", "/v1beta/files", 404, "", "google", "unknown_url", ""},
		{"another unknown path under /v1beta", "POST", "/v1beta/cachedContents", 404, "", "google", "unknown_url", ""},
		{"/v1beta alone", "GET", "/v1beta", 404, "", "google", "unknown_url", ""},
		{"unknown path under /v1/messages", "POST", "/v1/messages/batches", 404, "", "messages", "unknown_url",
			"no endpoint at /v1/messages/batches; the API lives under /v1 (the Gemini API under /v1beta)"},
		{"a path that only starts like messages", "POST", "/v1/messagesx", 404, "", "chat", "unknown_url", ""},
		{"metrics on the API's listener", "GET", "/metrics", 404, "", "chat", "unknown_url",
			"no endpoint at /metrics: metrics are served on the metrics address (server.metrics_addr), not the API's"},
		{"/v1/v1/messages", "POST", "/v1/v1/messages", 404, "", "messages", "unknown_url", doubled("/v1/v1/messages", "v1", "v1", anthropicWho)},
		{"/v1/v1/chat/completions", "POST", "/v1/v1/chat/completions", 404, "", "chat", "unknown_url", doubled("/v1/v1/chat/completions", "v1", "v1", anthropicWho)},
		{"/v1/v1beta/…", "POST", "/v1/v1beta/models/chat:generateContent", 404, "", "google", "unknown_url",
			doubled("/v1/v1beta/models/chat:generateContent", "v1", "v1beta", googleWho)},
		{"/v1beta/v1beta/…", "GET", "/v1beta/v1beta/models", 404, "", "google", "unknown_url", doubled("/v1beta/v1beta/models", "v1beta", "v1beta", googleWho)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := env.Do(c.method, c.path, env.Key, "")
			raw := nodetest.Read(t, resp)
			var b unroutedBody
			if err := json.Unmarshal(raw, &b); err != nil {
				t.Fatalf("not JSON: %s", raw)
			}
			format, code, id := b.format()
			if resp.StatusCode != c.status || resp.Header.Get("Allow") != c.allow || format != c.format || code != c.code {
				t.Fatalf("%d Allow %q, %s envelope, code %q; want %d %q %s %q: %s", resp.StatusCode, resp.Header.Get("Allow"), format, code, c.status, c.allow, c.format, c.code, raw)
			}
			if id == "" || id != resp.Header.Get("X-Request-Id") {
				t.Errorf("request id %q in the body, %q in the header", id, resp.Header.Get("X-Request-Id"))
			}
			if c.message != "" && b.Error.Message != c.message {
				t.Errorf("message %q\nwant    %q", b.Error.Message, c.message)
			}
		})
	}

}
