package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// countingCatalog is the default catalog with the messages model counting 2 calls, and
// plans to count on: "counting" (room for everything), "tight" (a burst of 1), "spent" (a
// window of 1 call, no credits), "interactive" (no automated clients), "daily" (one image
// and one 5-second video a day).
var countingCatalog = strings.Replace(nodetest.DefaultCatalog, "  - id: msg\n    kind: chat\n", "  - id: msg\n    kind: chat\n    quota_multiplier: 2\n", 1) + `
plans:
  - {name: counting, window_requests: 50, weekly_requests: 500, burst_rpm: 50, allow_automated: true, image_daily_limit: 1}
  - {name: tight, window_requests: 50, burst_rpm: 1, allow_automated: true}
  - {name: spent, window_requests: 1, burst_rpm: 50, allow_automated: true}
  - {name: interactive, window_requests: 50, burst_rpm: 50}
  - {name: daily, window_requests: 50, burst_rpm: 50, allow_automated: true, image_daily_limit: 1, video_daily_seconds: 5}
`

// countedEndpoint is one client endpoint that calls a model.
type countedEndpoint struct {
	name   string
	model  string   // its model in countingCatalog
	routes []string // the model's routes
	units  int64    // what a call of the model counts
	path   func(model string) string
	body   func(model string) string
	bad    string // a body the gateway refuses before any upstream is called
}

func jsonPath(p string) func(string) string { return func(string) string { return p } }

func geminiPath(method string) func(string) string {
	return func(m string) string { return "/v1beta/models/" + m + ":" + method }
}

var countedEndpoints = []countedEndpoint{
	{"chat", "chat", []string{"a", "b"}, 1000, jsonPath("/v1/chat/completions"),
		func(m string) string { return `{"model":"` + m + `","messages":[{"role":"user","content":"hi"}]}` }, `{"model":"chat","messages":"hi"}`},
	{"chat stream", "chat", []string{"a", "b"}, 1000, jsonPath("/v1/chat/completions"),
		func(m string) string {
			return `{"model":"` + m + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
		}, `{"model":"chat","stream":true}`},
	{"messages", "msg", []string{"m"}, 2000, jsonPath("/v1/messages"),
		func(m string) string {
			return `{"model":"` + m + `","max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`
		}, `{"model":"msg","max_tokens":32}`},
	{"messages stream", "msg", []string{"m"}, 2000, jsonPath("/v1/messages"),
		func(m string) string {
			return `{"model":"` + m + `","stream":true,"max_tokens":32,"messages":[{"role":"user","content":"hi"}]}`
		}, `{"model":"msg","stream":true,"max_tokens":-1,"messages":[{"role":"user","content":"hi"}]}`},
	{"responses", "resp", []string{"r"}, 1000, jsonPath("/v1/responses"),
		func(m string) string { return `{"model":"` + m + `","input":"hi"}` }, `{"model":"resp","input":5}`},
	{"responses stream", "resp", []string{"r"}, 1000, jsonPath("/v1/responses"),
		func(m string) string { return `{"model":"` + m + `","stream":true,"input":"hi"}` }, `{"model":"resp","stream":true,"input":{}}`},
	{"gemini", "gem", []string{"g"}, 1000, geminiPath("generateContent"),
		func(string) string { return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}` }, `{"contents":5}`},
	{"gemini stream", "gem", []string{"g"}, 1000, geminiPath("streamGenerateContent?alt=sse"),
		func(string) string { return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}` }, `{"contents":"x"}`},
	{"embeddings", "embed", []string{"e"}, 1000, jsonPath("/v1/embeddings"),
		func(m string) string { return `{"model":"` + m + `","input":["one"]}` }, `{"model":"embed"}`},
	{"images", "img", []string{"i"}, 1000, jsonPath("/v1/images/generations"),
		func(m string) string { return `{"model":"` + m + `","prompt":"a lighthouse"}` }, `{"model":"img"}`},
	{"videos", "vid", []string{"v"}, 1000, jsonPath("/v1/videos"),
		func(m string) string { return `{"model":"` + m + `","prompt":"waves","mode":"text","seconds":"5"}` }, `{"model":"vid"}`},
}

// outcome is what one answer did to its account.
type outcome struct {
	status  int
	logged  bool  // the answer has a log entry
	counted bool  // the entry says it counted
	units   int64 // allowance it took (the window's move)
	slots   int64 // burst slots it took
}

// countingCase makes one answer of an endpoint; prepare runs first (not measured).
type countingCase struct {
	name    string
	plan    string
	prepare func(t *testing.T, c *countingCtx)
	call    func(c *countingCtx, t *testing.T) (status int, rid string)
	want    func(ep countedEndpoint) outcome
	only    func(ep countedEndpoint) bool // the endpoints that have such an answer (nil: all)
}

// countingCtx is one case's fresh account and key.
type countingCtx struct {
	env  *nodetest.Env
	ep   countedEndpoint
	acct persistence.Account
	key  string
}

