package routehealth

import (
	"math"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// price is a route's own pricing, from exact decimal strings.
func price(t *testing.T, prompt, completion string) *catalog.Pricing {
	t.Helper()
	p, err := money.Parse(prompt)
	c, err2 := money.Parse(completion)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	return &catalog.Pricing{Prompt: p, Completion: c}
}

// route is a catalog route of weight w and, if given, its own pricing.
func route(id string, w int, zdr bool, p *catalog.Pricing) *catalog.Route {
	return &catalog.Route{ID: id, Weight: w, ZDR: zdr, Pricing: p}
}

// measured settles one successful attempt per time to first byte on route id.
func measured(t *testing.T, b *Board, clk *testutil.Clock, id string, firstBytes ...time.Duration) {
	t.Helper()
	for _, d := range firstBytes {
		if b.Settle(id, Outcome{Result: Succeeded, Started: clk.Now(), Latency: 2 * d, FirstByte: d}) == nil {
			t.Fatal("Settle got no state")
		}
	}
}

// busy starts n attempts on route id.
func busy(t *testing.T, b *Board, id string, n int64) {
	t.Helper()
	for i := int64(0); i < n; i++ {
		b.Begin(id)
	}
	waitFor(t, b, id, func(s *State) bool { return s.InFlight == n })
}

// A model's route policy chooses among the routes today's rules leave available
// (ZDR, tried, cooldowns), deterministically for the ranking policies: lowest_price by the
// route's exact price, lowest_latency by its measured time to first byte (0 before its first
// answer; a route whose error rate left it less than half its weight only when no other is
// available), least_busy by calls in flight; ties by the higher weight, then the route id.
// Weight-0 routes are standbys under every policy.
func TestRoutePolicies(t *testing.T) {
	model := catalog.Pricing{Prompt: 1_000_000, Completion: 2_000_000} // 0.000001, 0.000002 USD
	cases := []struct {
		name   string
		policy string
		routes func(t *testing.T) []*catalog.Route
		// The routes' history, in this order: outcomes ('s' succeeded, 'f' failed), then
		// successful attempts of these times to first byte, then attempts under way.
		outcomes   map[string]string
		firstBytes map[string][]time.Duration
		inFlight   map[string]int64
		zdr        bool
		tried      []string
		want       string // "": none
	}{
		{name: "lowest_price: the route with its own lower price, whatever the weights", policy: catalog.RouteLowestPrice,
			routes: func(t *testing.T) []*catalog.Route {
				return []*catalog.Route{route("a", 100, false, nil), route("b", 1, false, price(t, "0.0000009", "0.000002"))}
			}, want: "b"},
		{name: "lowest_price: a route's own higher price loses to the model's", policy: catalog.RouteLowestPrice,
			routes: func(t *testing.T) []*catalog.Route {
				return []*catalog.Route{route("a", 1, false, price(t, "0.000001", "0.000002000001")), route("b", 1, false, nil)}
			}, want: "b"},
		{name: "lowest_price: prompt plus completion, exactly (equal sums tie; the higher weight wins)", policy: catalog.RouteLowestPrice,
			routes: func(t *testing.T) []*catalog.Route {
				return []*catalog.Route{route("a", 1, false, price(t, "0.000000999999", "0.000002000001")), route("b", 2, false, nil)}
			}, want: "b"},
		{name: "lowest_price: equal prices and weights: the lower id", policy: catalog.RouteLowestPrice,
			routes: func(t *testing.T) []*catalog.Route {
				return []*catalog.Route{route("b", 1, false, nil), route("a", 1, false, nil)}
			}, want: "a"},
		{name: "lowest_price: the cheapest cooling down", policy: catalog.RouteLowestPrice,
			routes: cheapB, outcomes: map[string]string{"b": "fff"}, want: "a"},
		{name: "lowest_price: the cheapest already tried", policy: catalog.RouteLowestPrice,
			routes: cheapB, tried: []string{"b"}, want: "a"},
		{name: "lowest_price: a ZDR key skips the cheaper route without zdr", policy: catalog.RouteLowestPrice,
			routes: cheapB, zdr: true, want: "a"},
		{name: "lowest_price: a cheaper standby waits for the weighted routes", policy: catalog.RouteLowestPrice,
			routes: func(t *testing.T) []*catalog.Route {
				return []*catalog.Route{route("a", 1, false, nil), route("b", 0, false, price(t, "0", "0"))}
			}, want: "a"},
		{name: "lowest_price: the standbys by price once no weighted route is left", policy: catalog.RouteLowestPrice,
			routes: func(t *testing.T) []*catalog.Route {
				return []*catalog.Route{route("a", 1, false, nil), route("b", 0, false, nil), route("c", 0, false, price(t, "0", "0.000001"))}
			}, tried: []string{"a"}, want: "c"},
		{name: "lowest_price: nothing available", policy: catalog.RouteLowestPrice,
			routes: cheapB, tried: []string{"a", "b"}, want: ""},

		{name: "lowest_latency: the lowest measured time to first byte", policy: catalog.RouteLowestLatency,
			routes: weights(1, 1), firstBytes: map[string][]time.Duration{"a": {80 * ms}, "b": {20 * ms}}, want: "b"},
		{name: "lowest_latency: a moving average, not the last answer (a: 71.25 ms)", policy: catalog.RouteLowestLatency,
			routes: weights(1, 1), firstBytes: map[string][]time.Duration{"a": {80 * ms, 10 * ms}, "b": {70 * ms}}, want: "b"},
		{name: "lowest_latency: a route not yet measured is tried first", policy: catalog.RouteLowestLatency,
			routes: weights(1, 1), firstBytes: map[string][]time.Duration{"a": {ms}}, want: "b"},
		{name: "lowest_latency: neither measured: the higher weight", policy: catalog.RouteLowestLatency,
			routes: weights(1, 3), want: "b"},
		{name: "lowest_latency: the fastest failing 15 % (a quarter of its weight left) is pushed away", policy: catalog.RouteLowestLatency,
			routes: weights(1, 1), outcomes: map[string]string{"b": "sssssfsssssfsssssfss"},
			firstBytes: map[string][]time.Duration{"a": {90 * ms}, "b": {5 * ms}}, want: "a"},
		{name: "lowest_latency: failing 10 % keeps half its weight: still the fastest", policy: catalog.RouteLowestLatency,
			routes: weights(1, 1), outcomes: map[string]string{"b": "ssssfssssssssfssssss"},
			firstBytes: map[string][]time.Duration{"a": {90 * ms}, "b": {5 * ms}}, want: "b"},
		{name: "lowest_latency: the failing route serves when no other is available", policy: catalog.RouteLowestLatency,
			routes: weights(1, 1), outcomes: map[string]string{"a": "fff", "b": "sssssfsssssfsssssfss"}, want: "b"},
		{name: "lowest_latency: the failing weighted route before a standby", policy: catalog.RouteLowestLatency,
			routes: weights(1, 0), outcomes: map[string]string{"a": "sssssfsssssfsssssfss"},
			firstBytes: map[string][]time.Duration{"b": {ms}}, want: "a"},

		{name: "least_busy: the fewest calls in flight", policy: catalog.RouteLeastBusy,
			routes: weights(5, 1), inFlight: map[string]int64{"a": 2, "b": 1}, want: "b"},
		{name: "least_busy: as busy: the higher weight", policy: catalog.RouteLeastBusy,
			routes: weights(1, 2), inFlight: map[string]int64{"a": 1, "b": 1}, want: "b"},
		{name: "least_busy: an idle standby waits for a busy weighted route", policy: catalog.RouteLeastBusy,
			routes: weights(1, 0), inFlight: map[string]int64{"a": 3}, want: "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rs := c.routes(t)
			b, clk := newBoard(t, rs)
			for id, pattern := range c.outcomes {
				outcomes(t, b, clk, id, pattern, 0)
			}
			for id, ds := range c.firstBytes {
				measured(t, b, clk, id, ds...)
			}
			for id, n := range c.inFlight {
				busy(t, b, id, n)
			}
			m := &catalog.Model{ID: "m", Pricing: model, RoutePolicy: c.policy, Routes: rs}
			for i := 0; i < 20; i++ {
				got := ""
				if r := b.Pick(m, c.zdr, c.tried); r != nil {
					got = r.ID
				}
				if got != c.want {
					t.Fatalf("pick %d = %q, want %q", i+1, got, c.want)
				}
			}
		})
	}
}

