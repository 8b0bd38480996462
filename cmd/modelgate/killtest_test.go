package main

// The kill -9 test, against real processes (killtest_proc_test.go): under
// concurrent load of every kind (killtest_load_test.go) on accounts of four plans, the gateway
// is killed with SIGKILL at a random moment, restarted on the same data directory, and every
// account must add up exactly, from the request log alone:
//
//	balance == top-ups (each idempotency key once) − Σ cost_usd;  spent == Σ cost_usd
//	window and weekly used == Σ allowance_calls of the entries in the current window / week
//	burst used == the counted entries of the last 60 s (up to the limit)
//	images used today == the image calls of today answered 200
//	every answer a client received in full is in the log exactly once, with its status
//
// and nothing written before the kill may change. TestKillTestLedgerSurvivesSIGKILL kills it
// three times; TestFaultKillNineTwentyTimes (build tag faults) twenty.

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

const (
	ktAdminToken = "mg-admin-killtest-DPHRZTTHPEfc8xYq0upBIQuFtm88reiS"
	ktSimKeyEnv  = "KILLTEST_SIM_KEY"
	ktWorkers    = 8
	ktWindow     = 720 * time.Hour // every plan's window: no reset during the test
)

// ktCatalog: one model per upstream format (the chat one also serves converted streams), an
// image model, and four plans: roomy (in the plan, a burst limit it may reach), tight (a
// burst of 30 a minute: 429s), paid (3 calls, then credits) and broke (25 calls, no credits:
// 402s). Every price is per token.
const ktCatalog = `server:
  connect_timeout: 5s
  first_byte_timeout: 10s
  idle_stream_timeout: 10s
models:
  - id: kt-chat
    kind: chat
    context_length: 100000
    max_output_tokens: 1000
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes: [{id: kt-a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: sim-model, credential_env: ` + ktSimKeyEnv + `}]
  - id: kt-msg
    kind: chat
    max_output_tokens: 1000
    quota_multiplier: 2
    pricing: {prompt: "0.000003", completion: "0.000015"}
    routes: [{id: kt-m, format: messages, base_url: "{{SIM}}/r/m/v1", upstream_model: sim-model, credential_env: ` + ktSimKeyEnv + `}]
  - id: kt-gem
    kind: chat
    max_output_tokens: 1000
    pricing: {prompt: "0.000001", completion: "0.000004"}
    routes: [{id: kt-g, format: gemini, base_url: "{{SIM}}/r/g/v1beta", upstream_model: sim-model, credential_env: ` + ktSimKeyEnv + `}]
  - id: kt-image
    kind: image
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes: [{id: kt-i, format: chat, base_url: "{{SIM}}/r/i/v1", upstream_model: sim-image, credential_env: ` + ktSimKeyEnv + `}]
plans:
  - {name: kt-roomy, window_requests: 1000000, window: 720h, weekly_requests: 10000000, burst_rpm: 1500, allow_automated: true, image_daily_limit: 1000000}
  - {name: kt-tight, window_requests: 1000000, window: 720h, burst_rpm: 30, allow_automated: true, image_daily_limit: 1000000}
  - {name: kt-paid, window_requests: 3, window: 720h, weekly_requests: 1000000, allow_automated: true, image_daily_limit: 1000000}
  - {name: kt-broke, window_requests: 25, window: 720h, allow_automated: true, image_daily_limit: 1000000}
`

// ktAccount is one account of the test, with the top-ups it was given.
type ktAccount struct {
	id, key, plan string
	burst         int64
	topUps        money.Amount
	answers       []ktAnswer // every answer received in full, all rounds
}

// expects reports whether a complete answer's status is one the account's plan gives.
func (a *ktAccount) expects(status int) bool {
	switch status {
	case http.StatusOK, http.StatusBadRequest:
		return true
	case http.StatusTooManyRequests:
		return a.burst > 0
	case http.StatusPaymentRequired:
		return a.plan == "kt-broke"
	}
	return false
}