func (c *countingCtx) post(t *testing.T, key, model, body string) (int, string) {
	t.Helper()
	resp := c.env.Post(c.ep.path(model), key, body)
	nodetest.Read(t, resp)
	return resp.StatusCode, resp.Header.Get("X-Request-Id")
}

func (c *countingCtx) good(t *testing.T) (int, string) {
	return c.post(t, c.key, c.ep.model, c.ep.body(c.ep.model))
}

// steer sets the behaviour of the endpoint's routes until the case ends.
func (c *countingCtx) steer(t *testing.T, b simulator.Behavior) {
	for _, r := range c.ep.routes {
		c.env.Sim.SetBehavior(r, b)
	}
	t.Cleanup(func() {
		for _, r := range c.ep.routes {
			c.env.Sim.SetBehavior(r, simulator.Behavior{})
		}
	})
}

var countingSeq atomic.Int64

// TestOneCountingRuleOnEveryEndpoint: on every endpoint that calls a model, an answer counts by
// one rule (docs/decisions.md, "Counting"): a served call counts the model's units and a burst
// slot; a client error — the gateway's 400, an unknown model's 404, the upstream's 400 — counts
// the same (one call when it names no model), even when the allowance is used up, at no cost; a
// refusal (401 of a revoked key, 403, 402, 429 of any kind) and a failure count nothing. Every
// answer to a known account is in the log, durably when the client has it (no wait before
// reading the store); count_tokens never counts and keeps no log.
func TestOneCountingRuleOnEveryEndpoint(t *testing.T) {
	env := nodetest.Start(t, countingCatalog, nodetest.Options{Plan: "counting"})
	served := func(ep countedEndpoint) outcome { return outcome{200, true, true, ep.units, 1} }
	clientError := func(status int, units int64) func(countedEndpoint) outcome {
		return func(ep countedEndpoint) outcome {
			if units < 0 { // the model's
				return outcome{status, true, true, ep.units, 1}
			}
			return outcome{status, true, true, units, 1}
		}
	}
	refused := func(status int) func(countedEndpoint) outcome {
		return func(countedEndpoint) outcome { return outcome{status, true, false, 0, 0} }
	}
	cases := []countingCase{
		{name: "served", plan: "counting", call: (*countingCtx).good, want: served},
		{name: "the gateway's 400", plan: "counting", want: clientError(400, -1), call: func(c *countingCtx, t *testing.T) (int, string) { return c.post(t, c.key, c.ep.model, c.ep.bad) }},
		{name: "an unknown model's 404", plan: "counting", want: clientError(404, 1000),
			call: func(c *countingCtx, t *testing.T) (int, string) {
				return c.post(t, c.key, "no-such-model", c.ep.body("no-such-model"))
			}},
		{name: "the upstream's 400", plan: "counting", want: clientError(400, -1),
			prepare: func(t *testing.T, c *countingCtx) { c.steer(t, simulator.Behavior{FailStatus: 400}) },
			call:    (*countingCtx).good},
		{name: "a client error with the allowance used up", plan: "spent", want: clientError(400, 0),
			prepare: func(t *testing.T, c *countingCtx) {
				if s, _ := c.good(t); s != 200 && s != 402 { // the 2-call model never fits the window of 1
					t.Fatalf("the call that uses the allowance: %d", s)
				}
			},
			call: func(c *countingCtx, t *testing.T) (int, string) { return c.post(t, c.key, c.ep.model, c.ep.bad) }},
		{name: "402 allowance used up", plan: "spent", want: refused(402),
			prepare: func(t *testing.T, c *countingCtx) { c.good(t) }, call: (*countingCtx).good},
		{name: "429 daily media limit", plan: "daily", want: refused(429),
			only: func(ep countedEndpoint) bool { return ep.name == "images" || ep.name == "videos" },
			prepare: func(t *testing.T, c *countingCtx) {
				if s, _ := c.good(t); s != 200 {
					t.Fatalf("the day's first: %d", s)
				}
			}, call: (*countingCtx).good},
		{name: "429 burst", plan: "tight", want: refused(429),
			prepare: func(t *testing.T, c *countingCtx) { c.good(t) }, call: (*countingCtx).good},
		{name: "403 key restriction", plan: "counting", want: refused(403),
			call: func(c *countingCtx, t *testing.T) (int, string) {
				other := "chat"
				if c.ep.model == "chat" {
					other = "embed"
				}
				_, secret, err := c.env.Node.Store.CreateKey(c.acct.ID, persistence.KeySpec{Name: "only", Models: []string{other}})
				if err != nil {
					t.Fatal(err)
				}
				return c.post(t, secret, c.ep.model, c.ep.body(c.ep.model))
			}},
		{name: "403 coding agent required", plan: "interactive", want: refused(403), call: (*countingCtx).good},
		{name: "401 revoked key", plan: "counting", want: refused(401),
			call: func(c *countingCtx, t *testing.T) (int, string) {
				k, _ := c.env.Node.Store.LookupKey(c.key)
				c.env.Node.Store.RevokeKey(k.ID)
				return c.good(t)
			}},
		{name: "upstream failure", plan: "counting", want: refused(502),
			prepare: func(t *testing.T, c *countingCtx) { c.steer(t, simulator.Behavior{FailStatus: 500}) },
			call:    (*countingCtx).good},
	}
	for _, ep := range countedEndpoints {
		for _, tc := range cases {
			if tc.only != nil && !tc.only(ep) {
				continue
			}
			t.Run(ep.name+"/"+tc.name, func(t *testing.T) {
				c := newCountingCtx(t, env, ep, tc.plan)
				if tc.prepare != nil {
					tc.prepare(t, c)
				}
				before := c.measure(t, "")
				status, rid := tc.call(c, t)
				after := c.measure(t, rid)
				want := tc.want(ep)
				got := outcome{status: status, logged: after.logged, counted: after.counted,
					units: after.units - before.units, slots: after.slots - before.slots}
				if got != want {
					t.Fatalf("got %+v, want %+v (request %s)", got, want, rid)
				}
				if after.cost != before.cost {
					t.Fatalf("spent %d pico-USD, want nothing", after.cost-before.cost)
				}
			})
		}
	}
}

