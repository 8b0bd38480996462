package main

// The kill -9 durability test of issue #4, run against real processes: the gateway binary
// (modelgate serve) and the standalone simulator (modelgate-sim), both built by the test.
// Under concurrent paid load the gateway is killed with SIGKILL, restarted on the same data
// directory, and the account must add up exactly:
//
//	balance == top-ups (each idempotency key once) − Σ cost_usd of the request log
//	spent   == Σ cost_usd
//
// and the plan allowance counters (window, weekly) must still hold the calls made before
// the crash.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

const (
	ktAdminToken = "mg-admin-killtest-0123456789abcdef"
	ktSimKeyEnv  = "KILLTEST_SIM_KEY"
	ktModel      = "kt-chat"
	ktPlan       = "killtest"
	ktPrompt     = "0.000001" // USD per input token
	ktCompletion = "0.000002" // USD per output token
	ktFreeCalls  = 3          // window_requests: calls beyond it are paid from credits
	ktWorkers    = 8
	ktMaxCalls   = 4000 // bound on the load, whatever the machine's speed
)

// ktCatalog is the gateway's catalog: one chat model on the simulator's route "a", exact
// per-token prices, and a plan whose tiny window allowance makes almost every call paid. The
// window is long (30 days) so that no reset happens during the test.
const ktCatalog = `server:
  connect_timeout: 5s
  first_byte_timeout: 10s
  idle_stream_timeout: 10s
models:
  - id: ` + ktModel + `
    kind: chat
    context_length: 100000
    max_output_tokens: 1000
    quota_multiplier: 1
    pricing: {prompt: "` + ktPrompt + `", completion: "` + ktCompletion + `"}
    routes:
      - {id: kt-a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: sim-model, credential_env: ` + ktSimKeyEnv + `}
plans:
  - name: ` + ktPlan + `
    window_requests: 3
    window: 720h
    weekly_requests: 1000
    burst_rpm: 0
    allow_automated: true
`

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

type ktAllowance struct {
	Used     float64 `json:"used"`
	Reserved float64 `json:"reserved"`
	Limit    int64   `json:"limit"`
	ResetsAt string  `json:"resets_at"`
}

type ktQuota struct {
	Balance  string      `json:"balance_usd"`
	Spent    string      `json:"spent_usd"`
	Held     string      `json:"held_usd"`
	Window   ktAllowance `json:"window"`
	Weekly   ktAllowance `json:"weekly"`
	InFlight int         `json:"in_flight"`
}

func (c *ktClient) quota(acct string) ktQuota {
	c.t.Helper()
	var q ktQuota
	c.admin(http.MethodGet, "/accounts/"+acct+"/quota", nil, 200, &q)
	return q
}

type ktEntry struct {
	RequestID    string `json:"request_id"`
	Time         int64  `json:"time"`
	KeyID        string `json:"key_id"`
	Model        string `json:"model"`
	Status       int    `json:"status"`
	InputTokens  int64  `json:"input_tokens"`
	CachedTokens int64  `json:"cached_tokens"`
	CacheWrite   int64  `json:"cache_write_tokens"`
	OutputTokens int64  `json:"output_tokens"`
	Reasoning    int64  `json:"reasoning_tokens"`
	Stream       bool   `json:"stream"`
	CostUSD      string `json:"cost_usd"`
	ListCostUSD  string `json:"list_cost_usd"`
}

