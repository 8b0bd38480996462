package routehealth

import (
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
)

// With the default policy a failing route's probe goes out the moment its cooldown ends — the
// next request, whatever the weights — and failed probes back off 1, 2, 4, 4 … s: an upstream
// that heals at any moment is probed within 4 s, and the probe's success restores the route,
// window cleared, to its full weight.
func TestProbesBackOffWithinFiveSeconds(t *testing.T) {
	rs := routes(1, 1000) // b would take 99.9 % of requests by weight
	b, clk := newBoard(t, rs)
	s := outcomes(t, b, clk, "a", "fff", 0)
	for i, want := range []time.Duration{1, 2, 4, 4, 4} {
		want *= time.Second
		if !s.CooldownUntil.Equal(s.CooldownSince.Add(want)) || !s.CooldownSince.Equal(clk.Now()) || s.Reason != ReasonFailures {
			t.Fatalf("cooldown %d: %v..%v (%s), want %v long from now", i+1, s.CooldownSince, s.CooldownUntil, s.Reason, want)
		}
		clk.Add(want - time.Nanosecond)
		for j := 0; j < 50; j++ {
			if r := b.Pick(modelOf(rs), false, nil); r.ID != "b" {
				t.Fatalf("cooldown %d: cooling route picked a nanosecond before its end", i+1)
			}
		}
		clk.Add(time.Nanosecond)
		if r := b.Pick(modelOf(rs), false, nil); r.ID != "a" {
			t.Fatalf("cooldown %d: the first pick after it is %s, want a's probe", i+1, r.ID)
		}
		for j := 0; j < 50; j++ {
			if r := b.Pick(modelOf(rs), false, nil); r.ID != "b" {
				t.Fatalf("cooldown %d: a second request went to the route while its probe is out", i+1)
			}
		}
		s = outcomes(t, b, clk, "a", "f", 0)
	}
	// The upstream heals: the next probe passes.
	clk.Add(4 * time.Second)
	if r := b.Pick(modelOf(rs), false, nil); r.ID != "a" {
		t.Fatal("no probe after the last cooldown")
	}
	s = outcomes(t, b, clk, "a", "s", 0)
	now := clk.Now()
	if calls, _ := s.Window(now); !s.Healthy() || s.Cooldowns != 0 || s.Probing || calls != 0 || s.Health(now) != Healthy || s.Weight(1, now) != 1 {
		t.Fatalf("after a passed probe: %+v (window %d calls)", s, calls)
	}
}

// restingRoute is route a of rs resting for its error rate since the clock's now.
func restingRoute(t *testing.T, hardCooled []string) (*Board, *testutil.Clock) {
	t.Helper()
	b, clk := newBoard(t, routes(1, 1))
	if s := outcomes(t, b, clk, "a", "sssfssfssfsssfssfssf", 0); s.Reason != ReasonErrorRate {
		t.Fatalf("not resting: %+v", s)
	}
	for _, id := range hardCooled {
		outcomes(t, b, clk, id, "fff", 0)
	}
	return b, clk
}

// A route resting for its error rate is skipped while another route may
// take the request, and is every request's last resort when none may (a route answering 70 %
// beats 529 for all); Wait then says 0 and the stream path's CanServe agrees with Pick.
func TestRestingRouteIsTheLastResort(t *testing.T) {
	rs := routes(1, 1)
	b, _ := restingRoute(t, nil)
	for i := 0; i < 100; i++ {
		if r := b.Pick(modelOf(rs), false, nil); r.ID != "b" {
			t.Fatalf("resting route picked beside a healthy one: %s", r.ID)
		}
	}
	b, _ = restingRoute(t, []string{"b"}) // b cools down hard
	for i := 0; i < 20; i++ {
		if r := b.Pick(modelOf(rs), false, nil); r == nil || r.ID != "a" {
			t.Fatalf("pick %d with only the resting route left: %v", i, r)
		}
	}
	if !b.CanServe(rs, false, []string{"b"}) || b.Wait(rs, false, nil) != 0 {
		t.Fatalf("CanServe %v Wait %v, want true and 0", b.CanServe(rs, false, []string{"b"}), b.Wait(rs, false, nil))
	}
	if r := b.Pick(modelOf(rs), false, []string{"a"}); r != nil || b.CanServe(rs, false, []string{"a"}) {
		t.Fatalf("a tried resting route picked again: %v", r)
	}
	if r := b.Pick(modelOf(rs), true, nil); r == nil || r.ID != "a" { // a is the ZDR route
		t.Fatalf("zdr last resort: %v", r)
	}
}

