package api_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// Route p is always tried first: s has weight 0, a standby used only when p cannot serve.
const failoverCatalog = `
server: {first_byte_timeout: 300ms, idle_stream_timeout: 2s}
models:
  - id: chat
    kind: chat
    pricing: {prompt: "0.000001", completion: "0.000002"}
    routes:
      - {id: p, format: chat, base_url: "{{SIM}}/r/p/v1", credential_env: NODETEST_SIM_KEY, weight: 1, zdr: true}
      - {id: s, format: chat, base_url: "{{SIM}}/r/s/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
  - id: unreachable
    kind: chat
    routes:
      - {id: dead, format: chat, base_url: "http://127.0.0.1:1/v1", weight: 1}
      - {id: s2, format: chat, base_url: "{{SIM}}/r/s2/v1", credential_env: NODETEST_SIM_KEY, weight: 0}
`

func newClockEnv(t *testing.T) (*nodetest.Env, *testutil.Clock) {
	clk := testutil.NewClock(time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC))
	p := routehealth.Policy{MaxFails: 2, BaseCooldown: 10 * time.Second, MaxCooldown: time.Minute, RateLimited: 5 * time.Second, Now: clk.Now}
	return nodetest.Start(t, failoverCatalog, nodetest.Options{Health: p}), clk
}

func chatBody(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
}

func TestFailoverOnEachFailureKind(t *testing.T) {
	cases := []struct {
		name     string
		model    string
		behavior simulator.Behavior
		first    string
		second   string
		stream   bool
	}{
		{"500", "chat", simulator.Behavior{FailStatus: 500}, "p", "s", false},
		{"503", "chat", simulator.Behavior{FailStatus: 503}, "p", "s", false},
		{"529", "chat", simulator.Behavior{FailStatus: 529}, "p", "s", false},
		{"429 with Retry-After", "chat", simulator.Behavior{FailStatus: 429, RetryAfter: 7}, "p", "s", false},
		{"first-byte time-out", "chat", simulator.Behavior{FirstByteDelay: 2 * time.Second}, "p", "s", false},
		{"first-byte time-out, streamed", "chat", simulator.Behavior{FirstByteDelay: 2 * time.Second}, "p", "s", true},
		{"500, streamed", "chat", simulator.Behavior{FailStatus: 500}, "p", "s", true},
		{"connection refused", "unreachable", simulator.Behavior{}, "dead", "s2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, _ := newClockEnv(t)
			env.Sim.SetBehavior(c.first, c.behavior)
			body := chatBody(c.model)
			if c.stream {
				body = `{"model":"` + c.model + `","stream":true,"messages":[{"role":"user","content":"hi"}]}`
			}
			resp := env.Post("/v1/chat/completions", env.Key, body)
			raw := nodetest.Read(t, resp)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, raw)
			}
			if c.first != "dead" && env.Sim.Calls(c.first) != 1 || env.Sim.Calls(c.second) != 1 {
				t.Fatalf("calls: %s=%d %s=%d", c.first, env.Sim.Calls(c.first), c.second, env.Sim.Calls(c.second))
			}
			e := usage(t, env)
			if len(e) != 1 || e[0].Route != c.second || e[0].Attempts != 2 || e[0].Status != 200 {
				t.Fatalf("log = %+v", e)
			}
		})
	}
}

// waitState waits for the route actor to publish what the test expects; reports are
// fire-and-forget, so the snapshot follows the answer by a moment.
func waitState(t *testing.T, env *nodetest.Env, route string, ok func(*routehealth.State) bool) *routehealth.State {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if st := env.Node.Board.State(route); st != nil && ok(st) {
			return st
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("route %s never reached the expected state: %+v", route, env.Node.Board.State(route))
	return nil
}

func TestCooldownProbeAndRecovery(t *testing.T) {
	env, clk := newClockEnv(t)
	env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 500})
	for i := 0; i < 2; i++ { // two failures in a row start a cooldown
		nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
		waitState(t, env, "p", func(s *routehealth.State) bool { return s.Streak == i+1 && s.InFlight == 0 })
	}
	st := waitState(t, env, "p", func(s *routehealth.State) bool { return !s.CooldownUntil.IsZero() })
	if want := clk.Now().Add(10 * time.Second); !st.CooldownUntil.Equal(want) {
		t.Fatalf("cooldown until %v, want %v", st.CooldownUntil, want)
	}
	// While cooling, p is skipped: s serves on the first attempt.
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
	if env.Sim.Calls("p") != 2 || env.Sim.Calls("s") != 3 {
		t.Fatalf("cooling route was tried: p=%d s=%d", env.Sim.Calls("p"), env.Sim.Calls("s"))
	}
	// After the cooldown one probe goes to p; it fails, so the cooldown doubles.
	clk.Add(10 * time.Second)
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
	if env.Sim.Calls("p") != 3 {
		t.Fatalf("no probe: p=%d", env.Sim.Calls("p"))
	}
	st = waitState(t, env, "p", func(s *routehealth.State) bool { return s.Cooldowns == 2 })
	if want := clk.Now().Add(20 * time.Second); !st.CooldownUntil.Equal(want) {
		t.Fatalf("second cooldown until %v, want %v (doubled)", st.CooldownUntil, want)
	}
	// The upstream heals; the next probe succeeds and p is healthy again.
	env.Sim.SetBehavior("p", simulator.Behavior{})
	clk.Add(20 * time.Second)
	resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
	nodetest.Read(t, resp)
	if resp.StatusCode != 200 || env.Sim.Calls("p") != 4 {
		t.Fatalf("status %d, p=%d", resp.StatusCode, env.Sim.Calls("p"))
	}
	waitState(t, env, "p", func(s *routehealth.State) bool { return s.Healthy() })
}

