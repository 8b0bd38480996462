package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// plansCatalog is the default test catalog with plans small enough to reach in a test.
var plansCatalog = nodetest.DefaultCatalog + `
plans:
  - {name: demo, allow_automated: true}
  - {name: burst5, window_requests: 1000, burst_rpm: 5, allow_automated: true}
  - {name: window2, window_requests: 2, burst_rpm: 100, allow_automated: true}
  - {name: strict, window_requests: 1000, burst_rpm: 100}
`

func limitsEnv(t *testing.T, plan string) *nodetest.Env {
	return nodetest.Start(t, plansCatalog, nodetest.Options{Plan: plan})
}

type limitBody struct {
	Error struct {
		Type              string `json:"type"`
		Code              string `json:"code"`
		Message           string `json:"message"`
		RetryAfterSeconds int    `json:"retry_after_seconds"`
		MaxRPM            int    `json:"max_rpm"`
		ResetsAt          string `json:"resets_at"`
	} `json:"error"`
}

func TestBurstLimit(t *testing.T) {
	env := limitsEnv(t, "burst5")
	for i := 1; i <= 5; i++ {
		resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
		nodetest.Read(t, resp)
		if resp.StatusCode != 200 || resp.Header.Get("X-RateLimit-Limit") != "5" || resp.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(5-i) {
			t.Fatalf("call %d: %d limit=%q remaining=%q", i, resp.StatusCode, resp.Header.Get("X-RateLimit-Limit"), resp.Header.Get("X-RateLimit-Remaining"))
		}
		if reset, _ := strconv.Atoi(resp.Header.Get("X-RateLimit-Reset")); reset < 59 || reset > 60 {
			t.Fatalf("X-RateLimit-Reset %q, want the window's roll in about 60 s", resp.Header.Get("X-RateLimit-Reset"))
		}
	}
	calls := env.Sim.Calls("a") + env.Sim.Calls("b")
	resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
	var body limitBody
	json.Unmarshal(nodetest.Read(t, resp), &body)
	retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != 429 || retry < 59 || retry > 60 || body.Error.Type != "rate_limit_error" || body.Error.Code != "burst_limit_exceeded" ||
		body.Error.RetryAfterSeconds != retry || body.Error.MaxRPM != 5 || resp.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("%d Retry-After=%q %+v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	if env.Sim.Calls("a")+env.Sim.Calls("b") != calls {
		t.Fatal("a refused call reached the upstream")
	}
	// The messages endpoint gives the same refusal in its own envelope.
	resp = env.Post("/v1/messages", env.Key, `{"model":"chat","max_tokens":10,"messages":[{"role":"user","content":"x"}]}`, "anthropic-version", "2023-06-01")
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 429 || !strings.HasPrefix(raw, `{"type":"error","error":{"type":"rate_limit_error"`) || !strings.Contains(raw, `"retry_after_seconds":`) || !strings.Contains(raw, `"max_rpm":5`) {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
}

func TestAllowanceThenCredits(t *testing.T) {
	env := limitsEnv(t, "window2")
	for i := 0; i < 2; i++ {
		nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
	}
	resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
	var body limitBody
	json.Unmarshal(nodetest.Read(t, resp), &body)
	if resp.StatusCode != 402 || body.Error.Code != "window_allowance_exhausted" || body.Error.ResetsAt == "" {
		t.Fatalf("%d %+v", resp.StatusCode, body)
	}
	// A top-up (the same idempotency key twice adds once) pays for calls beyond the plan.
	for i := 0; i < 2; i++ {
		r := env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"1.00","idempotency_key":"topup-1"}`)
		raw := string(nodetest.Read(t, r))
		if r.StatusCode != 200 || !strings.Contains(raw, `"balance_usd":"1"`) {
			t.Fatalf("top-up %d: %d %s", i, r.StatusCode, raw)
		}
	}
	resp = env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"reply with 10 words"}]}`)
	nodetest.Read(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("paid call: %d", resp.StatusCode)
	}
	// 4 input words at 0.000001 and 10 output words at 0.000002: 0.000024 charged exactly.
	e := usage(t, env)
	last := e[len(e)-1]
	if last.ChargedUSD != "0.000024" || last.CostUSD != "0.000024" || e[0].ChargedUSD != "0" {
		t.Fatalf("charges: %+v", e)
	}
	r := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", "")
	var q struct {
		Balance string `json:"balance_usd"`
		Spent   string `json:"spent_usd"`
		Window  struct {
			Used  float64 `json:"used"`
			Limit int64   `json:"limit"`
		} `json:"window"`
	}
	json.Unmarshal(nodetest.Read(t, r), &q)
	if q.Balance != "0.999976" || q.Spent != "0.000024" || q.Window.Used != 2 || q.Window.Limit != 2 {
		t.Fatalf("quota %+v", q)
	}
}

