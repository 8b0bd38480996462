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
	Refused                   // billing refusal: the operator's quota or credit is gone at the provider
)

// Begin is told when an attempt starts.
type Begin struct{}

// Outcome is told when an attempt ends.
type Outcome struct {
	Result     Result
	RetryAfter time.Duration // the provider's retry hint (RateLimited, Refused)
	Latency    time.Duration
	Status     int
	Started    time.Time // when the attempt began, on the policy's clock (zero: unknown)
	Message    string    // the provider's own message (RateLimited, Refused)
	// Reply, when set, receives the state this outcome led to once it is published.
	Reply chan *State
}

// Fail answers a waiting Settle at once (with no state) when recording the outcome panicked.
func (o Outcome) Fail(error) {
	if o.Reply != nil {
		select {
		case o.Reply <- nil:
		default:
		}
	}
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
		if s.Latency == 0 {
			s.Latency = m.Latency
		} else {
			s.Latency = (s.Latency*7 + m.Latency) / 8
		}
		if !m.Started.IsZero() && m.Started.Before(s.RefusedSince) && now.Before(s.CooldownUntil) {
			break // an attempt older than the provider's refusal says nothing about it now
		}
		s.Streak, s.Cooldowns, s.Probing, s.CooldownUntil, s.RefusedSince = 0, 0, false, time.Time{}, time.Time{}
	case RateLimited, Refused:
		s.Failures++
		s.Refusal, s.RefusedAt = m.Message, now
		wait, reason := a.refusalCooldown(m)
		// The provider said when to come back, or that it will not soon: no probe and no
		// back-off growth. A longer cooldown already in force stands.
		if until := now.Add(wait); until.After(s.CooldownUntil) {
			s.CooldownUntil, s.Probing, s.Reason, s.RefusedSince = until, false, reason, now
		}
	case Failed:
		s.Failures++
		s.Streak++
		switch {
		case now.Before(s.CooldownUntil):
			keepProbe = true // a late report from before the cooldown: it already counted
		case s.Probing, s.Streak >= a.policy.MaxFails:
			s.Cooldowns++
			s.CooldownUntil, s.Probing, s.Reason = now.Add(a.backoff(s.Cooldowns)), true, ReasonFailures
		}
	}
	a.publish(s, keepProbe)
	if m.Reply != nil {
		select {
		case m.Reply <- s:
		default: // the asker gave up
		}
	}
}

// refusalCooldown is how long a refusal rests the route: at least the provider's hint; a
// billing refusal at least the policy's long cooldown, a 429 without a hint the short one.
func (a *routeActor) refusalCooldown(m Outcome) (time.Duration, string) {
	if m.Result == Refused {
		long := a.policy.BillingCooldown
		if long <= 0 {
			long = DefaultBillingCooldown
		}
		return max(m.RetryAfter, long), ReasonBilling
	}
	if m.RetryAfter > 0 {
		return m.RetryAfter, ReasonRateLimit
	}
	return a.policy.RateLimited, ReasonRateLimit
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