// ktRun is one kill test: the processes, the accounts, and its figures.
type ktRun struct {
	t                         *testing.T
	gatewayBin, data, catalog string
	gw                        *ktProc
	c                         *ktClient
	accounts                  []*ktAccount
	sent, complete, checked   int64
	entries                   int
}

// TestKillTestLedgerSurvivesSIGKILL is the short version: three kills.
func TestKillTestLedgerSurvivesSIGKILL(t *testing.T) { runKillTest(t, 3) }

func runKillTest(t *testing.T, kills int) {
	if testing.Short() {
		t.Skip("kill -9 durability test: builds and runs the gateway and simulator binaries (skipped with -short)")
	}
	began := time.Now()
	gatewayBin, simBin := ktBuild(t)
	tmp := t.TempDir()
	// The simulator: every answer waits 2 ms and streams are paced, so calls are in flight
	// at the kill.
	_, simBase := ktStart(t, "modelgate-sim", simBin, nil, regexp.MustCompile(`modelgate-sim listening.* base_url=(http://\S+)`), "--addr", "127.0.0.1:0")
	sim := &ktClient{t: t, base: simBase, http: &http.Client{Timeout: 10 * time.Second}}
	for _, route := range []string{"a", "m", "g", "i"} {
		if status, raw, err := sim.do(http.MethodPut, "/_sim/routes/"+route, "", map[string]any{"first_byte_ms": 2, "tokens_per_second": 2000}); err != nil || status != 200 {
			t.Fatalf("steer simulator route %s: %d %s %v", route, status, raw, err)
		}
	}
	r := &ktRun{t: t, gatewayBin: gatewayBin, data: filepath.Join(tmp, "data"), catalog: filepath.Join(tmp, "catalog.yaml")}
	if err := os.WriteFile(r.catalog, []byte(strings.ReplaceAll(ktCatalog, "{{SIM}}", simBase)), 0o600); err != nil {
		t.Fatal(err)
	}
	r.start("first run")
	r.setUp()
	r.checkAll("before the load")
	for round := 1; round <= kills; round++ {
		r.round(round)
	}
	// After the last restart the gateway serves, and everything still adds up.
	paid := r.accounts[2]
	status, rid, body, err := r.c.call(paid.key, "/v1/chat/completions", `{"model":"kt-chat","messages":[{"role":"user","content":"reply with 7 words"}]}`)
	if err != nil || status != 200 {
		t.Fatalf("call after the last restart: %d %s %v", status, body, err)
	}
	paid.answers = append(paid.answers, ktAnswer{rid, status, "chat"})
	r.checkAll("after one more call")
	t.Logf("%d kills; %d requests sent, %d answers received in full, each found in the log exactly once with its status (%d checks); "+
		"%d log entries; every account's balance, spend, window, weekly, burst and images equal what its log implies; 0 mismatches; %v",
		kills, r.sent, r.complete, r.checked, r.entries, time.Since(began).Round(time.Second))
}

// start starts the gateway on the run's data directory.
func (r *ktRun) start(name string) {
	env := []string{"MODELGATE_ADMIN_TOKEN=" + ktAdminToken, ktSimKeyEnv + "=sim-secret", "MODELGATE_LOG_LEVEL=info"}
	servingRe := regexp.MustCompile(`"msg":"modelgate serving".*"url":"(http://[^"]+)","admin":"(http://[^"]+)"`)
	p, addrs := ktStart(r.t, "modelgate ("+name+")", r.gatewayBin, env, servingRe, "serve", "--config", r.catalog, "--data", r.data,
		"--addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")
	base, admin, _ := strings.Cut(addrs, " ")
	r.gw = p
	r.c = &ktClient{t: r.t, base: base, adminBase: admin, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * ktWorkers}}}
	r.c.waitHealthy()
}