// cheapB is a (ZDR, the model's price) and b (no zdr, its own lower price).
func cheapB(t *testing.T) []*catalog.Route {
	return []*catalog.Route{route("a", 1, true, nil), route("b", 1, false, price(t, "0.0000005", "0.000001"))}
}

// weights are routes a, b, … of these weights, at the model's prices, without zdr.
func weights(ws ...int) func(*testing.T) []*catalog.Route {
	return func(*testing.T) []*catalog.Route {
		var rs []*catalog.Route
		for i, w := range ws {
			rs = append(rs, route(string(rune('a'+i)), w, false, nil))
		}
		return rs
	}
}

// Under every policy a route whose cooldown just ended takes the next request
// as its probe, though the policy prefers another; the probe out, the policy chooses again.
// Routes resting for their error rate are the last resort, as by weight.
func TestRoutePoliciesKeepProbesAndLastResort(t *testing.T) {
	for _, policy := range []string{"", catalog.RouteWeighted, catalog.RouteLowestPrice, catalog.RouteLowestLatency, catalog.RouteLeastBusy} {
		t.Run("policy "+policy, func(t *testing.T) {
			// b is cheaper, measured faster and idle: every policy's choice but a's probe.
			rs := []*catalog.Route{route("a", 1, false, nil), route("b", 1000, false, price(t, "0", "0"))}
			b, clk := newBoard(t, rs)
			m := &catalog.Model{ID: "m", Pricing: catalog.Pricing{Prompt: 1, Completion: 1}, RoutePolicy: policy, Routes: rs}
			measured(t, b, clk, "b", ms)
			measured(t, b, clk, "a", 50*ms)
			outcomes(t, b, clk, "a", "fff", 0)
			busy(t, b, "b", 1)
			clk.Add(time.Second)
			for i, want := range []string{"a", "b", "b"} {
				if r := b.Pick(m, false, nil); r == nil || r.ID != want {
					t.Fatalf("pick %d = %v, want %s", i+1, r, want)
				}
			}
			// a rests for its error rate and b is tried: a serves as the last resort.
			b2, clk2 := newBoard(t, rs)
			outcomes(t, b2, clk2, "a", "sssfssfssfsssfssfssf", 0)
			if r := b2.Pick(m, false, []string{"b"}); r == nil || r.ID != "a" {
				t.Fatalf("last resort = %v, want a", r)
			}
		})
	}
}

// The weighted policy, named or by default, is the weights' distribution: b (weight 3)
// takes 3/4 of 100,000 picks, within 0.7 points (5 σ), a route of its own lower price
// notwithstanding.
func TestWeightedPolicyIsByWeight(t *testing.T) {
	for _, policy := range []string{"", catalog.RouteWeighted} {
		rs := []*catalog.Route{route("a", 1, false, price(t, "0", "0")), route("b", 3, false, nil)}
		b, _ := newBoard(t, rs)
		m := &catalog.Model{ID: "m", RoutePolicy: policy, Routes: rs}
		const n = 100_000
		picked := 0
		for i := 0; i < n; i++ {
			if b.Pick(m, false, nil).ID == "b" {
				picked++
			}
		}
		if share := float64(picked) / n; math.Abs(share-0.75) > 0.007 {
			t.Fatalf("policy %q: b's share %.4f, want 0.75", policy, share)
		}
	}
}
