package routehealth

import (
	"sync"
	"testing"
	"time"
)

// A refusal cools the route for at least the provider's hint: a 429 for the hint (the
// policy's short cooldown without one), a billing refusal for the long cooldown or a longer
// hint. Neither arms a probe or grows the back-off.
func TestRefusalCooldowns(t *testing.T) {
	cases := []struct {
		name    string
		billing time.Duration // the policy's BillingCooldown
		outcome Outcome
		want    time.Duration
		reason  string
	}{
		{"429 without a hint", 0, Outcome{Result: RateLimited, Status: 429}, 5 * time.Second, ReasonRateLimit},
		{"429 with Retry-After", 0, Outcome{Result: RateLimited, Status: 429, RetryAfter: 7 * time.Second}, 7 * time.Second, ReasonRateLimit},
		{"429 with a sub-second hint", 0, Outcome{Result: RateLimited, Status: 429, RetryAfter: 1500 * time.Millisecond}, 1500 * time.Millisecond, ReasonRateLimit},
		{"429 with a long hint", 0, Outcome{Result: RateLimited, Status: 429, RetryAfter: 35 * time.Second}, 35 * time.Second, ReasonRateLimit},
		{"billing, default long cooldown", 0, Outcome{Result: Refused, Status: 429}, 15 * time.Minute, ReasonBilling},
		{"billing, the policy's cooldown", time.Hour, Outcome{Result: Refused, Status: 400}, time.Hour, ReasonBilling},
		{"billing, a shorter hint does not shorten it", 0, Outcome{Result: Refused, Status: 429, RetryAfter: 47 * time.Second}, 15 * time.Minute, ReasonBilling},
		{"billing, a longer hint wins", 0, Outcome{Result: Refused, Status: 429, RetryAfter: 2 * time.Hour}, 2 * time.Hour, ReasonBilling},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := routes(1)
			b, clk := newBoard(t, rs, func(p *Policy) { p.BillingCooldown = c.billing })
			c.outcome.Message = "provider says: " + c.name
			s := b.Settle("a", c.outcome)
			if s == nil {
				t.Fatal("Settle got no state")
			}
			now := clk.Now()
			if !s.CooldownUntil.Equal(now.Add(c.want)) || s.Reason != c.reason || s.Probing || s.Cooldowns != 0 || s.Streak != 0 ||
				s.Failures != 1 || s.Refusal != c.outcome.Message || !s.RefusedAt.Equal(now) || !s.CooldownSince.Equal(now) {
				t.Fatalf("state %+v, want cooldown until now+%v for %s without probe", s, c.want, c.reason)
			}
			if s != b.State("a") {
				t.Fatal("Settle returned a state that is not the published one")
			}
			if got := b.Wait(rs, false, nil); got != c.want {
				t.Fatalf("Wait = %v, want %v", got, c.want)
			}
			clk.Add(c.want - time.Nanosecond)
			if b.Pick(modelOf(rs), false, nil) != nil {
				t.Fatal("route picked before its cooldown ended")
			}
			clk.Add(time.Nanosecond)
			// No probe: once the provider's time is up, every request may use the route.
			var wg sync.WaitGroup
			var mu sync.Mutex
			picked := 0
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if b.Pick(modelOf(rs), false, nil) != nil {
						mu.Lock()
						picked++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if picked != 20 {
				t.Fatalf("%d of 20 picks after the cooldown, want all", picked)
			}
		})
	}
}

// Repeated refusals never grow the cooldown: the provider, not a back-off, says how long.
func TestRepeatedRefusalsDoNotGrow(t *testing.T) {
	for _, res := range []Result{RateLimited, Refused} {
		b, clk := newBoard(t, routes(1))
		var first time.Duration
		for i := 0; i < 4; i++ {
			s := b.Settle("a", Outcome{Result: res, RetryAfter: 3 * time.Second})
			got := s.CooldownUntil.Sub(clk.Now())
			if i == 0 {
				first = got
			}
			if got != first || s.Cooldowns != 0 || s.Probing {
				t.Fatalf("result %d, refusal %d: cooldown %v (first %v), cooldowns %d, probing %v", res, i, got, first, s.Cooldowns, s.Probing)
			}
			clk.Add(got)
		}
	}
}

