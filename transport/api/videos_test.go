package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// videoCatalog is the default catalog (model vid on route v, USD 0.05 per output second)
// with two more video models: vid2 on a first route vp and a standby vs, vsolo on route vo
// alone; plan demo and plan one, whose window holds one call.
var videoCatalog = strings.Replace(nodetest.DefaultCatalog, "  - id: embed\n", `  - id: vid2
    kind: video
    pricing: {prompt: "0", completion: "0.05"}
    routes:
      - {id: vp, format: chat, base_url: "{{SIM}}/r/vp/v1", credential_env: NODETEST_SIM_KEY, weight: 1}
      - {id: vs, format: chat, base_url: "{{SIM}}/r/vs/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: vsolo
    kind: video
    pricing: {prompt: "0", completion: "0.05"}
    routes:
      - {id: vo, format: chat, base_url: "{{SIM}}/r/vo/v1", credential_env: NODETEST_SIM_KEY}
  - id: embed
`, 1) + `
plans:
  - {name: demo, allow_automated: true}
  - {name: one, window_requests: 1, allow_automated: true}
`

// videoEnv starts a node on videoCatalog with the account on plan one, route health on a
// fixed clock (billing cooldown 15 min, rate limits at least 5 s), topped up with topUp
// USD ("" = none); burn spends the plan's one call first, so a video is beyond the plan.
func videoEnv(t *testing.T, topUp string, burn bool) *nodetest.Env {
	t.Helper()
	clk := testutil.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	p := routehealth.Policy{MaxFails: 2, BaseCooldown: 10 * time.Second, MaxCooldown: time.Minute, RateLimited: 5 * time.Second,
		BillingCooldown: 15 * time.Minute, Now: clk.Now}
	env := nodetest.Start(t, videoCatalog, nodetest.Options{Plan: "one", Health: p, Logger: slog.New(slog.DiscardHandler)})
	if topUp != "" {
		env.Admin(http.MethodPost, "/admin/v1/accounts/"+env.Account.ID+"/credits", `{"amount_usd":"`+topUp+`","idempotency_key":"t"}`).Body.Close()
	}
	if burn {
		if resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat")); resp.StatusCode != 200 {
			t.Fatalf("the plan's call: %d", resp.StatusCode)
		}
		env.WaitIdle()
	}
	return env
}

// videoQuotaView is the admin view of the env's account, the parts a video moves.
type videoQuotaView struct {
	Balance string `json:"balance_usd"`
	Spent   string `json:"spent_usd"`
	Held    string `json:"held_usd"`
	Window  struct {
		Used float64 `json:"used"`
	} `json:"window"`
	Video struct {
		Used     int64 `json:"used"`
		Reserved int64 `json:"reserved"`
	} `json:"video_seconds"`
}

func (q videoQuotaView) String() string {
	return "balance " + q.Balance + " spent " + q.Spent + " held " + q.Held
}

func readVideoQuota(t *testing.T, env *nodetest.Env) videoQuotaView {
	t.Helper()
	env.WaitIdle()
	var q videoQuotaView
	raw := nodetest.Read(t, env.Admin(http.MethodGet, "/admin/v1/accounts/"+env.Account.ID+"/quota", ""))
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatalf("quota %s: %v", raw, err)
	}
	return q
}

func postVideo(t *testing.T, env *nodetest.Env, model, seconds string) (*http.Response, []byte, videoTask) {
	t.Helper()
	resp := env.Post("/v1/videos", env.Key, `{"model":"`+model+`","prompt":"a wave","mode":"text","seconds":"`+seconds+`"}`)
	raw := nodetest.Read(t, resp)
	var task videoTask
	json.Unmarshal(raw, &task)
	return resp, raw, task
}

// settledVideo polls the task until it ended and its billing is written.
func settledVideo(t *testing.T, env *nodetest.Env, model, id string) videoTask {
	t.Helper()
	var task videoTask
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if rec, err := env.Node.Store.GetTask(id); err == nil && rec.Settled {
			// Read after the record settled: an answer read before could predate it (a CI
			// run saw "queued" from a GET made just before the resumed task completed).
			json.Unmarshal(nodetest.Read(t, env.Do(http.MethodGet, "/v1/videos/"+id+"?model="+model, env.Key, "")), &task)
			return task
		}
		json.Unmarshal(nodetest.Read(t, env.Do(http.MethodGet, "/v1/videos/"+id+"?model="+model, env.Key, "")), &task)
	}
	t.Fatalf("task %s never settled: %+v", id, task)
	return task
}

