package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// Models for provider refusals: "two" has a first route and a standby; "hint-*" one route of
// each upstream format; "paid-*" a route of each format that will refuse for billing, with a
// healthy chat standby; "solo" one messages route.
const refusalCatalog = `
server: {first_byte_timeout: 2s, idle_stream_timeout: 2s}
models:
  - id: two
    kind: chat
    max_output_tokens: 64
    routes:
      - {id: p, format: chat, base_url: "{{SIM}}/r/p/v1", credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: s, format: chat, base_url: "{{SIM}}/r/s/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: hint-chat
    kind: chat
    routes: [{id: hc, format: chat, base_url: "{{SIM}}/r/hc/v1", credential_env: NODETEST_SIM_KEY}]
  - id: hint-messages
    kind: chat
    max_output_tokens: 64
    routes: [{id: hm, format: messages, base_url: "{{SIM}}/r/hm/v1", credential_env: NODETEST_SIM_KEY}]
  - id: hint-gemini
    kind: chat
    max_output_tokens: 64
    routes: [{id: hg, format: gemini, base_url: "{{SIM}}/r/hg/v1beta", credential_env: NODETEST_SIM_KEY}]
  - id: paid-chat
    kind: chat
    routes:
      - {id: pc, format: chat, base_url: "{{SIM}}/r/pc/v1", credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: bc, format: chat, base_url: "{{SIM}}/r/bc/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: paid-messages
    kind: chat
    max_output_tokens: 64
    routes:
      - {id: pm, format: messages, base_url: "{{SIM}}/r/pm/v1", credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: bm, format: chat, base_url: "{{SIM}}/r/bm/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: paid-gemini
    kind: chat
    max_output_tokens: 64
    routes:
      - {id: pg, format: gemini, base_url: "{{SIM}}/r/pg/v1beta", credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: bg, format: chat, base_url: "{{SIM}}/r/bg/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: solo
    kind: chat
    max_output_tokens: 64
    routes: [{id: so, format: messages, base_url: "{{SIM}}/r/so/v1", credential_env: NODETEST_SIM_KEY}]
`

