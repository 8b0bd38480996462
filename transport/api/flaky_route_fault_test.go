//go:build faults

package api_test

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/simulator"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// TestFaultFlakyRoute reproduces issue #12 item 17's figures with the default policy.
//
// A route failing 30 % of calls with 500s, weighted 1 beside a healthy route weighted 2: of
// 3,000 calls it got about a third of the first attempts (976 of 3,292 attempts), and 292
// calls needed a second one. Now it rests once it fails 20 % of 20 attempts: it gets at
// most flakyBound attempts, and no client sees an error.
//
// Every route of the model failing for 16 s under load, then healed: the cooldowns had
// grown to 20 s, and traffic flowed again only 15 s after the heal (304 refused calls).
// Now failed probes back off to at most 4 s, and a probe goes out as soon as a cooldown
// ends: traffic flows within 5 s, wherever in the probe cycle the heal falls.
func TestFaultFlakyRoute(t *testing.T) {
	t.Run("a route failing 30 % of calls", func(t *testing.T) {
		env := nodetest.Start(t, flakyCatalog(2, 1), nodetest.Options{})
		env.Sim.SetBehavior("flaky", simulator.Behavior{FailStatus: 500, FailFraction: 0.3})
		const calls, workers = 3000, 8
		s := runSoak(t, env, calls, workers)
		bound := flakyBound(routehealth.DefaultPolicy(), s.duration, workers)
		t.Logf("%d calls in %v: %d attempts, %d to the flaky route (%.1f %%, bound %d), %d second attempts, %d client errors",
			s.calls, s.duration.Round(time.Millisecond), s.attempts, s.flaky, 100*s.share(), bound, s.second(), s.failed)
		if s.calls != calls || s.failed != 0 || s.flaky > bound || s.second() > s.flaky {
			t.Fatalf("want %d calls all answered 200, at most %d attempts to the flaky route, fewer second attempts", calls, bound)
		}
	})
	// Five outages whose heals fall 0.8 s apart in the 4 s probe cycle, so one comes just
	// after a failed probe: the worst case.
	t.Run("every route down, then healed", func(t *testing.T) {
		env := nodetest.Start(t, flakyCatalog(2, 1), nodetest.Options{})
		for i := 0; i < 5; i++ {
			outage := 16*time.Second + time.Duration(i)*800*time.Millisecond
			r := runOutage(t, env, outage, 6*time.Second, 4, 200*time.Millisecond)
			t.Logf("outage of %v: after the heal, first 200 at %v, last refused call at %v, %d of %d calls refused",
				outage, r.firstOK.Round(time.Millisecond), r.lastFail.Round(time.Millisecond), r.refused, r.after)
			if r.firstOK < 0 || r.firstOK > 5*time.Second || r.lastFail > 5*time.Second {
				t.Fatal("traffic did not flow again within 5 s of the heal")
			}
		}
	})
}
