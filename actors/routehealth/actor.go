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

// Answering is told when a streamed answer has begun (its first content is on its way to the
// client): a probe is judged by it, so a long answer does not keep its route half-open
// until it ends. The attempt's Outcome follows at its end as for any attempt.
type Answering struct {
	Started time.Time // when the attempt began, on the policy's clock
}

// Outcome is told when an attempt ends.
type Outcome struct {
	Result     Result
	RetryAfter time.Duration // the provider's retry hint (RateLimited, Refused)
	Latency    time.Duration
	// FirstByte is the attempt's time to first byte (0: unknown): for a stream when its
	// answer began (the Answering moment), for a whole answer when its headers arrived.
	FirstByte time.Duration
	Status    int
	Started   time.Time // when the attempt began, on the policy's clock (zero: unknown)
	Message   string    // the provider's own message (RateLimited, Refused)
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
	policy *Policy
	cell   *atomic.Pointer[State]
	state  *State
}

func newActor(id string, p *Policy, cell *atomic.Pointer[State]) actor.Producer {
	return func() actor.Receiver {
		st := cell.Load()
		if st == nil {
			st = &State{Route: id, policy: p}
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
		a.publish(s)
	case Answering:
		if s := a.state; s.Probing && !a.policy.Now().Before(s.CooldownUntil) && !m.Started.Before(s.CooldownSince) {
			s = s.clone()
			s.restore()
			a.publish(s)
		}
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
	// An attempt that started before the cooldown in force says nothing about the route
	// since: it neither ends the cooldown nor extends it.
	fresh := m.Started.IsZero() || !m.Started.Before(s.CooldownSince)
	cooling := now.Before(s.CooldownUntil)
	switch m.Result {
	case Succeeded:
		s.Successes++
		s.Latency = movingAverage(s.Latency, m.Latency)
		if m.FirstByte > 0 {
			s.TTFT = movingAverage(s.TTFT, m.FirstByte)
		}
		s.window.add(a.policy.step(), now, false)
		s.Streak = 0
		switch {
		case !fresh:
		case cooling && s.Reason == ReasonErrorRate && s.Probing:
			// a last resort answered: the route rests on until its probe
		default:
			s.restore()
			// The window may reach MinCalls on a success: judged now, or the route's weight
			// would be 0 with no failure to come that rests it, starved but never cooled.
			if a.tripsErrorRate(s, now) {
				a.coolForErrorRate(s, now)
			}
		}
	case RateLimited, Refused:
		s.Failures++
		s.Refusal, s.RefusedAt = m.Message, now
		wait, reason := a.refusalCooldown(m)
		// The provider said when to come back, or that it will not soon: no probe and no
		// back-off growth. A longer cooldown already in force stands.
		if until := now.Add(wait); until.After(s.CooldownUntil) {
			s.CooldownUntil, s.Probing, s.Reason, s.CooldownSince = until, false, reason, now
		}
	case Failed:
		s.Failures++
		s.Streak++
		s.window.add(a.policy.step(), now, true)
		a.judgeFailure(s, now, fresh, cooling)
	}
	a.publish(s)
	if m.Reply != nil {
		select {
		case m.Reply <- s:
		default: // the asker gave up
		}
	}
}

// movingAverage adds sample d to the average avg (0: none yet), weighing it 1/8.
func movingAverage(avg, d time.Duration) time.Duration {
	if avg == 0 {
		return d
	}
	return (avg*7 + d) / 8
}

// judgeFailure decides whether a failed attempt cools the route, and how.
func (a *routeActor) judgeFailure(s *State, now time.Time, fresh, cooling bool) {
	resting := s.Probing && s.Reason == ReasonErrorRate
	switch {
	case !fresh:
		// from before the cooldown: already judged
	case cooling && resting && s.Streak >= a.policy.MaxFails:
		a.coolForFailures(s, now) // used as a last resort, it failed again and again
	case cooling:
	case resting:
		a.coolForErrorRate(s, now) // its probe failed: rest as long again
	case s.Probing, s.Streak >= a.policy.MaxFails:
		a.coolForFailures(s, now)
	case a.tripsErrorRate(s, now):
		a.coolForErrorRate(s, now)
	}
}

func (a *routeActor) coolForFailures(s *State, now time.Time) {
	s.Cooldowns++
	s.CooldownUntil, s.CooldownSince, s.Probing, s.Reason = now.Add(a.backoff(s.Cooldowns)), now, true, ReasonFailures
}

func (a *routeActor) coolForErrorRate(s *State, now time.Time) {
	s.CooldownUntil, s.CooldownSince, s.Probing, s.Reason = now.Add(a.policy.errorCooldown()), now, true, ReasonErrorRate
}

// tripsErrorRate reports a window of at least MinCalls attempts failing MaxErrorRate or more.
func (a *routeActor) tripsErrorRate(s *State, now time.Time) bool {
	if !a.policy.judgesErrors() {
		return false
	}
	calls, failed := s.Window(now)
	return calls > 0 && calls >= a.policy.MinCalls && float64(failed) >= a.policy.MaxErrorRate*float64(calls)
}

// restore is a success that ends the route's trouble: no streak, no cooldown, no back-off.
// A route that passed its probe starts its window afresh: it restores it to its full weight.
func (s *State) restore() {
	if s.Probing {
		s.window = window{}
	}
	s.Streak, s.Cooldowns, s.Probing, s.CooldownUntil, s.CooldownSince = 0, 0, false, time.Time{}, time.Time{}
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
// next half-open window; a state whose cooldown did not move keeps the claim, so a probe in
// flight stays exclusive.
func (a *routeActor) publish(s *State) {
	if old := a.cell.Load(); old != nil && s.CooldownUntil.Equal(old.CooldownUntil) && s.Probing == old.Probing {
		s.probe.Store(old.probe.Load())
	}
	a.state = s
	a.cell.Store(s)
}