func TestUpstreamFailureIsRefunded(t *testing.T) {
	env := limitsEnv(t, "window2")
	env.Sim.SetBehavior("a", simulator.Behavior{FailStatus: 500})
	env.Sim.SetBehavior("b", simulator.Behavior{FailStatus: 500})
	for i := 0; i < 3; i++ {
		resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
		nodetest.Read(t, resp)
		if resp.StatusCode != 502 && resp.StatusCode != 529 {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	env.WaitIdle()
	r := env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", "")
	raw := string(nodetest.Read(t, r))
	if !strings.Contains(raw, `"window":{"used":0,`) {
		t.Fatalf("failed calls counted: %s", raw)
	}
}

func TestCodingAgentRequired(t *testing.T) {
	env := limitsEnv(t, "strict")
	cases := []struct {
		ua     string
		status int
	}{
		{"curl/8.5.0", 403},
		{"", 403},
		{"python-requests/2.32", 403},
		{"claude-cli/2.1.0 (external, cli)", 200},
		{"codex_cli_rs/0.132.0 (Linux; x86_64)", 200},
	}
	for _, c := range cases {
		resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"), "User-Agent", c.ua)
		raw := string(nodetest.Read(t, resp))
		if resp.StatusCode != c.status || c.status == 403 && !strings.Contains(raw, "coding agent required") {
			t.Errorf("UA %q: %d %s", c.ua, resp.StatusCode, raw)
		}
	}
}

func TestContextRules(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	long := strings.Repeat("word ", 4000) // about 5000 tokens by the estimate, the window is 1000
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","messages":[{"role":"user","content":"`+long+`"}]}`)
	raw := string(nodetest.Read(t, resp))
	if resp.StatusCode != 400 || !strings.Contains(raw, `"code":"context_length_exceeded"`) || !strings.Contains(raw, "context window of 1000 tokens") {
		t.Fatalf("%d %s", resp.StatusCode, raw)
	}
	// More max_tokens than the model writes is served as its maximum, and said so.
	resp = env.Post("/v1/chat/completions", env.Key, `{"model":"chat","max_tokens":5000,"messages":[{"role":"user","content":"hi"}]}`)
	nodetest.Read(t, resp)
	route := "a"
	if env.Sim.Calls("b") > 0 {
		route = "b"
	}
	var fwd struct {
		MaxTokens int `json:"max_tokens"`
	}
	json.Unmarshal(env.Sim.LastRequest(route), &fwd)
	if resp.StatusCode != 200 || resp.Header.Get("X-Max-Tokens") != "100" || fwd.MaxTokens != 100 {
		t.Fatalf("%d X-Max-Tokens=%q forwarded %d", resp.StatusCode, resp.Header.Get("X-Max-Tokens"), fwd.MaxTokens)
	}
}

// The admission reads the account's plan from the store's cache of plans: every plan change,
// disable and enable through the admin API applies to the very next call, though the calls
// before it cached the plan.
func TestTheNextCallAfterAnAccountChangeSeesIt(t *testing.T) {
	env := nodetest.Start(t, plansCatalog+"  - {name: burst50, burst_rpm: 50, allow_automated: true}\n", nodetest.Options{Plan: "demo"})
	steps := []struct {
		name, method, path, body string
		status                   int
		code, rateLimit          string
	}{
		{"on demo", "", "", "", 200, "", ""},
		{"moved to strict (interactive clients only)", http.MethodPut, "/plan", `{"plan":"strict"}`, 403, "coding_agent_required", "100"},
		{"moved to burst50", http.MethodPut, "/plan", `{"plan":"burst50"}`, 200, "", "50"},
		{"disabled", http.MethodPost, "/disable", "", 403, "account_disabled", ""},
		{"enabled", http.MethodPost, "/enable", "", 200, "", "50"},
		{"back on demo", http.MethodPut, "/plan", `{"plan":"demo"}`, 200, "", ""},
	}
	for _, st := range steps {
		if st.method != "" {
			r := env.Admin(st.method, "/admin/v1/accounts/"+env.Account.ID+st.path, st.body)
			if raw := nodetest.Read(t, r); r.StatusCode != 200 {
				t.Fatalf("%s: admin call %d %s", st.name, r.StatusCode, raw)
			}
		}
		for i := range 2 { // the second call reads the plan cached by the first
			resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
			var body limitBody
			json.Unmarshal(nodetest.Read(t, resp), &body)
			if resp.StatusCode != st.status || body.Error.Code != st.code || resp.Header.Get("X-RateLimit-Limit") != st.rateLimit {
				t.Fatalf("%s, call %d: %d %q X-RateLimit-Limit %q; want %d %q %q", st.name, i+1, resp.StatusCode, body.Error.Code,
					resp.Header.Get("X-RateLimit-Limit"), st.status, st.code, st.rateLimit)
			}
		}
	}
}