func newRefusalEnv(t *testing.T) (*nodetest.Env, *testutil.Clock, *nodetest.LogBuffer) {
	clk := testutil.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	logs := &nodetest.LogBuffer{}
	p := routehealth.Policy{MaxFails: 2, BaseCooldown: 10 * time.Second, MaxCooldown: time.Minute, RateLimited: 5 * time.Second,
		BillingCooldown: 15 * time.Minute, Now: clk.Now}
	env := nodetest.Start(t, refusalCatalog, nodetest.Options{Health: p, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	return env, clk, logs
}

// clientCall is one request in a client format.
type clientCall struct {
	format string
	path   string
	body   func(model string) string
}

var (
	chatCall     = clientCall{"chat", "/v1/chat/completions", chatBody}
	messagesCall = clientCall{"messages", "/v1/messages", func(m string) string {
		return `{"model":"` + m + `","max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`
	}}
	streamCall = clientCall{"chat", "/v1/chat/completions", func(m string) string {
		return `{"model":"` + m + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	}}
	responsesCall = clientCall{"responses", "/v1/responses", func(m string) string { return `{"model":"` + m + `","input":"hi"}` }}
)

// overloaded checks an all-cooling answer: the status, Retry-After and the error type of
// the client's envelope.
func overloaded(t *testing.T, env *nodetest.Env, c clientCall, model string, status int, retryAfter string) []byte {
	t.Helper()
	resp := env.Post(c.path, env.Key, c.body(model))
	raw := nodetest.Read(t, resp)
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(raw, &e)
	want := map[string]string{"chat": "overloaded_error", "messages": "overloaded_error", "responses": "service_unavailable_error"}[c.format]
	if resp.StatusCode != status || resp.Header.Get("Retry-After") != retryAfter || e.Error.Type != want ||
		!strings.Contains(e.Error.Message, "retry in "+retryAfter+" s") || c.format == "messages" && e.Type != "error" {
		t.Fatalf("%s client: %d Retry-After %q %s; want %d, Retry-After %s, %s", c.format, resp.StatusCode, resp.Header.Get("Retry-After"), raw, status, retryAfter, want)
	}
	return raw
}

func calls(env *nodetest.Env, routes ...string) int64 {
	var n int64
	for _, r := range routes {
		n += env.Sim.Calls(r)
	}
	return n
}

// Two routes rate-limited with different hints: the answer is overloaded (529; 503 for
// responses clients) with Retry-After = the shorter real remaining cooldown, from the very
// request that met the last 429, and counting down on later ones.
func TestEveryRouteCoolingAnswersEarliestCooldown(t *testing.T) {
	env, clk, _ := newRefusalEnv(t)
	env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 429, RetryAfter: 120})
	env.Sim.SetBehavior("s", simulator.Behavior{FailStatus: 429, RetryAfter: 3})

	overloaded(t, env, chatCall, "two", 529, "3")
	if calls(env, "p", "s") != 2 {
		t.Fatalf("calls p=%d s=%d, want one each", env.Sim.Calls("p"), env.Sim.Calls("s"))
	}
	clk.Add(1200 * time.Millisecond)
	overloaded(t, env, messagesCall, "two", 529, "2")
	overloaded(t, env, responsesCall, "two", 503, "2")
	overloaded(t, env, chatCall, "two", 529, "2")
	if calls(env, "p", "s") != 2 {
		t.Fatal("a cooling route was called")
	}
	// s's 3 s are over: it is tried again, refuses again, and cools for its 3 s again.
	clk.Add(1800 * time.Millisecond)
	overloaded(t, env, chatCall, "two", 529, "3")
	if env.Sim.Calls("s") != 2 || env.Sim.Calls("p") != 1 {
		t.Fatalf("calls p=%d s=%d, want s retried once", env.Sim.Calls("p"), env.Sim.Calls("s"))
	}
	// Once p's 120 s are over it serves again.
	env.Sim.SetBehavior("p", simulator.Behavior{})
	clk.Add(117 * time.Second)
	if resp := env.Post("/v1/chat/completions", env.Key, chatBody("two")); resp.StatusCode != 200 {
		t.Fatalf("after the cooldown: %d %s", resp.StatusCode, nodetest.Read(t, resp))
	} else {
		nodetest.Read(t, resp)
	}
	metrics := env.Metrics()
	for _, line := range []string{`modelgate_upstream_refusals_total{reason="rate_limit",route="p"} 1`,
		`modelgate_upstream_refusals_total{reason="rate_limit",route="s"} 2`,
		`modelgate_upstream_attempts_total{outcome="rate_limited",route="s"} 2`} {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}

// Every provider's own retry hint becomes the route's cooldown, with no Retry-After header:
// Gemini's RetryInfo in the body (34.4 s, rounded up), OpenAI's retry-after-ms, Anthropic's
// rate-limit reset (an RFC 3339 time in whole seconds, so up to a second longer).
func TestProviderRetryHintsBecomeCooldowns(t *testing.T) {
	cases := []struct {
		model, route string
		delay        time.Duration
		min, max     time.Duration
	}{
		{"hint-gemini", "hg", 34400 * time.Millisecond, 35 * time.Second, 35 * time.Second},
		{"hint-chat", "hc", 2500 * time.Millisecond, 2500 * time.Millisecond, 2500 * time.Millisecond},
		{"hint-messages", "hm", 4 * time.Second, 4 * time.Second, 5 * time.Second},
	}
	env, clk, _ := newRefusalEnv(t)
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			env.Sim.SetBehavior(c.route, simulator.Behavior{FailKind: simulator.FailRetryHint, RetryDelay: c.delay})
			resp := env.Post("/v1/chat/completions", env.Key, chatBody(c.model))
			raw := nodetest.Read(t, resp)
			st := env.Node.Board.State(c.route)
			if st == nil {
				t.Fatal("no state")
			}
			cooldown := st.CooldownUntil.Sub(clk.Now())
			if cooldown < c.min || cooldown > c.max || st.Reason != routehealth.ReasonRateLimit || st.Probing {
				t.Fatalf("cooldown %v reason %q probing %v, want %v..%v rate_limit", cooldown, st.Reason, st.Probing, c.min, c.max)
			}
			if want := strconv.Itoa(int((cooldown + time.Second - 1) / time.Second)); resp.StatusCode != 529 || resp.Header.Get("Retry-After") != want {
				t.Fatalf("%d Retry-After %q, want 529 %s: %s", resp.StatusCode, resp.Header.Get("Retry-After"), want, raw)
			}
			nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody(c.model)))
			if env.Sim.Calls(c.route) != 1 {
				t.Fatalf("the cooling route was called %d times", env.Sim.Calls(c.route))
			}
		})
	}
}