// videoLoggedCost is the sum of the costs in the account's request log.
func videoLoggedCost(t *testing.T, env *nodetest.Env) money.Amount {
	t.Helper()
	env.WaitIdle()
	entries, err := env.Node.Store.ListLog(env.Account.ID, time.Time{}, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sum money.Amount
	for _, e := range entries {
		sum += money.Amount(e.Cost)
	}
	return sum
}

func dollars(t *testing.T, s string) money.Amount {
	t.Helper()
	a, err := money.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Video is never free. A video counts its quota_multiplier against the plan's window and its
// seconds against the daily limit; within the plan it costs no credits; beyond it, the
// model's rate × the requested seconds is held from the credits at creation (402 up front,
// with resets_at, when they cannot hold it) and the output seconds are charged on completed
// — never more than held, the rest released; a failed task releases its hold; a restart
// loses no hold and bills once.
func TestVideoIsNeverFree(t *testing.T) {
	cases := []struct {
		name      string
		topUp     string
		burn      bool
		behavior  simulator.Behavior
		restart   bool
		status    int    // of the create
		code      string // of a refused create
		heldAt    string // right after the create
		end       string // the task's end state
		charged   string
		videoUsed int64
		window    float64 // calls counted in the window at the end
	}{
		{name: "within the plan, funded: no credits", topUp: "1", status: 200, heldAt: "0", end: "completed", charged: "0", videoUsed: 6, window: 1},
		{name: "within the plan, unfunded: the plan pays", status: 200, heldAt: "0", end: "completed", charged: "0", videoUsed: 6, window: 1},
		{name: "beyond the plan: the requested seconds held, the output seconds charged", topUp: "1", burn: true,
			behavior: simulator.Behavior{VideoOutputSeconds: 4}, status: 200, heldAt: "0.3", end: "completed", charged: "0.2", videoUsed: 4, window: 1},
		{name: "beyond the plan: a full clip charges the whole hold", topUp: "1", burn: true,
			status: 200, heldAt: "0.3", end: "completed", charged: "0.3", videoUsed: 6, window: 1},
		{name: "beyond the plan, a restart between creation and completion: held throughout, billed once", topUp: "1", burn: true,
			behavior: simulator.Behavior{VideoDuration: 1500 * time.Millisecond}, restart: true, status: 200, heldAt: "0.3", end: "completed", charged: "0.3", videoUsed: 6, window: 1},
		{name: "beyond the plan, the task fails: the hold is released", topUp: "1", burn: true,
			behavior: simulator.Behavior{VideoFailFraction: 1}, status: 200, heldAt: "0.3", end: "failed", charged: "0", videoUsed: 0, window: 1},
		{name: "beyond the plan, no credits: 402 up front", burn: true, status: 402, code: "window_allowance_exhausted", window: 1},
		{name: "beyond the plan, credits short of the price: 402 up front", topUp: "0.25", burn: true, status: 402, code: "insufficient_credits", window: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := videoEnv(t, c.topUp, c.burn)
			if c.behavior.VideoDuration == 0 {
				c.behavior.VideoDuration = 200 * time.Millisecond
			}
			env.Sim.SetBehavior("v", c.behavior)
			topUp := dollars(t, "0")
			if c.topUp != "" {
				topUp = dollars(t, c.topUp)
			}
			resp, raw, task := postVideo(t, env, "vid", "6")
			if resp.StatusCode != c.status {
				t.Fatalf("create: %d %s", resp.StatusCode, raw)
			}
			if c.status != 200 {
				var e limitBody
				json.Unmarshal(raw, &e)
				q := readVideoQuota(t, env)
				if e.Error.Code != c.code || e.Error.Type != "insufficient_quota" || e.Error.ResetsAt == "" ||
					dollars(t, q.Held) != 0 || q.Video.Reserved != 0 || q.Window.Used != c.window || env.Sim.Calls("v") != 0 {
					t.Fatalf("refusal %s; quota %s window %v video %+v; upstream calls %d", raw, q, q.Window.Used, q.Video, env.Sim.Calls("v"))
				}
				return
			}
			if q := readVideoQuota(t, env); dollars(t, q.Held) != dollars(t, c.heldAt) || dollars(t, q.Balance) != topUp || q.Video.Reserved != 6 {
				t.Fatalf("after the create: %s, video %+v; want held %s", q, q.Video, c.heldAt)
			}
			if c.restart {
				env.Restart()
				if q := readVideoQuota(t, env); dollars(t, q.Held) != dollars(t, c.heldAt) {
					t.Fatalf("after a restart: %s; want held %s", q, c.heldAt)
				}
			}
			task = settledVideo(t, env, "vid", task.ID)
			if task.Status != c.end {
				t.Fatalf("task %+v", task)
			}
			for round := 0; round < 2; round++ { // and the same after a restart
				q := readVideoQuota(t, env)
				if dollars(t, q.Held) != 0 || dollars(t, q.Spent) != dollars(t, c.charged) || dollars(t, q.Balance) != topUp-dollars(t, c.charged) ||
					q.Video.Used != c.videoUsed || q.Video.Reserved != 0 || q.Window.Used != c.window {
					t.Fatalf("round %d: %s, window %v, video %+v; want charged %s", round, q, q.Window.Used, q.Video, c.charged)
				}
				if got := videoLoggedCost(t, env); got != dollars(t, c.charged) {
					t.Fatalf("round %d: the log says %s was charged, want %s", round, got, c.charged)
				}
				env.Restart()
			}
		})
	}
}

// An upstream that refuses a video at creation is an error at creation —
// 529 with the real Retry-After when every route is cooling down, 502 when a route failed,
// the route's own 400 when it refused the request itself — with nothing counted and nothing
// left reserved, and no task; a refusing route is cooled and the job made on the next.
func TestVideoRefusedAtCreationIsAnErrorAtCreation(t *testing.T) {
	cases := []struct {
		name       string
		model      string
		routes     map[string]simulator.Behavior
		topUp      string
		burn       bool // beyond the plan: the price is held before the upstream is asked
		status     int
		retryAfter string
		errType    string
		calls      map[string]int64 // upstream calls per route when the create is answered
	}{
		{name: "the only route refuses for billing: 529 for its cooldown", model: "vsolo",
			routes: map[string]simulator.Behavior{"vo": {FailKind: simulator.FailQuota}},
			status: 529, retryAfter: "900", errType: "overloaded_error", calls: map[string]int64{"vo": 1}},
		{name: "the only route answers 402: 529 for its cooldown", model: "vsolo",
			routes: map[string]simulator.Behavior{"vo": {FailStatus: 402}},
			status: 529, retryAfter: "900", errType: "overloaded_error", calls: map[string]int64{"vo": 1}},
		{name: "the only route is rate-limited: 529 for its hint", model: "vsolo",
			routes: map[string]simulator.Behavior{"vo": {FailStatus: 429, RetryAfter: 7}},
			status: 529, retryAfter: "7", errType: "overloaded_error", calls: map[string]int64{"vo": 1}},
		{name: "the only route fails: 502", model: "vsolo",
			routes: map[string]simulator.Behavior{"vo": {FailStatus: 500}},
			status: 502, errType: "upstream_error", calls: map[string]int64{"vo": 1}},
		{name: "the route refuses the request itself: its 400", model: "vsolo",
			routes: map[string]simulator.Behavior{"vo": {FailStatus: 400}},
			status: 400, errType: "invalid_request_error", calls: map[string]int64{"vo": 1}},
		{name: "beyond the plan, the only route refuses: the price held is released", model: "vsolo", topUp: "1", burn: true,
			routes: map[string]simulator.Behavior{"vo": {FailKind: simulator.FailQuota}},
			status: 529, retryAfter: "900", errType: "overloaded_error", calls: map[string]int64{"vo": 1}},
		{name: "a refusing route and a standby: the job is made on the standby", model: "vid2",
			routes: map[string]simulator.Behavior{"vp": {FailKind: simulator.FailQuota}, "vs": {VideoDuration: 200 * time.Millisecond}},
			status: 200, calls: map[string]int64{"vp": 1, "vs": 1}},
		{name: "beyond the plan, a refusing route and a standby: made and charged once", model: "vid2", topUp: "1", burn: true,
			routes: map[string]simulator.Behavior{"vp": {FailStatus: 402}, "vs": {VideoDuration: 200 * time.Millisecond}},
			status: 200, calls: map[string]int64{"vp": 1, "vs": 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := videoEnv(t, c.topUp, c.burn)
			for route, b := range c.routes {
				env.Sim.SetBehavior(route, b)
			}
			before := readVideoQuota(t, env)
			resp, raw, task := postVideo(t, env, c.model, "6")
			var e limitBody
			json.Unmarshal(raw, &e)
			if resp.StatusCode != c.status || resp.Header.Get("Retry-After") != c.retryAfter || c.status != 200 && e.Error.Type != c.errType {
				t.Fatalf("create: %d Retry-After %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
			}
			for route, n := range c.calls {
				if got := env.Sim.Calls(route); got != n {
					t.Errorf("route %s called %d times at the answer, want %d", route, got, n)
				}
			}
			if c.status >= 500 && strings.Contains(string(raw), "simulated") {
				t.Errorf("the client saw the provider's words: %s", raw)
			}
			if c.status != 200 {
				q := readVideoQuota(t, env)
				open, _ := env.Node.Store.ListOpenTasks()
				if q.Window.Used != before.Window.Used && c.status >= 500 || q.Video.Reserved != 0 || q.Video.Used != 0 ||
					dollars(t, q.Held) != 0 || q.Balance != before.Balance || len(open) != 0 {
					t.Fatalf("after the refusal: %s window %v video %+v, %d open tasks; before %s window %v",
						q, q.Window.Used, q.Video, len(open), before, before.Window.Used)
				}
				return
			}
			task = settledVideo(t, env, c.model, task.ID)
			q := readVideoQuota(t, env)
			charged := "0"
			if c.burn {
				charged = "0.3"
			}
			if task.Status != "completed" || dollars(t, q.Spent) != dollars(t, charged) || dollars(t, q.Held) != 0 || q.Video.Used != 6 || env.Sim.Calls("vp") != 1 {
				t.Fatalf("task %+v; %s video %+v; the refusing route called %d times", task, q, q.Video, env.Sim.Calls("vp"))
			}
		})
	}
}
