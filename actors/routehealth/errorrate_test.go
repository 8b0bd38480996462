package routehealth

import (
	"math"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// outcomes settles one outcome per letter of pattern ('s' succeeded, 'f' failed), each
// started at the clock's now, the clock moving gap after each; it returns the last state.
func outcomes(t *testing.T, b *Board, clk *testutil.Clock, route, pattern string, gap time.Duration) *State {
	t.Helper()
	var s *State
	for _, c := range pattern {
		res := Succeeded
		if c == 'f' {
			res = Failed
		}
		if s = b.Settle(route, Outcome{Result: res, Started: clk.Now(), Latency: time.Millisecond}); s == nil {
			t.Fatal("Settle got no state")
		}
		clk.Add(gap)
	}
	return s
}

// A route failing MaxErrorRate (20 %) of at least MinCalls (20) attempts
// in the window rests for ErrorCooldown (30 s), though no three failures came in a row. The
// rule judges at every outcome, a success too (the weight is 0 from there on, so no failure
// may come to judge it), and never on fewer calls.
func TestErrorRateCoolsAFlakyRoute(t *testing.T) {
	cases := []struct {
		name    string
		pattern string
		cooled  int // the 1-based outcome that cooled the route; 0: none did
	}{
		{"30 % of 20 calls (the simulator's 0.3 pattern)", "sssfssfssfsssfssfssf", 20},
		{"exactly 20 %: 4 of 20", "ssssfssssfssssfssssf", 20},
		{"15 %: 3 of 20", "sssssfsssssfsssssfss", 0},
		{"47 % of 19 calls is too few to judge", "sfsfsfsfsfsfsfsfsfs", 0},
		{"25 % when the 20th call succeeds: judged at that success", "sfssfssfssfssfssssss", 20},
		{"19 %: 4 of 21", "sssssfsssssfsssssfssf", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := routes(1, 1)
			b, clk := newBoard(t, rs)
			for i, o := range c.pattern {
				s := outcomes(t, b, clk, "a", string(o), 0)
				if i+1 != c.cooled {
					if s.Health(clk.Now()) == Cooling || s.Streak >= 3 {
						t.Fatalf("outcome %d: cooled too early or by the streak rule: %+v", i+1, s)
					}
					continue
				}
				now := clk.Now()
				if s.Reason != ReasonErrorRate || !s.CooldownUntil.Equal(now.Add(30*time.Second)) || !s.CooldownSince.Equal(now) ||
					!s.Probing || s.Cooldowns != 0 || s.Health(now) != Cooling || s.Weight(1, now) != 0 || !s.LastResort(now) {
					t.Fatalf("outcome %d: state %+v, want an error-rate rest until now+30s", i+1, s)
				}
				return
			}
			if c.cooled != 0 {
				t.Fatalf("never cooled, want at outcome %d", c.cooled)
			}
		})
	}
}

// Below the error rate that cools it, a route's weight shrinks with its
// judged error rate, weight × (1 − rate/0.2); with fewer than 20 calls it is not judged.
func TestWeightShrinksWithErrorRate(t *testing.T) {
	cases := []struct {
		name    string
		pattern string
		rate    float64
		weight  float64 // of catalog weight 4
		health  string
	}{
		{"no failure", "ssssssssssssssssssss", 0, 4, Healthy},
		{"5 %", "sssssssssfssssssssss", 0.05, 3, Degraded},
		{"10 %", "ssssfssssssssfssssss", 0.10, 2, Degraded},
		{"15 %", "sssfsssssfssssssfsss", 0.15, 1, Degraded},
		{"7.5 % of 40", "sssssssssfssssssssssssssssfssssssssfssss", 0.075, 2.5, Degraded},
		{"3 of 19: too few to judge", "sssfssssfsssssfssss", 0, 4, Healthy},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, clk := newBoard(t, routes(4))
			s := outcomes(t, b, clk, "a", c.pattern, 0)
			now := clk.Now()
			if got := s.ErrorRate(now); math.Abs(got-c.rate) > 1e-12 {
				t.Fatalf("error rate %v, want %v", got, c.rate)
			}
			if got := s.Weight(4, now); math.Abs(got-c.weight) > 1e-12 || s.Health(now) != c.health {
				t.Fatalf("weight %v health %s, want %v %s", got, s.Health(now), c.weight, c.health)
			}
		})
	}
}

// The shrunk weight is the degraded route's share. Route a (weight 4, 10 %
// failed: 2) beside b (weight 2): each takes half of 50,000 picks, within 1 point (4.5 σ).
func TestDegradedRouteTakesItsShrunkShare(t *testing.T) {
	rs := routes(4, 2)
	b, clk := newBoard(t, rs)
	outcomes(t, b, clk, "a", "ssssfssssssssfssssss", 0)
	const n = 50_000
	picked := 0
	for i := 0; i < n; i++ {
		if b.Pick(modelOf(rs), false, nil).ID == "a" {
			picked++
		}
	}
	if share := float64(picked) / n; math.Abs(share-0.5) > 0.01 {
		t.Fatalf("degraded route's share %.4f, want 0.5", share)
	}
}

// The window is the last 30 s in 3 s steps: attempts that ended in a step
// count until that step is 30 s old.
func TestWindowSlides(t *testing.T) {
	b, clk := newBoard(t, routes(1))
	t0 := clk.Now() // the start of a step
	outcomes(t, b, clk, "a", "sssfssssfssssssfssss", 0)
	clk.Add(2999 * time.Millisecond)
	outcomes(t, b, clk, "a", "s", 0) // the same step
	cases := []struct {
		at            time.Duration
		calls, failed int
		health        string
	}{
		{0, 21, 3, Degraded},
		{27 * time.Second, 21, 3, Degraded},
		{29999 * time.Millisecond, 21, 3, Degraded},
		{30 * time.Second, 0, 0, Healthy},
	}
	for _, c := range cases {
		now := t0.Add(c.at)
		if c.at == 0 {
			now = clk.Now()
		}
		s := b.State("a")
		if calls, failed := s.Window(now); calls != c.calls || failed != c.failed || s.Health(now) != c.health {
			t.Errorf("at t0+%v: window %d/%d %s, want %d/%d %s", c.at, failed, calls, s.Health(now), c.failed, c.calls, c.health)
		}
	}
}

// A policy without ErrorWindow or MaxErrorRate judges no error rate.
func TestErrorRateRuleOff(t *testing.T) {
	for _, tune := range []func(*Policy){
		func(p *Policy) { p.ErrorWindow = 0 },
		func(p *Policy) { p.MaxErrorRate = 0 },
	} {
		b, clk := newBoard(t, routes(1), tune)
		s := outcomes(t, b, clk, "a", "sfsfsfsfsfsfsfsfsfsfsf", 0)
		if now := clk.Now(); s.Health(now) != Healthy || s.Weight(1, now) != 1 || s.ErrorRate(now) != 0 {
			t.Fatalf("rule off: %+v", s)
		}
	}
}
