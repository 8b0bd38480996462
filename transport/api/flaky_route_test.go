package api_test

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// flakyBound is the most attempts a route failing 30 % of its calls may get under policy p
// in a soak lasting d with workers calls at a time. An exposure — the route taking traffic
// between two rests — opens with its probe (1 attempt); the error-rate rule judges at every
// outcome from MinCalls outcomes on, and the simulator's 0.3 pattern fails at least
// every 4th call (MinCalls+3); up to workers attempts may be under way when the rest is
// published. A rest lasts ErrorCooldown, so a soak has at most 1 + d/ErrorCooldown
// exposures; one more allows for a consecutive-failure cooldown (outcomes that arrive out
// of order can put three failures in a row), whose passed probe starts the window afresh.
func flakyBound(p routehealth.Policy, d time.Duration, workers int) int64 {
	exposures := 2 + int64(d/p.ErrorCooldown)
	return exposures * int64(1+p.MinCalls+3+workers)
}

// A flaky route's short soak: beside a healthy route of the same weight, a route
// failing 30 % of calls with 500s got 43 % of the attempts (half the calls, plus nothing
// but its own failures' retries on the other route); now it rests once it has failed 20 %
// of 20 attempts, and gets no more than flakyBound — for 600 calls in under 30 s, 56
// attempts (under 9 %) — and no client sees an error.
func TestFlakyRouteIsCooledNotJustRetried(t *testing.T) {
	const calls, workers = 600, 4
	env, s, bound := flakySoak(t, 1, calls, workers)
	if s.calls != calls || s.failed != 0 {
		t.Fatalf("%d of %d calls answered, %d not 200", s.calls, calls, s.failed)
	}
	if s.flaky > bound || s.second() > s.flaky {
		t.Fatalf("the flaky route got %d attempts (%.1f %%), bound %d; %d second attempts", s.flaky, 100*s.share(), bound, s.second())
	}
	// Cooled, by its error rate or — when the workers' interleaving lines three failures up
	// first — by the consecutive rule; the error-rate rule's own judgement is
	// actors/routehealth's TestErrorRateCoolsAFlakyRoute.
	if st := env.Node.Board.State("flaky"); st.Reason != routehealth.ReasonErrorRate && st.Reason != routehealth.ReasonFailures {
		t.Fatalf("the flaky route was never cooled: %+v", st)
	}
}

// flakySoak sends calls from workers goroutines to model chat, whose route good (weighted
// good) never fails and whose route flaky (weighted 1) fails 30 % of calls with 500s, with
// the default policy; it logs the figures and returns them with the flaky route's bound.
func flakySoak(t *testing.T, good, calls, workers int) (*nodetest.Env, soak, int64) {
	env := nodetest.Start(t, flakyCatalog(good, 1), nodetest.Options{})
	env.Sim.SetBehavior("flaky", simulator.Behavior{FailStatus: 500, FailFraction: 0.3})
	s := runSoak(t, env, calls, workers)
	bound := flakyBound(routehealth.DefaultPolicy(), s.duration, workers)
	t.Logf("%d calls in %v: %d attempts, %d to the flaky route (%.1f %%, bound %d), %d second attempts, %d client errors",
		s.calls, s.duration.Round(time.Millisecond), s.attempts, s.flaky, 100*s.share(), bound, s.second(), s.failed)
	return env, s, bound
}