// setUp creates the accounts, their keys and the paid account's idempotent top-ups.
func (r *ktRun) setUp() {
	for i, plan := range []string{"kt-roomy", "kt-tight", "kt-paid", "kt-broke"} {
		a := &ktAccount{plan: plan, burst: map[string]int64{"kt-roomy": 1500, "kt-tight": 30}[plan]}
		var acct struct {
			ID string `json:"id"`
		}
		r.c.admin(http.MethodPost, "/accounts", map[string]string{"email": fmt.Sprintf("kill%d@test.local", i), "plan": plan}, 201, &acct)
		var key struct {
			Secret string `json:"key"`
		}
		r.c.admin(http.MethodPost, "/accounts/"+acct.ID+"/keys", map[string]string{"name": "load"}, 201, &key)
		a.id, a.key = acct.ID, key.Secret
		r.accounts = append(r.accounts, a)
	}
	paid := r.accounts[2]
	for _, tc := range []struct {
		amount, key, balance string
		added                bool
	}{{"500.00", "k1", "500", true}, {"500.00", "k1", "500", false}, {"250.50", "k2", "750.5", true}} {
		if got := r.c.credit(paid.id, tc.amount, tc.key); got.Added != tc.added || ktAmount(r.t, got.Balance) != ktAmount(r.t, tc.balance) {
			r.t.Fatalf("top-up %s %s: %+v, want added %v, balance %s", tc.key, tc.amount, got, tc.added, tc.balance)
		}
	}
	r.c.admin(http.MethodPost, "/accounts/"+paid.id+"/credits", map[string]string{"amount_usd": "9.00", "idempotency_key": "k1"}, 409, nil)
	paid.topUps = ktAmount(r.t, "750.5")
}