// What ends or deepens a rest for the error rate.
func TestRestEndsByItsProbe(t *testing.T) {
	cases := []struct {
		name    string
		during  string        // last-resort outcomes while resting
		after   time.Duration // then the clock moves on by
		probe   string        // and the probe's outcome ("": none)
		reason  string
		cooling time.Duration // the cooldown then left (0: none)
		window  int           // attempts left in the window
	}{
		{"a last-resort success does not end it", "s", 0, "", ReasonErrorRate, 30 * time.Second, 21},
		{"nor do two failures", "sff", 0, "", ReasonErrorRate, 30 * time.Second, 23},
		{"three failures in a row cool it hard", "sfff", 0, "", ReasonFailures, time.Second, 24},
		{"a failed probe rests it as long again", "", 30 * time.Second, "f", ReasonErrorRate, 30 * time.Second, 1},
		{"a passed probe restores it, window cleared", "", 30 * time.Second, "s", ReasonErrorRate, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := routes(1, 1)
			b, clk := restingRoute(t, nil)
			s := outcomes(t, b, clk, "a", c.during, 0)
			clk.Add(c.after)
			if c.probe != "" {
				if r := b.Pick(modelOf(rs), false, nil); r.ID != "a" {
					t.Fatalf("no probe after the rest: %s", r.ID)
				}
				s = outcomes(t, b, clk, "a", c.probe, 0)
			} else if s == nil {
				s = b.State("a")
			}
			now := clk.Now()
			if calls, _ := s.Window(now); s.Reason != c.reason || max(0, s.CooldownUntil.Sub(now)) != c.cooling || calls != c.window {
				t.Fatalf("state %+v, window %d; want %s with %v left and %d in the window", s, calls, c.reason, c.cooling, c.window)
			}
			if resting := s.Reason == ReasonErrorRate && c.cooling > 0; s.LastResort(now) != resting || resting && s.Remaining(now) != 0 {
				t.Fatalf("last resort %v, remaining %v; want %v", s.LastResort(now), s.Remaining(now), resting)
			}
			if c.cooling == 0 && (s.Health(now) != Healthy || s.Weight(1, now) != 1) {
				t.Fatalf("restored route: %s weight %v", s.Health(now), s.Weight(1, now))
			}
		})
	}
}

// Only attempts that started at or after a cooldown began judge the route
// after it: an older failure reported in the half-open wait is no failed probe, and an older
// success does not restore the route.
func TestOnlyAttemptsSinceTheCooldownJudgeIt(t *testing.T) {
	cases := []struct {
		name     string
		result   Result
		started  time.Duration // relative to the cooldown's start
		restored bool
		cooldown time.Duration // a new cooldown from now (0: none)
	}{
		{"older failure", Failed, -time.Millisecond, false, 0},
		{"older success", Succeeded, -time.Millisecond, false, 0},
		{"the probe's failure", Failed, 2 * time.Second, false, 2 * time.Second},
		{"the probe's success", Succeeded, 2 * time.Second, true, 0},
		{"a success of unknown start", Succeeded, 0, true, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := routes(1)
			b, clk := newBoard(t, rs)
			since := outcomes(t, b, clk, "a", "fff", 0).CooldownSince
			clk.Add(2 * time.Second)
			if b.Pick(modelOf(rs), false, nil) == nil {
				t.Fatal("no probe")
			}
			o := Outcome{Result: c.result}
			if c.started != 0 {
				o.Started = since.Add(c.started)
			}
			s := b.Settle("a", o)
			now := clk.Now()
			if s.CooldownUntil.IsZero() != c.restored || c.cooldown != 0 && !s.CooldownUntil.Equal(now.Add(c.cooldown)) ||
				c.cooldown == 0 && !c.restored && !s.CooldownUntil.Equal(since.Add(time.Second)) {
				t.Fatalf("state %+v: restored %v, want %v, new cooldown %v", s, s.CooldownUntil.IsZero(), c.restored, c.cooldown)
			}
			if !c.restored && c.cooldown == 0 && b.Pick(modelOf(rs), false, nil) != nil {
				t.Fatal("the probe's claim was lost: a second probe admitted")
			}
		})
	}
}

// A streamed probe passes when its answer begins (Answering), not when it
// ends, so a long answer does not keep its route half-open; Answering judges nothing else.
func TestStreamedProbePassesWhenItsAnswerBegins(t *testing.T) {
	rs := routes(1)
	b, clk := newBoard(t, rs)
	s := outcomes(t, b, clk, "a", "fff", 0)
	// Each Begin is a barrier: the actor handles its messages in order.
	b.Answering("a", clk.Now()) // cooling: nothing to judge
	b.Begin("a")
	if st := waitFor(t, b, "a", func(st *State) bool { return st.InFlight == 1 }); !st.CooldownUntil.Equal(s.CooldownUntil) || !st.Probing {
		t.Fatalf("Answering in the cooldown changed it: %+v", st)
	}
	clk.Add(time.Second)
	if b.Pick(modelOf(rs), false, nil) == nil {
		t.Fatal("no probe")
	}
	b.Answering("a", s.CooldownSince.Add(-time.Millisecond)) // an older attempt's answer
	b.Begin("a")
	if st := waitFor(t, b, "a", func(st *State) bool { return st.InFlight == 2 }); !st.Probing {
		t.Fatalf("an older attempt's answer passed the probe: %+v", st)
	}
	b.Answering("a", clk.Now())
	st := waitFor(t, b, "a", func(st *State) bool { return !st.Probing })
	if !st.Healthy() || st.InFlight != 2 || st.Successes != 0 {
		t.Fatalf("after the probe's answer began: %+v", st)
	}
	if b.Pick(modelOf(rs), false, nil) == nil {
		t.Fatal("route not restored while its probe streams")
	}
}

// A probe Pick handed to a request that could not use the route (it cannot carry the
// request) is given back by Release, so the next request probes: no route waits half-open
// for ever on an attempt that never was.
func TestReleaseGivesBackAnUnusedProbe(t *testing.T) {
	rs := routes(1)
	b, clk := newBoard(t, rs)
	outcomes(t, b, clk, "a", "fff", 0)
	clk.Add(time.Second)
	if b.Pick(modelOf(rs), false, nil) == nil || b.Pick(modelOf(rs), false, nil) != nil {
		t.Fatal("want exactly one probe")
	}
	b.Release("a")
	if b.Pick(modelOf(rs), false, nil) == nil {
		t.Fatal("the released probe was not admitted again")
	}
	if b.Pick(modelOf(rs), false, nil) != nil {
		t.Fatal("a second probe admitted after the release was taken")
	}
}
