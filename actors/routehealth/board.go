package routehealth

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"

	"github.com/modelgate/modelgate/actors/placement"
	"github.com/modelgate/modelgate/persistence/catalog"
)

// Board is the handlers' view of every route's health: one published cell per route, read
// without asking, and reports sent fire-and-forget to the route's actor.
type Board struct {
	policy  *Policy
	locator placement.Locator
	mu      sync.Mutex
	cells   atomic.Pointer[map[string]*atomic.Pointer[State]]
}

// NewBoard registers the route actor kind with the locator.
func NewBoard(l *placement.Local, p Policy) *Board {
	b := &Board{policy: &p, locator: l}
	empty := map[string]*atomic.Pointer[State]{}
	b.cells.Store(&empty)
	l.Register(Kind, 256, func(id string) actor.Producer {
		return newActor(id, b.policy, b.cell(id))
	})
	return b
}

// Sync makes the board track exactly these routes. Routes that stay keep their health (a
// catalog reload forgets nothing); removed routes' actors stop.
func (b *Board) Sync(routes []*catalog.Route) {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := *b.cells.Load()
	next := make(map[string]*atomic.Pointer[State], len(routes))
	for _, r := range routes {
		if c, ok := old[r.ID]; ok {
			next[r.ID] = c
		} else {
			next[r.ID] = new(atomic.Pointer[State])
		}
	}
	b.cells.Store(&next)
	for id := range old {
		if _, ok := next[id]; !ok {
			b.locator.Stop(Kind, id)
		}
	}
}

func (b *Board) cell(id string) *atomic.Pointer[State] {
	if c, ok := (*b.cells.Load())[id]; ok {
		return c
	}
	return new(atomic.Pointer[State]) // a route unknown to the board: tracked but unpublished
}

// State is the route's published health (nil before its first report).
func (b *Board) State(id string) *State {
	if c, ok := (*b.cells.Load())[id]; ok {
		return c.Load()
	}
	return nil
}

// Begin reports an attempt starting.
func (b *Board) Begin(route string) { b.locator.Send(Kind, route, Begin{}) }

// Answering reports that a streamed answer has begun, for the attempt that started at started
// (on the policy's clock): a half-open route's probe has passed.
func (b *Board) Answering(route string, started time.Time) {
	b.locator.Send(Kind, route, Answering{Started: started})
}

// Report reports how an attempt ended.
func (b *Board) Report(route string, o Outcome) { b.locator.Send(Kind, route, o) }

// Settle reports how an attempt ended and waits until the route's actor has published the
// state it leads to (nil if the actor does not answer within a second): for the rare
// outcome whose answer to the client depends on it, a refusal that may leave every route
// cooling down.
func (b *Board) Settle(route string, o Outcome) *State {
	o.Reply = make(chan *State, 1)
	b.locator.Send(Kind, route, o)
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case s := <-o.Reply:
		return s
	case <-t.C:
		return nil
	}
}

// Now is the policy's clock.
func (b *Board) Now() time.Time { return b.policy.Now() }

// Pick chooses one of m's routes, skipping tried routes, routes cooling down, and (for ZDR
// keys) routes without zdr. A route whose cooldown just ended gets the next request as its
// probe. Otherwise the model's route policy chooses among the available routes (routepolicy.go):
// by weight, a weight being exactly its share shrunk by the route's error rate, unless the
// model says otherwise. Weight-0 routes are standbys under every policy, used only when no
// weighted route is available. Routes resting for their error rate are the last resort.
func (b *Board) Pick(m *catalog.Model, zdrOnly bool, tried []string) *catalog.Route {
	now := b.policy.Now()
	var pool [8]candidate
	cands := pool[:0]
	for _, rt := range m.Routes {
		if excluded(rt, zdrOnly, tried) {
			continue
		}
		st := b.State(rt.ID)
		if rt.Weight > 0 && st.awaitsProbe(now) {
			if st.Claim(now) {
				return rt // a probe as soon as the cooldown is over: recovery waits for no one
			}
			continue
		}
		if st.Available(now) {
			cands = append(cands, candidate{route: rt, state: st, weight: st.Weight(rt.Weight, now)})
		}
	}
	for len(cands) > 0 {
		i := choose(m, cands)
		if b.State(cands[i].route.ID).Claim(now) {
			return cands[i].route
		}
		// lost the half-open probe to another request
		cands = append(cands[:i], cands[i+1:]...)
	}
	return b.lastResort(m.Routes, zdrOnly, tried, now)
}

// Release gives back the half-open probe of a route that Pick chose but the request could not
// use (it cannot carry the request): without it the claim would be held with no outcome to
// end it, and the route would wait half-open for ever.
func (b *Board) Release(route string) {
	if st := b.State(route); st != nil && st.Probing {
		st.probe.Store(false)
	}
}

// lastResort picks, by catalog weight, among the routes resting for their error rate.
func (b *Board) lastResort(routes []*catalog.Route, zdrOnly bool, tried []string, now time.Time) *catalog.Route {
	var pool [8]candidate
	cands := pool[:0]
	for _, rt := range routes {
		if excluded(rt, zdrOnly, tried) || !b.State(rt.ID).LastResort(now) {
			continue
		}
		cands = append(cands, candidate{route: rt, weight: float64(rt.Weight)})
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[weightedIndex(cands)].route
}

// CanServe reports whether Pick would find a route among routes, for zdrOnly, skipping
// those in skip, without claiming a probe.
func (b *Board) CanServe(routes []*catalog.Route, zdrOnly bool, skip []string) bool {
	now := b.policy.Now()
	for _, rt := range routes {
		if excluded(rt, zdrOnly, skip) {
			continue
		}
		if st := b.State(rt.ID); st.Available(now) || st.LastResort(now) {
			return true
		}
	}
	return false
}

// Wait is how long until the first of routes takes requests again, counting only ZDR
// routes for zdrOnly and none in skip: the real end of the earliest cooldown, 0 when one
// of them is ready now (or none qualifies). Routes tried in this request count too: a
// client told when to come back needs the model's state, not the request's.
func (b *Board) Wait(routes []*catalog.Route, zdrOnly bool, skip []string) time.Duration {
	now := b.policy.Now()
	wait, seen := time.Duration(0), false
	for _, rt := range routes {
		if excluded(rt, zdrOnly, skip) {
			continue
		}
		if w := b.State(rt.ID).Remaining(now); !seen || w < wait {
			wait, seen = w, true
		}
	}
	return wait
}

// excluded reports whether a request may not use rt whatever its health: a ZDR key and a
// route without zero data retention, or a route the request has tried (skip).
func excluded(rt *catalog.Route, zdrOnly bool, skip []string) bool {
	return zdrOnly && !rt.ZDR || slices.Contains(skip, rt.ID)
}