// providerWords are phrases of the simulator's refusals that must never reach a client.
var providerWords = []string{"credit balance", "current quota", "billing", "simulated", "Plans & Billing"}

// A billing refusal on route A, in each provider's words, is failed over to B without the
// client noticing; A rests for the long cooldown, and the operator sees it in the log, the
// route-health view and /metrics.
func TestBillingRefusalFailsOverInvisibly(t *testing.T) {
	cases := []struct {
		model, refusing, standby, format string
		delay                            time.Duration // the provider's (misleading) short hint
		message                          string
	}{
		{"paid-chat", "pc", "bc", "chat", 0, "You exceeded your current quota, please check your plan and billing details (simulated)."},
		{"paid-messages", "pm", "bm", "messages", 0, "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits. (simulated)"},
		{"paid-gemini", "pg", "bg", "gemini", 47 * time.Second, "You exceeded your current quota, please check your plan and billing details (simulated)."},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			env, clk, logs := newRefusalEnv(t)
			env.Sim.SetBehavior(c.refusing, simulator.Behavior{FailKind: simulator.FailQuota, RetryDelay: c.delay})
			const canary = "CANARY-billing-7e2d" // the prompt, which no log line may carry
			for i := 0; i < 2; i++ {
				for _, cl := range []clientCall{chatCall, streamCall, messagesCall} {
					resp := env.Post(cl.path, env.Key, strings.Replace(cl.body(c.model), `"hi"`, `"`+canary+`"`, 1))
					raw := string(nodetest.Read(t, resp))
					if resp.StatusCode != 200 {
						t.Fatalf("%s client: %d %s", cl.format, resp.StatusCode, raw)
					}
					for _, w := range providerWords {
						if strings.Contains(raw, w) {
							t.Fatalf("the client saw the provider's %q: %s", w, raw)
						}
					}
				}
			}
			if !strings.Contains(string(env.Sim.LastRequest(c.standby)), canary) {
				t.Fatal("the prompt did not reach the upstream")
			}
			if env.Sim.Calls(c.refusing) != 1 || env.Sim.Calls(c.standby) != 6 {
				t.Fatalf("calls %s=%d %s=%d, want the refusing route tried once", c.refusing, env.Sim.Calls(c.refusing), c.standby, env.Sim.Calls(c.standby))
			}
			st := env.Node.Board.State(c.refusing)
			if st.CooldownUntil.Sub(clk.Now()) != 15*time.Minute || st.Reason != routehealth.ReasonBilling || st.Refusal != c.message || st.Probing {
				t.Fatalf("state %+v, want billing cooldown of 15m", st)
			}
			// The clock stands still, so the log's order among the six says nothing: one call
			// (the first) took two attempts, every one was served by the standby.
			l, attempts := usage(t, env), 0
			for _, e := range l {
				if e.Status != 200 || e.Route != c.standby {
					t.Fatalf("log %+v", l)
				}
				attempts += e.Attempts
			}
			if len(l) != 6 || attempts != 7 {
				t.Fatalf("log %+v", l)
			}

			var warned bool
			for _, line := range strings.Split(logs.String(), "\n") {
				if strings.Contains(line, "level=WARN") && strings.Contains(line, "route="+c.refusing) &&
					strings.Contains(line, "format="+c.format) && strings.Contains(line, "provider_message="+strconv.Quote(c.message)) &&
					strings.Contains(line, "billing") {
					warned = true
				}
				if strings.Contains(line, canary) {
					t.Fatalf("a log line carries the prompt: %s", line)
				}
			}
			if !warned {
				t.Fatalf("no WARN line naming the route, format and message:\n%s", logs.String())
			}

			var view struct {
				Data []struct {
					Route          string     `json:"route"`
					Model          string     `json:"model"`
					Format         string     `json:"format"`
					Available      bool       `json:"available"`
					CooldownUntil  *time.Time `json:"cooldown_until"`
					CooldownSecs   int        `json:"cooldown_remaining_seconds"`
					CooldownReason *string    `json:"cooldown_reason"`
					LastRefusal    *struct {
						Message string    `json:"message"`
						At      time.Time `json:"at"`
					} `json:"last_refusal"`
					Successes, Failures uint64
				} `json:"data"`
			}
			resp := env.Admin(http.MethodGet, "/admin/v1/routes", "")
			if err := json.Unmarshal(nodetest.Read(t, resp), &view); err != nil || resp.StatusCode != 200 {
				t.Fatalf("admin routes: %d %v", resp.StatusCode, err)
			}
			seen := 0
			for _, r := range view.Data {
				switch r.Route {
				case c.refusing:
					seen++
					if r.Available || r.Model != c.model || r.Format != c.format || r.CooldownSecs != 900 || r.CooldownUntil == nil ||
						!r.CooldownUntil.Equal(clk.Now().Add(15*time.Minute)) || r.CooldownReason == nil || *r.CooldownReason != "billing" ||
						r.LastRefusal == nil || r.LastRefusal.Message != c.message || !r.LastRefusal.At.Equal(clk.Now()) || r.Failures != 1 || r.Successes != 0 {
						t.Fatalf("refusing route in the view: %+v", r)
					}
				case c.standby:
					seen++
					if !r.Available || r.CooldownUntil != nil || r.CooldownReason != nil || r.LastRefusal != nil || r.Successes != 6 {
						t.Fatalf("standby route in the view: %+v", r)
					}
				}
			}
			if seen != 2 || len(view.Data) != 12 {
				t.Fatalf("view has %d routes (%d of the two): %+v", len(view.Data), seen, view.Data)
			}
			metrics := env.Metrics()
			for _, line := range []string{`modelgate_upstream_refusals_total{reason="billing",route="` + c.refusing + `"} 1`,
				`modelgate_upstream_attempts_total{outcome="refused",route="` + c.refusing + `"} 1`,
				`modelgate_route_available{route="` + c.refusing + `"} 0`} {
				if !strings.Contains(metrics, line+"\n") {
					t.Errorf("/metrics lacks %s", line)
				}
			}
		})
	}
}

