package routehealth

import (
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence/catalog"
)

func newBoard(t *testing.T, routes []*catalog.Route, tune ...func(*Policy)) (*Board, *testutil.Clock) {
	e, err := actor.NewEngine(actor.NewEngineConfig())
	if err != nil {
		t.Fatal(err)
	}
	clk := testutil.NewClock(time.Unix(1_800_000_000, 0))
	p := DefaultPolicy()
	p.Now = clk.Now
	for _, f := range tune {
		f(&p)
	}
	b := NewBoard(placement.NewLocal(e), p)
	b.Sync(routes)
	return b, clk
}

func routes(weights ...int) []*catalog.Route {
	var out []*catalog.Route
	for i, w := range weights {
		out = append(out, &catalog.Route{ID: string(rune('a' + i)), Weight: w, ZDR: i == 0})
	}
	return out
}

// A weight is exactly its share: over 200,000 picks each route's share is within 0.5
// percentage points of weight/total (about 4.5 standard deviations).
func TestPickDistribution(t *testing.T) {
	cases := [][]int{{3, 1}, {1, 1, 1}, {5, 3, 2}, {1, 0}, {100, 1}}
	for _, weights := range cases {
		rs := routes(weights...)
		b, _ := newBoard(t, rs)
		const n = 200_000
		counts := map[string]int{}
		for i := 0; i < n; i++ {
			r := b.Pick(modelOf(rs), false, nil)
			counts[r.ID]++
		}
		total := 0
		for _, w := range weights {
			total += w
		}
		for i, r := range rs {
			want := float64(weights[i]) / float64(total)
			got := float64(counts[r.ID]) / n
			if math.Abs(got-want) > 0.005 {
				t.Errorf("weights %v: route %s share %.4f, want %.4f", weights, r.ID, got, want)
			}
		}
	}
}

func TestPickFilters(t *testing.T) {
	rs := routes(1, 1, 0)
	b, _ := newBoard(t, rs)
	for i := 0; i < 100; i++ {
		if r := b.Pick(modelOf(rs), true, nil); r.ID != "a" {
			t.Fatalf("zdr pick = %s", r.ID)
		}
		if r := b.Pick(modelOf(rs), false, []string{"a"}); r.ID != "b" {
			t.Fatalf("tried route picked again: %s", r.ID)
		}
		if r := b.Pick(modelOf(rs), false, []string{"a", "b"}); r.ID != "c" {
			t.Fatalf("standby not used as last resort: %v", r)
		}
		if r := b.Pick(modelOf(rs), true, []string{"a"}); r != nil {
			t.Fatalf("zdr pick fell back to %s", r.ID)
		}
	}
}

func waitFor(t *testing.T, b *Board, id string, ok func(*State) bool) *State {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if s := b.State(id); s != nil && ok(s) {
			return s
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("state of %s: %+v", id, b.State(id))
	return nil
}

// Exactly one caller wins the half-open probe, however many race for it.
func TestHalfOpenAdmitsOneProbe(t *testing.T) {
	rs := routes(1)
	b, clk := newBoard(t, rs)
	for i := 0; i < 3; i++ {
		b.Report("a", Outcome{Result: Failed})
	}
	waitFor(t, b, "a", func(s *State) bool { return s.Probing })
	if r, wait := b.Pick(modelOf(rs), false, nil), b.Wait(rs, false, nil); r != nil || wait != time.Second {
		t.Fatalf("pick during cooldown = %v, wait %v", r, wait)
	}
	clk.Add(time.Second)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := b.Pick(modelOf(rs), false, nil); r != nil {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d probes admitted, want 1", wins.Load())
	}
	b.Begin("a") // the probe's Begin keeps the claim
	waitFor(t, b, "a", func(s *State) bool { return s.InFlight == 1 })
	if r := b.Pick(modelOf(rs), false, nil); r != nil {
		t.Fatal("second probe admitted after Begin")
	}
	b.Report("a", Outcome{Result: Succeeded, Latency: time.Millisecond})
	waitFor(t, b, "a", func(s *State) bool { return s.Healthy() && s.InFlight == 0 })
	if r := b.Pick(modelOf(rs), false, nil); r == nil {
		t.Fatal("recovered route not picked")
	}
}

func TestBackoffGrowsAndCaps(t *testing.T) {
	a := &routeActor{policy: &Policy{BaseCooldown: 5 * time.Second, MaxCooldown: 60 * time.Second}}
	want := []time.Duration{5, 10, 20, 40, 60, 60}
	for i, w := range want {
		if got := a.backoff(i + 1); got != w*time.Second {
			t.Errorf("backoff(%d) = %v, want %v", i+1, got, w*time.Second)
		}
	}
}

// A reload keeps the health of routes that stay.
func TestSyncKeepsHealth(t *testing.T) {
	rs := routes(1, 1)
	b, _ := newBoard(t, rs)
	for i := 0; i < 3; i++ {
		b.Report("a", Outcome{Result: Failed})
	}
	waitFor(t, b, "a", func(s *State) bool { return s.Probing })
	b.Sync(routes(1, 1, 1))
	if s := b.State("a"); s == nil || !s.Probing {
		t.Fatalf("health forgotten on reload: %+v", s)
	}
	b.Sync(routes(1))
	if s := b.State("b"); s != nil {
		t.Fatalf("removed route still tracked: %+v", s)
	}
}

// modelOf is a model of the default (weighted) route policy with routes rs.
func modelOf(rs []*catalog.Route) *catalog.Model { return &catalog.Model{ID: "m", Routes: rs} }