// usage reads the account's whole request log, page by page (the API answers at most 1000
// entries per call, in ascending time order; from is inclusive, so the boundary entries
// are read twice and kept once).
func (c *ktClient) usage(acct string) []ktEntry {
	c.t.Helper()
	var all []ktEntry
	seen := map[string]bool{}
	from := ""
	for page := 0; ; page++ {
		if page > 100 {
			c.t.Fatal("usage: more than 100 pages")
		}
		path := "/accounts/" + acct + "/usage"
		if from != "" {
			path += "?from=" + url.QueryEscape(from)
		}
		var out struct {
			Data []ktEntry `json:"data"`
		}
		c.admin(http.MethodGet, path, nil, 200, &out)
		fresh := 0
		for _, e := range out.Data {
			id := fmt.Sprintf("%d/%s", e.Time, e.RequestID)
			if seen[id] {
				continue
			}
			seen[id] = true
			all = append(all, e)
			fresh++
		}
		if len(out.Data) < 1000 {
			if page > 0 {
				c.t.Logf("usage: %d entries read in %d pages", len(all), page+1)
			}
			return all
		}
		if fresh == 0 {
			c.t.Fatalf("usage: a full page of 1000 entries at one time %d; cannot page on", out.Data[0].Time)
		}
		from = time.Unix(0, out.Data[len(out.Data)-1].Time).UTC().Format(time.RFC3339Nano)
	}
}

// ktChatBody is a chat request whose answer has words words and whose prompt has
// 4+pad words (every word is an input token for the simulator).
func ktChatBody(words, pad int, stream, includeUsage bool) map[string]any {
	prompt := fmt.Sprintf("reply with %d words", words)
	for i := 0; i < pad; i++ {
		prompt += " pad"
	}
	body := map[string]any{"model": ktModel, "messages": []map[string]string{{"role": "user", "content": prompt}}}
	if stream {
		body["stream"] = true
		if includeUsage {
			body["stream_options"] = map[string]bool{"include_usage": true}
		}
	}
	return body
}

// chat sends one chat completion and returns the status and the gateway's request id.
func (c *ktClient) chat(key string, body map[string]any) (int, string, error) {
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.base+"/v1/chat/completions", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, resp.Header.Get("X-Request-Id"), err
	}
	if resp.StatusCode != 200 {
		return resp.StatusCode, resp.Header.Get("X-Request-Id"), fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	if body["stream"] == true && !bytes.Contains(raw, []byte("data: [DONE]")) {
		return resp.StatusCode, resp.Header.Get("X-Request-Id"), errors.New("stream without data: [DONE]")
	}
	return resp.StatusCode, resp.Header.Get("X-Request-Id"), nil
}

func TestKillTestBalanceSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("kill -9 durability test: builds and runs the gateway and simulator binaries (skipped with -short)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("kill -9 durability test needs POSIX signals")
	}
	began := time.Now()
	gatewayBin, simBin := ktBuild(t)
	t.Logf("built binaries in %v", time.Since(began).Round(time.Millisecond))
	tmp := t.TempDir()
	dataDir := filepath.Join(tmp, "data")

	// The simulator, on a port of its choosing; its routes answer at once, except that
	// every answer waits 2 ms and streams are paced, so calls are in flight at the kill.
	_, simBase := ktStart(t, "modelgate-sim", simBin, nil, regexp.MustCompile(`modelgate-sim listening.* base_url=(http://\S+)`), "--addr", "127.0.0.1:0")
	sim := &ktClient{t: t, base: simBase, http: &http.Client{Timeout: 10 * time.Second}}
	if status, raw, err := sim.do(http.MethodPut, "/_sim/routes/a", "", map[string]any{"first_byte_ms": 2, "tokens_per_second": 2000}); err != nil || status != 200 {
		t.Fatalf("steer simulator route: %d %s %v", status, raw, err)
	}

	catPath := filepath.Join(tmp, "catalog.yaml")
	if err := os.WriteFile(catPath, []byte(strings.ReplaceAll(ktCatalog, "{{SIM}}", simBase)), 0o600); err != nil {
		t.Fatal(err)
	}
	gwEnv := []string{"MODELGATE_ADMIN_TOKEN=" + ktAdminToken, ktSimKeyEnv + "=sim-secret", "MODELGATE_LOG_LEVEL=info"}
	servingRe := regexp.MustCompile(`"msg":"modelgate serving".*"url":"(http://[^"]+)"`)
	startGateway := func(name string) (*ktProc, *ktClient) {
		p, base := ktStart(t, name, gatewayBin, gwEnv, servingRe, "serve", "--config", catPath, "--data", dataDir, "--addr", "127.0.0.1:0")
		c := &ktClient{t: t, base: base, http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 2 * ktWorkers}}}
		c.waitHealthy()
		return p, c
	}
	gw, c := startGateway("modelgate (first run)")

	// Account, key, and idempotent top-ups.
	var acct struct {
		ID string `json:"id"`
	}
	c.admin(http.MethodPost, "/accounts", map[string]string{"email": "kill@test.local", "plan": ktPlan}, 201, &acct)
	var key struct {
		Secret string `json:"key"`
	}
	c.admin(http.MethodPost, "/accounts/"+acct.ID+"/keys", map[string]string{"name": "load"}, 201, &key)
	if r := c.credit(acct.ID, "5.00", "k1"); !r.Added || ktAmount(t, r.Balance) != ktAmount(t, "5") {
		t.Fatalf("top-up k1: %+v, want added, balance 5", r)
	}
	if r := c.credit(acct.ID, "5.00", "k1"); r.Added || ktAmount(t, r.Balance) != ktAmount(t, "5") {
		t.Fatalf("top-up k1 again: %+v, want not added, balance 5", r)
	}
	if r := c.credit(acct.ID, "2.50", "k2"); !r.Added || ktAmount(t, r.Balance) != ktAmount(t, "7.5") {
		t.Fatalf("top-up k2: %+v, want added, balance 7.5", r)
	}
	c.admin(http.MethodPost, "/accounts/"+acct.ID+"/credits", map[string]string{"amount_usd": "9.00", "idempotency_key": "k1"}, 409, nil)

	// The window allowance: three sequential in-plan calls, settled (the gateway settles
	// after answering, so wait for the counters).
	for i := 0; i < ktFreeCalls; i++ {
		if status, rid, err := c.chat(key.Secret, ktChatBody(5+i, i, i == 1, false)); err != nil {
			t.Fatalf("in-plan call %d: %d %s %v", i, status, rid, err)
		}
	}
	ktWaitFor(t, "the in-plan calls to settle", func() bool {
		q := c.quota(acct.ID)
		return q.Window.Used == ktFreeCalls && q.Weekly.Used == ktFreeCalls && q.InFlight == 0
	})
	before := c.quota(acct.ID)
	if ktAmount(t, before.Balance) != ktAmount(t, "7.5") || ktAmount(t, before.Spent) != 0 {
		t.Fatalf("after the in-plan calls: %+v, want balance 7.5, nothing spent", before)
	}

	// Load: paid calls from ktWorkers goroutines, plain and streamed, until the kill.
	var (
		stop     atomic.Bool
		sent     atomic.Int64 // requests started
		ok       atomic.Int64 // answered 200 in full
		failed   atomic.Int64 // transport errors or incomplete answers (the kill)
		badMu    sync.Mutex
		bad      []string // unexpected answers before the kill
		wg       sync.WaitGroup
		killedAt atomic.Int64
	)
	for w := 0; w < ktWorkers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for !stop.Load() && sent.Add(1) <= ktMaxCalls {
				stream := rng.IntN(3) == 0
				status, rid, err := c.chat(key.Secret, ktChatBody(rng.IntN(40), rng.IntN(20), stream, rng.IntN(2) == 0))
				switch {
				case err == nil:
					ok.Add(1)
				case status == 0 || killedAt.Load() != 0:
					failed.Add(1) // the gateway is gone
					return
				default:
					badMu.Lock()
					bad = append(bad, fmt.Sprintf("%s: %d %v", rid, status, err))
					badMu.Unlock()
				}
			}
		}(w)
	}

	// The kill: after a random 0.2-1.3 s of load (and at least 50 answers), snapshot the
	// durable request log, send a top-up, and SIGKILL the gateway while it is in flight.
	loadStart := time.Now()
	delay := 200*time.Millisecond + rand.N(1100*time.Millisecond)
	ktWaitFor(t, "the load to get going", func() bool { return time.Since(loadStart) >= delay && ok.Load() >= 50 })
	snapshot := c.usage(acct.ID)
	type k3Result struct {
		status int
		raw    []byte
		err    error
	}
	k3 := make(chan k3Result, 1)
	go func() {
		status, raw, err := c.do(http.MethodPost, "/admin/v1/accounts/"+acct.ID+"/credits", ktAdminToken,
			map[string]string{"amount_usd": "1.25", "idempotency_key": "k3"})
		k3 <- k3Result{status, raw, err}
	}()
	time.Sleep(rand.N(1500 * time.Microsecond))
	killedAt.Store(time.Now().UnixNano())
	if err := gw.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("kill -9: %v", err)
	}
	<-gw.done
	loadTime := time.Since(loadStart)
	stop.Store(true)
	wg.Wait()
	k3r := <-k3
	k3Acked := false
	if k3r.err == nil && k3r.status == 200 {
		var r ktCredit
		if err := json.Unmarshal(k3r.raw, &r); err != nil {
			t.Fatalf("top-up k3 answer %s: %v", k3r.raw, err)
		}
		if !r.Added {
			t.Fatalf("top-up k3 before the kill: %s, want added", k3r.raw)
		}
		k3Acked = true
	} else if k3r.err == nil {
		t.Fatalf("top-up k3 before the kill: %d %s", k3r.status, k3r.raw)
	}
	if ws, ok := gw.err.(*exec.ExitError); !ok || ws.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("gateway ended with %v, want killed by SIGKILL", gw.err)
	}
	if len(bad) > 0 {
		t.Errorf("unexpected answers under load before the kill (%d), first: %s", len(bad), bad[0])
	}
	t.Logf("load: %d answered, %d cut by the kill, in %v; %d log entries durable just before the kill; k3 acknowledged: %v",
		ok.Load(), failed.Load(), loadTime.Round(time.Millisecond), len(snapshot), k3Acked)

	// Restart on the same data directory.
	_, c = startGateway("modelgate (after kill -9)")
	r3 := c.credit(acct.ID, "1.25", "k3")
	if k3Acked && r3.Added {
		t.Errorf("top-up k3 was acknowledged before the kill, and re-sending it after the restart added it again: %+v", r3)
	}
	if r := c.credit(acct.ID, "5.00", "k1"); r.Added {
		t.Errorf("top-up k1 re-sent after the restart was added again: %+v", r)
	}
	topUps := ktAmount(t, "5.00") + ktAmount(t, "2.50") + ktAmount(t, "1.25")

	prompt, completion := ktAmount(t, ktPrompt), ktAmount(t, ktCompletion)
	// check asserts the invariants over the whole log; it returns the log.
	check := func(what string) []ktEntry {
		t.Helper()
		log := c.usage(acct.ID)
		q := c.quota(acct.ID)
		var sum money.Amount
		free := 0
		ids := map[string]bool{}
		for _, e := range log {
			if ids[e.RequestID] {
				t.Errorf("%s: request %s is in the log twice", what, e.RequestID)
			}
			ids[e.RequestID] = true
			cost, list := ktAmount(t, e.CostUSD), ktAmount(t, e.ListCostUSD)
			want := prompt.Times(e.InputTokens) + completion.Times(e.OutputTokens)
			if e.Status != 200 || e.Model != ktModel || e.CachedTokens != 0 || e.CacheWrite != 0 || e.Reasoning != 0 ||
				e.InputTokens < 4 || list != want || (cost != 0 && cost != list) {
				t.Errorf("%s: log entry %+v: want status 200, list cost %s (= %d in × %s + %d out × %s), cost 0 or the list cost",
					what, e, want, e.InputTokens, prompt, e.OutputTokens, completion)
			}
			if cost == 0 {
				free++
			}
			sum += cost
		}
		balance, spent := ktAmount(t, q.Balance), ktAmount(t, q.Spent)
		if balance != topUps-sum {
			t.Errorf("%s: balance %s, want top-ups %s − Σ cost_usd %s = %s (over %d log entries; off by %s)",
				what, balance, topUps, sum, topUps-sum, len(log), balance-(topUps-sum))
		}
		if spent != sum {
			t.Errorf("%s: spent_usd %s, want Σ cost_usd %s", what, spent, sum)
		}
		if q.InFlight != 0 || ktAmount(t, q.Held) != 0 || q.Window.Reserved != 0 || q.Weekly.Reserved != 0 {
			t.Errorf("%s: in flight %d, held %s, reserved %v/%v: want nothing in flight after the restart", what, q.InFlight, q.Held, q.Window.Reserved, q.Weekly.Reserved)
		}
		// The allowance: every in-plan call that settled is a cost-0 entry written in the
		// same batch as its count, and only the ktFreeCalls warm-up calls fitted the plan.
		if q.Window.ResetsAt != before.Window.ResetsAt || q.Weekly.ResetsAt != before.Weekly.ResetsAt {
			t.Logf("%s: a window or week boundary passed during the test (%s/%s → %s/%s): counters not checked",
				what, before.Window.ResetsAt, before.Weekly.ResetsAt, q.Window.ResetsAt, q.Weekly.ResetsAt)
		} else if q.Window.Used != ktFreeCalls || q.Weekly.Used != ktFreeCalls || free != ktFreeCalls {
			t.Errorf("%s: window used %v, weekly used %v, cost-0 log entries %d; want %d each (the allowance used before the kill)",
				what, q.Window.Used, q.Weekly.Used, free, ktFreeCalls)
		}
		return log
	}
	log := check("after kill -9 and restart")

	// Nothing durable before the kill is lost or changed.
	byID := map[string]ktEntry{}
	for _, e := range log {
		byID[e.RequestID] = e
	}
	for _, e := range snapshot {
		if got, ok := byID[e.RequestID]; !ok {
			t.Errorf("log entry %s (cost %s) was readable before the kill and is gone after the restart", e.RequestID, e.CostUSD)
		} else if got != e {
			t.Errorf("log entry changed across the kill: %+v, then %+v", e, got)
		}
	}
	// Every entry is one upstream call: nothing was logged that the simulator did not serve.
	var route struct {
		Calls int64 `json:"calls"`
	}
	if status, raw, err := sim.do(http.MethodGet, "/_sim/routes/a", "", nil); err != nil || status != 200 || json.Unmarshal(raw, &route) != nil {
		t.Fatalf("simulator route: %d %s %v", status, raw, err)
	}
	if int64(len(log)) > route.Calls {
		t.Errorf("%d log entries, but the simulator served %d calls", len(log), route.Calls)
	}
	if len(log) < ktFreeCalls+1 {
		t.Errorf("only %d log entries survived; want the %d in-plan calls and the paid ones settled before the kill (%d in the snapshot)",
			len(log), ktFreeCalls, len(snapshot))
	}

	// The allowance survived: the next call is paid, at exactly its list cost.
	status, rid, err := c.chat(key.Secret, ktChatBody(7, 3, false, false))
	if err != nil {
		t.Fatalf("call after the restart: %d %s %v", status, rid, err)
	}
	var after ktEntry
	ktWaitFor(t, "the call after the restart to be logged", func() bool {
		for _, e := range c.usage(acct.ID) {
			if e.RequestID == rid {
				after = e
				return true
			}
		}
		return false
	})
	if cost := ktAmount(t, after.CostUSD); cost == 0 || cost != ktAmount(t, after.ListCostUSD) {
		t.Errorf("call after the restart: cost %s, list cost %s; want paid at the list cost (the window allowance of %d is used up)",
			after.CostUSD, after.ListCostUSD, ktFreeCalls)
	}
	check("after one more paid call")
	t.Logf("total %v; %d log entries; k3 re-sent after restart added: %v", time.Since(began).Round(time.Millisecond), len(log), r3.Added)
}