// A streamed probe passes when its answer begins, so the route takes requests again while the
// probe still streams (a chunk every 500 ms: about 5 s).
func TestStreamedProbePassesWhenItsAnswerBegins(t *testing.T) {
	env, clk := newClockEnv(t)
	env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 500})
	for i := 0; i < 2; i++ {
		nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
	}
	waitState(t, env, "p", func(s *routehealth.State) bool { return s.Probing && s.InFlight == 0 })
	env.Sim.SetBehavior("p", simulator.Behavior{TokensPerSecond: 2})
	clk.Add(10 * time.Second)
	resp := env.Post("/v1/chat/completions", env.Key, `{"model":"chat","stream":true,"messages":[{"role":"user","content":"reply with 8 words"}]}`)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || env.Sim.Calls("p") != 3 {
		t.Fatalf("probe: status %d, p=%d", resp.StatusCode, env.Sim.Calls("p"))
	}
	st := waitState(t, env, "p", func(s *routehealth.State) bool { return !s.Probing })
	if !st.Healthy() || st.InFlight != 1 {
		t.Fatalf("route p while its probe streams: %+v", st)
	}
}

func TestRetryAfterBecomesCooldown(t *testing.T) {
	env, clk := newClockEnv(t)
	env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 429, RetryAfter: 7})
	nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
	st := waitState(t, env, "p", func(s *routehealth.State) bool { return !s.CooldownUntil.IsZero() })
	if want := clk.Now().Add(7 * time.Second); !st.CooldownUntil.Equal(want) || st.Probing {
		t.Fatalf("cooldown %v probing %v, want until %v without probe", st.CooldownUntil, st.Probing, want)
	}
}

func TestAllRoutesDown(t *testing.T) {
	t.Run("cooling or rate-limited: 529 with a short Retry-After", func(t *testing.T) {
		env, _ := newClockEnv(t)
		env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 429, RetryAfter: 120})
		env.Sim.SetBehavior("s", simulator.Behavior{FailStatus: 429, RetryAfter: 3})
		first := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
		raw := nodetest.Read(t, first)
		if first.StatusCode != 529 {
			t.Fatalf("every route rate-limited: %d %s", first.StatusCode, raw)
		}
		waitState(t, env, "s", func(s *routehealth.State) bool { return !s.CooldownUntil.IsZero() })
		waitState(t, env, "p", func(s *routehealth.State) bool { return !s.CooldownUntil.IsZero() })
		calls := env.Sim.Calls("p") + env.Sim.Calls("s")
		resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
		raw = nodetest.Read(t, resp)
		var e errorBody
		json.Unmarshal(raw, &e)
		if resp.StatusCode != 529 || resp.Header.Get("Retry-After") != "3" || e.Error.Type != "overloaded_error" {
			t.Fatalf("%d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
		}
		if env.Sim.Calls("p")+env.Sim.Calls("s") != calls {
			t.Fatal("a cooling route was called")
		}
	})
	t.Run("attempts exhausted: 502", func(t *testing.T) {
		env, _ := newClockEnv(t)
		env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 500})
		env.Sim.SetBehavior("s", simulator.Behavior{FailStatus: 500})
		resp := env.Post("/v1/chat/completions", env.Key, chatBody("chat"))
		raw := nodetest.Read(t, resp)
		var e errorBody
		json.Unmarshal(raw, &e)
		if resp.StatusCode != 502 || e.Error.Type != "upstream_error" {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		if l := usage(t, env); len(l) != 1 || l[0].Status != 502 || l[0].CostUSD != "0" || l[0].Attempts != 2 {
			t.Fatalf("log %+v", l)
		}
	})
}

func TestZDRKeyNeverFailsOverToNonZDRRoute(t *testing.T) {
	env, _ := newClockEnv(t)
	zdr := env.NewKey(persistence.KeySpec{Name: "z", ZDR: true})
	env.Sim.SetBehavior("p", simulator.Behavior{FailStatus: 500})
	resp := env.Post("/v1/chat/completions", zdr, chatBody("chat"))
	raw := nodetest.Read(t, resp)
	if resp.StatusCode != 502 || env.Sim.Calls("s") != 0 {
		t.Fatalf("%d s=%d %s", resp.StatusCode, env.Sim.Calls("s"), raw)
	}
}

// Through the whole gateway, a 3:1 weight gives route a about 75% of calls.
func TestWeightsThroughGateway(t *testing.T) {
	env := nodetest.Start(t, "", nodetest.Options{})
	const n = 400
	for i := 0; i < n; i++ {
		nodetest.Read(t, env.Post("/v1/chat/completions", env.Key, chatBody("chat")))
	}
	a := env.Sim.Calls("a")
	// Binomial(400, 0.75): sd 8.7; 5 sd either side makes a false failure vanishingly rare.
	if a < 300-44 || a > 300+44 || a+env.Sim.Calls("b") != n {
		t.Fatalf("a=%d b=%d of %d, want about 300 on a", a, env.Sim.Calls("b"), n)
	}
}
