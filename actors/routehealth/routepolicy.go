package routehealth

import (
	"math/rand/v2"

	"github.com/modelgate/modelgate/persistence/catalog"
)

// candidate is a route Pick may choose, with its health as Pick read it.
type candidate struct {
	route  *catalog.Route
	state  *State  // nil before the route's first report
	weight float64 // its weight now: the catalog weight shrunk by its error rate
}

// choose is the model's route policy: the index of the candidate it takes first (cands is
// not empty). Pick asks again, without that one, when it loses a half-open probe. The
// policies are switches, not values behind an interface: an indirect call would move Pick's
// candidates to the heap on every request.
func choose(m *catalog.Model, cands []candidate) int {
	switch m.RoutePolicy {
	case catalog.RouteLowestPrice, catalog.RouteLowestLatency, catalog.RouteLeastBusy:
		return lowest(m, cands)
	}
	return weightedIndex(cands) // weighted, the default (the catalog refuses unknown names)
}

// measure is what a ranking policy minimizes for a candidate, exactly: lowest_price the
// route's own price (Route.Cost), prompt plus completion per token; lowest_latency its
// measured time to first byte, 0 before its first measured answer so that a new route is
// tried, and measured, first; least_busy its attempts under way.
func measure(m *catalog.Model, c *candidate) int64 {
	switch {
	case m.RoutePolicy == catalog.RouteLowestPrice:
		p := c.route.Cost(m)
		return int64(p.Prompt + p.Completion)
	case c.state == nil:
		return 0
	case m.RoutePolicy == catalog.RouteLowestLatency:
		return int64(c.state.TTFT)
	}
	return c.state.InFlight
}

// lowest is a ranking policy's choice, the candidate of the lowest measure: any weighted
// route before the standbys (weight 0); for lowest_latency, routes whose error rate left
// them less than half their weight only after healthier ones (a fast route must not keep
// its traffic by failing); then the lowest measure, then the higher catalog weight, then
// the lower route id, so that the choice is deterministic.
func lowest(m *catalog.Model, cands []candidate) int {
	shuns := m.RoutePolicy == catalog.RouteLowestLatency
	best, bestKey := 0, rankKey{}
	for i := range cands {
		c := &cands[i]
		k := rankKey{standby: c.route.Weight == 0, measure: measure(m, c)}
		if shuns {
			k.failing = c.weight < float64(c.route.Weight)/2
		}
		if i == 0 || k.before(bestKey, c.route, cands[best].route) {
			best, bestKey = i, k
		}
	}
	return best
}

// rankKey orders candidates under a ranking policy (lowest).
type rankKey struct {
	standby bool // catalog weight 0
	failing bool // its error rate left it less than half its weight
	measure int64
}

// before reports whether a candidate of key k and route r goes before one of key o and route
// ro.
func (k rankKey) before(o rankKey, r, ro *catalog.Route) bool {
	switch {
	case k.standby != o.standby:
		return o.standby
	case k.failing != o.failing:
		return o.failing
	case k.measure != o.measure:
		return k.measure < o.measure
	case r.Weight != ro.Weight:
		return r.Weight > ro.Weight
	}
	return r.ID < ro.ID
}

// weightedIndex picks index i with probability weight_i/Σweight, or uniformly when every
// weight is 0 (standbys only).
func weightedIndex(cands []candidate) int {
	total := 0.0
	for _, c := range cands {
		total += c.weight
	}
	if total <= 0 {
		return rand.IntN(len(cands))
	}
	n, last := rand.Float64()*total, 0
	for i, c := range cands {
		if c.weight <= 0 {
			continue
		}
		if n < c.weight {
			return i
		}
		n, last = n-c.weight, i
	}
	return last // rounding left n at the very end
}
