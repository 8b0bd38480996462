package api_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// ratedCatalog is the default test catalog with a plan of 100 calls a minute, and one that
// admits only coding clients.
var ratedCatalog = nodetest.DefaultCatalog + `
plans:
  - {name: rated, window_requests: 1000, burst_rpm: 100, allow_automated: true}
  - {name: coders, window_requests: 1000, burst_rpm: 50}
`

var requestIDPattern = regexp.MustCompile(`^req_[0-9a-f]{24}$`)

// rateHeaders is an answer's X-RateLimit triple ("" when absent).
type rateHeaders struct{ limit, remaining, reset string }

func rateOf(resp *http.Response) rateHeaders {
	h := resp.Header
	return rateHeaders{h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset")}
}

// TestRateHeadersAndRequestIDOnEveryAnswer: every answer to a known key carries
// X-RateLimit-Limit/-Remaining/-Reset — model lists, token counts, video polls and the
// gateway's own refusals before admission included, on /v1 and /v1beta — equal to the budget a
// model list shows after it (a client error takes its slot by the counting rule, nothing else
// that admitted nothing does); and every answer carries an X-Request-Id, which an error body
// repeats, unknown paths, 405s and the admin API's errors included.
func TestRateHeadersAndRequestIDOnEveryAnswer(t *testing.T) {
	env := nodetest.Start(t, ratedCatalog, nodetest.Options{Plan: "rated"})
	restricted := env.NewKey(persistence.KeySpec{Name: "r", Models: []string{"embed"}})
	coderAcct, err := env.Node.Store.CreateAccount("coder@example.com", "coders")
	if err != nil {
		t.Fatal(err)
	}
	_, coder, err := env.Node.Store.CreateKey(coderAcct.ID, persistence.KeySpec{Name: "c"})
	if err != nil {
		t.Fatal(err)
	}
	unknown := "sk-token-" + strings.Repeat("u", 48)
	// One admitted call, so the budget is neither full nor fresh.
	if resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat")); resp.StatusCode != 200 || rateOf(resp).remaining != "99" {
		t.Fatalf("admitted call: %d %+v", resp.StatusCode, rateOf(resp))
	} else {
		nodetest.Read(t, resp)
	}
	hello := `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`
	gemHello := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	const adminListener = "admin listener:" // a path sent to the admin listener, not the public port
	cases := []struct {
		name, method, path, key, body string
		status                        int
		format                        string // envelope of an error answer; "" for a success
		limit                         string // "" = no rate headers (no known key)
	}{
		{"model list", "GET", "/v1/models", env.Key, "", 200, "", "100"},
		{"one model", "GET", "/v1/models/chat", env.Key, "", 200, "", "100"},
		{"unknown model record", "GET", "/v1/models/nope", env.Key, "", 404, "chat", "100"},
		{"chat, unknown model", "POST", "/v1/chat/completions", env.Key, `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, "chat", "100"},
		{"chat, invalid body", "POST", "/v1/chat/completions", env.Key, `{"model":`, 400, "chat", "100"},
		{"chat, key restriction", "POST", "/v1/chat/completions", restricted, hello, 403, "chat", "100"},
		{"chat, body too large", "POST", "/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"` + strings.Repeat("a", 70000) + `"}]}`, 413, "chat", "100"},
		{"chat, coding agent required", "POST", "/v1/chat/completions", coder, hello, 403, "chat", "50"},
		{"messages, unknown model", "POST", "/v1/messages", env.Key, `{"model":"nope","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 404, "messages", "100"},
		{"messages, token count", "POST", "/v1/messages/count_tokens", env.Key, `{"model":"chat","messages":[{"role":"user","content":"hi"}]}`, 200, "", "100"},
		{"responses, invalid body", "POST", "/v1/responses", env.Key, `{"model":"chat","input":`, 400, "chat", "100"},
		{"embeddings, wrong kind", "POST", "/v1/embeddings", env.Key, `{"model":"chat","input":"x"}`, 400, "chat", "100"},
		{"images, no prompt", "POST", "/v1/images/generations", env.Key, `{"model":"img"}`, 400, "chat", "100"},
		{"videos, unknown model", "POST", "/v1/videos", env.Key, `{"model":"nope","prompt":"p","mode":"text"}`, 404, "chat", "100"},
		{"video poll, unknown task", "GET", "/v1/videos/video_nope?model=vid", env.Key, "", 404, "chat", "100"},
		{"video poll, no model", "GET", "/v1/videos/video_nope", env.Key, "", 400, "chat", "100"},
		{"gemini model list", "GET", "/v1beta/models", env.Key, "", 200, "", "100"},
		{"gemini one model", "GET", "/v1beta/models/chat", env.Key, "", 200, "", "100"},
		{"gemini, unknown model", "POST", "/v1beta/models/nope:generateContent", env.Key, gemHello, 404, "google", "100"},
		{"gemini, invalid body", "POST", "/v1beta/models/chat:generateContent", env.Key, `{"contents":`, 400, "google", "100"},
		{"gemini token count", "POST", "/v1beta/models/chat:countTokens", env.Key, gemHello, 200, "", "100"},
		{"gemini, unknown method", "POST", "/v1beta/models/chat:embedContent", env.Key, gemHello, 404, "google", "100"},
		{"unknown key", "POST", "/v1/chat/completions", unknown, hello, 401, "chat", ""},
		{"no key", "GET", "/v1/models", "", "", 401, "chat", ""},
		{"unknown path", "POST", "/v2/chat/completions", env.Key, hello, 404, "chat", ""},
		{"wrong method", "GET", "/v1/chat/completions", env.Key, "", 405, "chat", ""},
		{"wrong method, messages", "PUT", "/v1/messages", env.Key, "", 405, "messages", ""},
		{"wrong method, gemini", "DELETE", "/v1beta/models", env.Key, "", 405, "google", ""},
		{"admin without its token", "GET", adminListener + "/admin/v1/accounts", "", "", 401, "chat", ""},
		{"admin, unknown account", "GET", adminListener + "/admin/v1/accounts/acct_nope", nodetest.AdminToken, "", 404, "chat", ""},
		{"admin, invalid body", "POST", adminListener + "/admin/v1/accounts", nodetest.AdminToken, `{"email":`, 400, "chat", ""},
		{"admin on the public port", "GET", "/admin/v1/accounts", nodetest.AdminToken, "", 404, "chat", ""},
	}
	// budgetNow is the key's budget as a model list shows it: the reference each answer's
	// headers must equal (the list itself takes nothing, as the rows show).
	budgetNow := func(key string) rateHeaders {
		resp := env.Do(http.MethodGet, "/v1/models", key, "")
		nodetest.Read(t, resp)
		return rateOf(resp)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var resp *http.Response
			if path, ok := strings.CutPrefix(c.path, adminListener); ok {
				resp = env.DoAdmin(c.method, path, c.key, c.body)
			} else {
				resp = env.Do(c.method, c.path, c.key, c.body)
			}
			raw := nodetest.Read(t, resp)
			id := resp.Header.Get("X-Request-Id")
			if resp.StatusCode != c.status || !requestIDPattern.MatchString(id) {
				t.Fatalf("%d X-Request-Id %q, want %d and an id: %s", resp.StatusCode, id, c.status, raw)
			}
			if c.format != "" {
				if e := readEnvelope(t, raw); e.Format != c.format || e.RequestID != id {
					t.Errorf("envelope %s with request id %q, want %s with %q: %s", e.Format, e.RequestID, c.format, id, raw)
				}
			}
			got := rateOf(resp)
			if c.limit == "" {
				if got != (rateHeaders{}) {
					t.Errorf("rate headers %+v on an answer to no known key", got)
				}
				return
			}
			want := budgetNow(c.key)
			if got.limit != c.limit || got != want {
				t.Errorf("rate headers %+v, want limit %s and the budget a model list shows: %+v", got, c.limit, want)
			}
			if reset, err := strconv.Atoi(got.reset); err != nil || reset < 0 || reset > 60 {
				t.Errorf("X-RateLimit-Reset %q, want the seconds until the minute frees a call", got.reset)
			}
		})
	}
	// The client errors among the rows count by the counting rule, a burst
	// slot each: the 404s of an unknown model (chat, messages, videos, gemini), the 400s of a
	// body (chat, responses, embeddings, images, gemini) and the 413 — ten. Reads, token
	// counts and refusals (401, 403) take nothing.
	if got := budgetNow(env.Key); got.remaining != "89" {
		t.Fatalf("after every row the budget is %+v, want 89 left: only the ten client errors take a slot", got)
	}
	if n := env.Sim.Calls("a") + env.Sim.Calls("b"); n != 1 {
		t.Fatalf("the upstream was called %d times, want only the admitted call", n)
	}
}
