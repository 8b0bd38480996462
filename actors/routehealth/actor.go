package routehealth

import (
	"sync/atomic"
	"time"

	"github.com/anthdm/hollywood/actor"
)

// Kind is the actor kind for the locator.
const Kind = "route"

// Outcome kinds of one attempt.
type Result int

const (
	Succeeded   Result = iota // includes client errors: the route itself worked
	Failed                    // connect error, time-out, 5xx, broken stream
	RateLimited               // 429 from the upstream
)

// Begin is told when an attempt starts.
type Begin struct{}

// Outcome is told when an attempt ends.
type Outcome struct {
	Result     Result
	RetryAfter time.Duration // from the upstream's 429
	Latency    time.Duration
	Status     int
}

// Snapshot asks for the current state (cold path; handlers read the published pointer).
type Snapshot struct{ Reply chan *State }

// routeActor is the only writer of its route's state.
type routeActor struct {
	policy Policy
	cell   *atomic.Pointer[State]
	state  *State
}

func newActor(id string, p Policy, cell *atomic.Pointer[State]) actor.Producer {
	return func() actor.Receiver {
		st := cell.Load()
		if st == nil {
			st = &State{Route: id}
		} else {
			st = st.clone() // a restarted actor resumes from what it published
		}
		return &routeActor{policy: p, cell: cell, state: st}
	}
}

func (a *routeActor) Receive(c *actor.Context) {
	switch m := c.Message().(type) {
	case Begin:
		s := a.state.clone()
		s.InFlight++
		a.publish(s, false)
	case Outcome:
		a.record(m)
	case Snapshot:
		m.Reply <- a.cell.Load()
	}
}

func (a *routeActor) record(m Outcome) {
	s := a.state.clone()
	if s.InFlight > 0 {
		s.InFlight--
	}
	now := a.policy.Now()
	keepProbe := false
	switch m.Result {
	case Succeeded:
		s.Successes++
		s.Streak, s.Cooldowns, s.Probing, s.CooldownUntil = 0, 0, false, time.Time{}
		if s.Latency == 0 {
			s.Latency = m.Latency
		} else {
			s.Latency = (s.Latency*7 + m.Latency) / 8
		}
	case RateLimited:
		s.Failures++
		wait := m.RetryAfter
		if wait <= 0 {
			wait = a.policy.RateLimited
		}
		// The upstream said when to come back: no probe needed, and no back-off growth.
		s.CooldownUntil, s.Probing = now.Add(wait), false
	case Failed:
		s.Failures++
		s.Streak++
		switch {
		case now.Before(s.CooldownUntil):
			keepProbe = true // a late report from before the cooldown: it already counted
		case s.Probing, s.Streak >= a.policy.MaxFails:
			s.Cooldowns++
			s.CooldownUntil, s.Probing = now.Add(a.backoff(s.Cooldowns)), true
		}
	}
	a.publish(s, keepProbe)
}

func (a *routeActor) backoff(n int) time.Duration {
	d := a.policy.BaseCooldown
	for i := 1; i < n && d < a.policy.MaxCooldown; i++ {
		d *= 2
	}
	return min(d, a.policy.MaxCooldown)
}

// publish swaps in a new snapshot. A fresh State has its probe unclaimed, which opens the
// next half-open window; carrying the claim over keeps a probe in flight exclusive.
func (a *routeActor) publish(s *State, keepProbe bool) {
	if old := a.cell.Load(); old != nil && (keepProbe || s.CooldownUntil.Equal(old.CooldownUntil) && s.Probing == old.Probing) {
		s.probe.Store(old.probe.Load())
	}
	a.state = s
	a.cell.Store(s)
}