func newCountingCtx(t *testing.T, env *nodetest.Env, ep countedEndpoint, plan string) *countingCtx {
	t.Helper()
	acct, err := env.Node.Store.CreateAccount(fmt.Sprintf("count%d@example.com", countingSeq.Add(1)), plan)
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := env.Node.Store.CreateKey(acct.ID, persistence.KeySpec{Name: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return &countingCtx{env: env, ep: ep, acct: acct, key: secret}
}

// measured is an account's counters, read from the store (what a crash would keep), and the
// log entry of one request.
type measured struct {
	units, slots, cost int64
	logged, counted    bool
}

func (c *countingCtx) measure(t *testing.T, rid string) measured {
	t.Helper()
	rec, _, err := c.env.Node.Store.LoadQuota(c.acct.ID)
	if err != nil {
		t.Fatal(err)
	}
	m := measured{units: rec.WindowUsed, cost: rec.Spent}
	logs, err := c.env.Node.Store.ListLog(c.acct.ID, time.Time{}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range logs {
		if l.Counted {
			m.slots++ // a counted call's entry is its burst slot
		}
		if rid != "" && l.RequestID == rid {
			m.logged, m.counted = true, l.Counted
		}
	}
	// The actor's view agrees with the disk.
	plan, _ := c.env.Node.Catalog.Load().Plan(c.acct.Plan)
	st, err := c.env.Node.Quota.State(context.Background(), c.acct.ID, plan)
	if err != nil {
		t.Fatal(err)
	}
	if st.Window.Used != m.units || (plan.BurstRPM > 0 && st.Burst.Limit-st.Burst.Remaining != m.slots) {
		t.Fatalf("the quota actor says window %d, burst %+v; the disk says %d units, %d counted entries", st.Window.Used, st.Burst, m.units, m.slots)
	}
	return m
}

// TestCountTokensNeverCounts: the token-count endpoints answer from the
// gateway's estimate and call no upstream: whatever they answer counts nothing and is not
// logged (coding clients count before every turn; counting would spend their allowance on
// their own bookkeeping).
func TestCountTokensNeverCounts(t *testing.T) {
	env := nodetest.Start(t, countingCatalog, nodetest.Options{Plan: "counting"})
	messagesCount := countedEndpoint{name: "messages count_tokens", path: jsonPath("/v1/messages/count_tokens"),
		body: func(m string) string { return `{"model":"` + m + `","messages":[{"role":"user","content":"hi"}]}` }}
	geminiCount := countedEndpoint{name: "gemini countTokens", path: geminiPath("countTokens"),
		body: func(string) string { return `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}` }}
	cases := []struct {
		ep     countedEndpoint
		model  string
		body   string
		status int
	}{
		{messagesCount, "msg", "", 200},
		{messagesCount, "msg", `{"model":"msg","messages":5}`, 400},
		{messagesCount, "no-such-model", "", 404},
		{geminiCount, "gem", "", 200},
		{geminiCount, "gem", `{"contents":5}`, 400},
		{geminiCount, "no-such-model", "", 404},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.ep.name, tc.status), func(t *testing.T) {
			c := newCountingCtx(t, env, tc.ep, "counting")
			body := tc.body
			if body == "" {
				body = tc.ep.body(tc.model)
			}
			before := c.measure(t, "")
			status, rid := c.post(t, c.key, tc.model, body)
			after := c.measure(t, rid)
			if status != tc.status || after.logged || after != before {
				t.Fatalf("status %d, before %+v, after %+v; want %d and nothing counted or logged", status, before, after, tc.status)
			}
		})
	}
}