// With no route left, a billing refusal is an overloaded answer (all cooling, Retry-After the
// real cooldown) or, next to a real failure, a 502 — never the provider's words.
func TestBillingRefusalWithNoRouteLeft(t *testing.T) {
	env, clk, _ := newRefusalEnv(t)
	env.Sim.SetBehavior("so", simulator.Behavior{FailKind: simulator.FailQuota})
	raw := overloaded(t, env, chatCall, "solo", 529, "900")
	clk.Add(30 * time.Second)
	raw = append(raw, overloaded(t, env, messagesCall, "solo", 529, "870")...)
	raw = append(raw, overloaded(t, env, responsesCall, "solo", 503, "870")...)
	for _, w := range providerWords {
		if bytes.Contains(raw, []byte(w)) {
			t.Fatalf("a client saw the provider's %q: %s", w, raw)
		}
	}
	if env.Sim.Calls("so") != 1 {
		t.Fatalf("the refusing route was called %d times", env.Sim.Calls("so"))
	}

	env.Sim.SetBehavior("pc", simulator.Behavior{FailKind: simulator.FailQuota})
	env.Sim.SetBehavior("bc", simulator.Behavior{FailStatus: 500})
	resp := env.Post("/v1/chat/completions", env.Key, chatBody("paid-chat"))
	body := nodetest.Read(t, resp)
	var e errorBody
	json.Unmarshal(body, &e)
	if resp.StatusCode != 502 || e.Error.Type != "upstream_error" || resp.Header.Get("Retry-After") != "" || bytes.Contains(body, []byte("quota")) {
		t.Fatalf("billing and a 500: %d %s", resp.StatusCode, body)
	}
}