// round loads the gateway, kills it at a random moment (with a top-up in flight), restarts
// it and checks every account.
func (r *ktRun) round(n int) {
	t := r.t
	load := &ktLoad{}
	load.run(r.c, r.accounts, ktWorkers)
	began := time.Now()
	delay := 200*time.Millisecond + rand.N(1100*time.Millisecond)
	ktWaitFor(t, "the load to get going", func() bool { return time.Since(began) >= delay && load.complete.Load() >= 50 })
	snapshot := map[string][]ktEntry{}
	for _, a := range r.accounts {
		snapshot[a.id], _ = r.c.usage(a.id)
	}
	paid := r.accounts[2]
	topUp := fmt.Sprintf("kill-%d", n)
	acked := make(chan bool, 1)
	go func() {
		status, raw, err := r.c.doAdmin(http.MethodPost, "/admin/v1/accounts/"+paid.id+"/credits", ktAdminToken,
			map[string]string{"amount_usd": "0.25", "idempotency_key": topUp})
		var out ktCredit
		acked <- err == nil && status == 200 && json.Unmarshal(raw, &out) == nil && out.Added
	}()
	time.Sleep(rand.N(1500 * time.Microsecond))
	if err := r.gw.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	<-r.gw.done
	if ws, ok := r.gw.err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("gateway ended with %v, want killed by SIGKILL", r.gw.err)
	}
	load.halt()
	wasAcked := <-acked
	if len(load.odd) > 0 {
		t.Errorf("round %d: %d unexpected answers before the kill, first: %s", n, len(load.odd), load.odd[0])
	}
	r.sent += load.sent.Load()
	r.complete += load.complete.Load()
	for _, a := range r.accounts {
		a.answers = append(a.answers, load.answers[a.id]...)
	}
	t.Logf("round %d: %d sent, %d answered in full, %d cut by the kill after %v; the top-up in flight acknowledged: %v",
		n, load.sent.Load(), load.complete.Load(), load.cut.Load(), time.Since(began).Round(time.Millisecond), wasAcked)

	r.start(fmt.Sprintf("restart %d", n))
	if got := r.c.credit(paid.id, "0.25", topUp); wasAcked && got.Added {
		t.Errorf("round %d: the top-up acknowledged before the kill was added again when re-sent", n)
	}
	paid.topUps += ktAmount(t, "0.25") // applied exactly once, before the kill or now
	logs := r.checkAll(fmt.Sprintf("after kill %d", n))
	for _, a := range r.accounts {
		byID := map[string]ktEntry{}
		for _, e := range logs[a.id] {
			byID[e.RequestID] = e
		}
		for _, e := range snapshot[a.id] {
			if got, ok := byID[e.RequestID]; !ok || got != e {
				t.Errorf("round %d: entry %s was readable before the kill; after it: %+v (found %v)", n, e.RequestID, got, ok)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// ktEntry is a usage entry as the admin API gives it.
type ktEntry struct {
	RequestID      string  `json:"request_id"`
	Time           int64   `json:"time"`
	KeyID          string  `json:"key_id"`
	Model          string  `json:"model"`
	Status         int     `json:"status"`
	Stream         bool    `json:"stream"`
	Counted        bool    `json:"counted"`
	AllowanceCalls float64 `json:"allowance_calls"`
	CostUSD        string  `json:"cost_usd"`
	ListCostUSD    string  `json:"list_cost_usd"`
}

// usage reads an account's whole log through the usage API's cursor, and the totals it gives.
func (c *ktClient) usage(acct string) ([]ktEntry, string) {
	c.t.Helper()
	var all []ktEntry
	var total string
	q := url.Values{"limit": {"500"}}
	for page := 0; ; page++ {
		var out struct {
			Data       []ktEntry `json:"data"`
			NextCursor *string   `json:"next_cursor"`
			Total      string    `json:"total_cost_usd"`
		}
		c.admin(http.MethodGet, "/accounts/"+acct+"/usage?"+q.Encode(), nil, 200, &out)
		if page > 0 && out.Total != total {
			c.t.Fatalf("usage page %d totals %s, the first page's %s", page, out.Total, total)
		}
		total = out.Total
		all = append(all, out.Data...)
		if out.NextCursor == nil {
			return all, total
		}
		q.Set("cursor", *out.NextCursor)
	}
}

type ktView struct {
	Used     float64 `json:"used"`
	Reserved float64 `json:"reserved"`
	Limit    int64   `json:"limit"`
	ResetsAt string  `json:"resets_at"`
}

type ktQuota struct {
	Balance  string `json:"balance_usd"`
	Spent    string `json:"spent_usd"`
	Held     string `json:"held_usd"`
	Window   ktView `json:"window"`
	Weekly   ktView `json:"weekly"`
	Images   ktView `json:"images"`
	InFlight int    `json:"in_flight"`
	Burst    struct {
		Limit     int64 `json:"limit"`
		Remaining int64 `json:"remaining"`
	} `json:"burst"`
}

type ktCredit struct {
	Balance string `json:"balance_usd"`
	Added   bool   `json:"added"`
}

func (c *ktClient) credit(acct, amount, key string) ktCredit {
	c.t.Helper()
	var out ktCredit
	c.admin(http.MethodPost, "/accounts/"+acct+"/credits", map[string]string{"amount_usd": amount, "idempotency_key": key}, 200, &out)
	return out
}

// checkAll checks every account and returns their logs.
func (r *ktRun) checkAll(what string) map[string][]ktEntry {
	logs := map[string][]ktEntry{}
	r.entries = 0
	for _, a := range r.accounts {
		logs[a.id] = r.check(what, a)
		r.entries += len(logs[a.id])
	}
	return logs
}

// check asserts that an account's counters and money are what its log implies, and that
// every answer its clients received in full is in the log exactly once.
func (r *ktRun) check(what string, a *ktAccount) []ktEntry {
	t := r.t
	t.Helper()
	log, total := r.c.usage(a.id)
	before := time.Now()
	var q ktQuota
	r.c.admin(http.MethodGet, "/accounts/"+a.id+"/quota", nil, 200, &q)
	after := time.Now()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s, %s account: %s", what, a.plan, fmt.Sprintf(format, args...))
	}
	since := func(resets string, length time.Duration) int64 {
		at, err := time.Parse(time.RFC3339, resets)
		if err != nil {
			t.Fatalf("resets_at %q: %v", resets, err)
		}
		return at.Add(-length).UnixNano()
	}
	winFrom, weekFrom, dayFrom := since(q.Window.ResetsAt, ktWindow), since(q.Weekly.ResetsAt, 7*24*time.Hour), since(q.Images.ResetsAt, 24*time.Hour)
	var cost money.Amount
	var window, weekly, images, burstBefore, burstAfter int64
	seen := map[string]ktEntry{}
	for _, e := range log {
		if _, dup := seen[e.RequestID]; dup {
			fail("request %s is in the log twice", e.RequestID)
		}
		seen[e.RequestID] = e
		c, list := ktAmount(t, e.CostUSD), ktAmount(t, e.ListCostUSD)
		counts := e.Status < 400 || e.Status == 400 // the load's answers: served, or a bad body
		if e.Counted != counts || c != 0 && c != list || e.Status >= 400 && (c != 0 || list != 0) {
			fail("entry %+v: the counting rule says counted %v, cost 0 or the list cost, nothing for an error", e, counts)
		}
		cost += c
		units := int64(math.Round(e.AllowanceCalls * 1000))
		if e.Time >= winFrom {
			window += units
		}
		if e.Time >= weekFrom {
			weekly += units
		}
		if e.Model == "kt-image" && e.Status == 200 && e.Time >= dayFrom {
			images++
		}
		if e.Counted && e.Time > before.Add(-time.Minute).UnixNano() {
			burstBefore++
		}
		if e.Counted && e.Time > after.Add(-time.Minute).UnixNano() {
			burstAfter++
		}
	}
	if balance := ktAmount(t, q.Balance); balance != a.topUps-cost || ktAmount(t, q.Spent) != cost || ktAmount(t, total) != cost {
		fail("balance %s, spent %s, usage total %s; want top-ups %s − Σ cost_usd %s = %s, spent and total %s",
			q.Balance, q.Spent, total, a.topUps, cost, a.topUps-cost, cost)
	}
	if math.Round(q.Window.Used*1000) != float64(window) || math.Round(q.Weekly.Used*1000) != float64(weekly) {
		fail("window used %v, weekly used %v; the log's allowance_calls say %v and %v", q.Window.Used, q.Weekly.Used, float64(window)/1000, float64(weekly)/1000)
	}
	if q.Images.Used != float64(images) {
		fail("images used today %v; the log has %d image calls answered 200 today", q.Images.Used, images)
	}
	if a.burst > 0 {
		used := q.Burst.Limit - q.Burst.Remaining
		if q.Burst.Limit != a.burst || used < min(a.burst, burstAfter) || used > min(a.burst, burstBefore) {
			fail("burst %d of %d used; the log has %d–%d counted calls in the last minute", used, q.Burst.Limit, burstAfter, burstBefore)
		}
	}
	if q.InFlight != 0 || ktAmount(t, q.Held) != 0 || q.Window.Reserved != 0 || q.Weekly.Reserved != 0 || q.Images.Reserved != 0 {
		fail("in flight %d, held %s, reserved %v/%v/%v: want nothing in flight after a restart", q.InFlight, q.Held, q.Window.Reserved, q.Weekly.Reserved, q.Images.Reserved)
	}
	for _, ans := range a.answers {
		e, ok := seen[ans.rid]
		switch {
		case !ok:
			fail("the %s answer %s (%d) the client received in full is not in the log", ans.kind, ans.rid, ans.status)
		case e.Status != ans.status:
			fail("the %s answer %s: the client got %d, the log says %d", ans.kind, ans.rid, ans.status, e.Status)
		}
		r.checked++
	}
	return log
}