// A cooldown already longer than a new refusal's stands (a late 429 cannot shorten a
// billing cooldown), though the provider's latest message is kept.
func TestLongerCooldownStands(t *testing.T) {
	b, clk := newBoard(t, routes(1))
	billed := b.Settle("a", Outcome{Result: Refused, Message: "credit balance too low"})
	clk.Add(time.Minute)
	s := b.Settle("a", Outcome{Result: RateLimited, RetryAfter: 5 * time.Second, Message: "slow down"})
	if !s.CooldownUntil.Equal(billed.CooldownUntil) || s.Reason != ReasonBilling || !s.CooldownSince.Equal(billed.CooldownSince) ||
		s.Refusal != "slow down" || !s.RefusedAt.Equal(clk.Now()) {
		t.Fatalf("state %+v, want the billing cooldown until %v kept", s, billed.CooldownUntil)
	}
	// A failure cooldown that outlasts a short 429 stands too, probe and all.
	b, clk = newBoard(t, routes(1))
	for i := 0; i < 3; i++ {
		b.Settle("a", Outcome{Result: Failed})
	}
	s = b.Settle("a", Outcome{Result: RateLimited, RetryAfter: 500 * time.Millisecond})
	if s.Reason != ReasonFailures || !s.Probing || s.CooldownUntil.Sub(clk.Now()) != time.Second {
		t.Fatalf("state %+v, want the failure cooldown kept", s)
	}
}

// A success of an attempt that started before the provider's refusal does not lift it: the
// refusal is the newer word. A success of unknown start (or a later one) does.
func TestOldSuccessDoesNotLiftRefusal(t *testing.T) {
	cases := []struct {
		name    string
		started time.Duration // relative to the refusal
		lifts   bool
	}{
		{"started before the refusal", -time.Second, false},
		{"started at the refusal", 0, true},
		{"start unknown", 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, clk := newBoard(t, routes(1))
			refused := b.Settle("a", Outcome{Result: RateLimited, RetryAfter: 30 * time.Second})
			o := Outcome{Result: Succeeded, Latency: time.Millisecond}
			if c.name != "start unknown" {
				o.Started = refused.CooldownSince.Add(c.started)
			}
			clk.Add(time.Second)
			s := b.Settle("a", o)
			if s.Successes != 1 || s.Healthy() != c.lifts || c.lifts != s.CooldownUntil.IsZero() {
				t.Fatalf("state %+v, lifted %v, want %v", s, s.CooldownUntil.IsZero(), c.lifts)
			}
		})
	}
}

// Wait is the real remaining cooldown of the earliest route that qualifies, tried or not.
func TestWaitIsTheEarliestRealCooldown(t *testing.T) {
	rs := routes(1, 1, 1) // only a is ZDR
	b, clk := newBoard(t, rs)
	b.Settle("a", Outcome{Result: RateLimited, RetryAfter: 10 * time.Second})
	b.Settle("b", Outcome{Result: RateLimited, RetryAfter: 3 * time.Second})
	clk.Add(500 * time.Millisecond)
	cases := []struct {
		name    string
		zdrOnly bool
		skip    []string
		want    time.Duration
	}{
		{"a route is ready now", false, nil, 0},
		{"ready route skipped", false, []string{"c"}, 2500 * time.Millisecond},
		{"zdr only", true, nil, 9500 * time.Millisecond},
		{"nothing qualifies", true, []string{"a"}, 0},
	}
	for _, c := range cases {
		if got := b.Wait(rs, c.zdrOnly, c.skip); got != c.want {
			t.Errorf("%s: Wait = %v, want %v", c.name, got, c.want)
		}
	}
	if got := b.Wait(nil, false, nil); got != 0 {
		t.Errorf("no routes: %v", got)
	}
}

// A waiting Settle is answered at once, with no state, when recording its outcome panicked
// (the recover middleware calls Fail); a Fail nobody waits for does not block.
func TestOutcomeFailAnswersSettle(t *testing.T) {
	reply := make(chan *State, 1)
	Outcome{Reply: reply}.Fail(nil)
	select {
	case s := <-reply:
		if s != nil {
			t.Fatalf("got %+v, want nil", s)
		}
	default:
		t.Fatal("no answer")
	}
	Outcome{}.Fail(nil)
	reply <- &State{}
	Outcome{Reply: reply}.Fail(nil) // full: must not block
}
