// Package routehealth owns the health of upstream routes: one actor per route records
// outcomes and publishes an immutable snapshot that request handlers read without asking.
package routehealth

import (
	"sync/atomic"
	"time"
)

// Policy is passive health checking in numbers an operator can read. A field left 0 turns
// its rule off, except where it says otherwise.
type Policy struct {
	MaxFails     int           // consecutive failures that start a cooldown
	BaseCooldown time.Duration // first cooldown; each failed probe doubles it
	// MaxCooldown caps the back-off. It bounds how long a healed route waits for its next
	// probe, so it is the recovery time after an outage (plus the probe's own answer).
	MaxCooldown time.Duration
	RateLimited time.Duration // cooldown after a 429 without a retry hint
	// BillingCooldown is how long a route rests after its provider refused for billing (the
	// operator's quota or credit is gone at the provider), or longer if the provider hinted longer. It
	// gives the operator time to top up without every request paying a failed attempt.
	// 0 means DefaultBillingCooldown.
	BillingCooldown time.Duration
	// ErrorWindow is how far back the error-rate rule looks at a route's attempts (in tenths:
	// 30 s moves in 3 s steps). With MaxErrorRate it turns on the rule and the weighting.
	ErrorWindow time.Duration
	// MinCalls is how many attempts the window must hold before the route is judged by its
	// error rate: fewer say too little (one failure in two calls is not a 50 % route).
	MinCalls int
	// MaxErrorRate is the share of failed attempts in the window that cools the route.
	// Below it the route's weight shrinks with its error rate: weight × (1 − rate/MaxErrorRate).
	MaxErrorRate float64
	// ErrorCooldown is how long a route cooled for its error rate rests, and rests again
	// after a failed probe. Resting, it is still a last resort: a request no other route may
	// take uses it, since a route that answers most calls beats none. 0 means ErrorWindow.
	ErrorCooldown time.Duration
	Now           func() time.Time
}

// DefaultBillingCooldown is the billing cooldown of a policy that does not set one.
const DefaultBillingCooldown = 15 * time.Minute

// DefaultPolicy: three failures in a row cool a route for 1 s, doubling per failed probe to
// at most 4 s, so a healed route is back within 5 s; a 429 without a hint cools it for 5 s,
// a billing refusal for 15 min. Over the last 30 s, from 20 attempts on, a route failing 20 %
// of them rests for 30 s, and one failing less loses weight in proportion.
func DefaultPolicy() Policy {
	return Policy{MaxFails: 3, BaseCooldown: time.Second, MaxCooldown: 4 * time.Second, RateLimited: 5 * time.Second,
		BillingCooldown: DefaultBillingCooldown, ErrorWindow: 30 * time.Second, MinCalls: 20, MaxErrorRate: 0.2,
		ErrorCooldown: 30 * time.Second, Now: time.Now}
}

// judgesErrors reports whether the error-rate rule and the weighting are on.
func (p *Policy) judgesErrors() bool { return p.ErrorWindow > 0 && p.MaxErrorRate > 0 }

// step is the window's step length (0 when the rule is off).
func (p *Policy) step() time.Duration {
	if !p.judgesErrors() {
		return 0
	}
	return p.ErrorWindow / windowSteps
}

func (p *Policy) errorCooldown() time.Duration {
	if p.ErrorCooldown > 0 {
		return p.ErrorCooldown
	}
	return p.ErrorWindow
}

// Why a cooldown started (State.Reason); bounded, so they can be metric labels.
const (
	ReasonFailures  = "failures"   // consecutive failed attempts or a failed probe
	ReasonErrorRate = "error_rate" // too many failed attempts in the window
	ReasonRateLimit = "rate_limit" // the provider said 429
	ReasonBilling   = "billing"    // the provider refused for the operator's quota or credit
)

// A route's health as an operator reads it (State.Health); bounded, so they can be metric
// labels.
const (
	Healthy  = "healthy"   // takes its full weight
	Degraded = "degraded"  // takes traffic, its weight shrunk by its error rate
	Cooling  = "cooling"   // a cooldown is in force (for its error rate: a last resort only)
	HalfOpen = "half_open" // the cooldown is over; the next request is its probe, or the probe is out
)

// HealthStates lists every value of State.Health.
var HealthStates = []string{Healthy, Degraded, Cooling, HalfOpen}

// State is one route's published health. Everything but the probe claim is immutable.
type State struct {
	Route         string
	CooldownUntil time.Time // zero when healthy
	// CooldownSince is when the cooldown in force (or its half-open wait) began: an attempt
	// that started before it says nothing about the route since, neither ending it nor
	// extending it.
	CooldownSince time.Time
	Probing       bool // the cooldown was from failures or the error rate: the first call after it is a probe
	Streak        int  // consecutive failures
	Cooldowns     int  // failure cooldowns in a row, for the back-off
	InFlight      int64
	Successes     uint64
	Failures      uint64
	Latency       time.Duration // moving average of successful attempts
	// TTFT is the moving average of successful attempts' time to first byte: a stream's
	// first content, a whole answer's headers (0 before the first measured one). The
	// lowest_latency route policy picks by it.
	TTFT time.Duration
	// Reason is why the current (or last) cooldown started: ReasonFailures, ReasonErrorRate,
	// ReasonRateLimit or ReasonBilling; empty before the first.
	Reason string
	// Refusal is the provider's message with its last refusal (a 429 or a billing refusal),
	// at RefusedAt: operator information, never shown to clients.
	Refusal   string
	RefusedAt time.Time
	window    window
	policy    *Policy
	probe     atomic.Bool
}

// Available reports whether a request may try this route now. A route whose cooldown has
// passed admits exactly one probe; the caller that wins Claim sends it.
func (s *State) Available(now time.Time) bool {
	if s == nil {
		return true
	}
	if now.Before(s.CooldownUntil) {
		return false
	}
	return !s.Probing || !s.probe.Load()
}

// LastResort reports a route resting for its error rate (cooling, or its probe out): skipped
// while another route may take a request, used when none may.
func (s *State) LastResort(now time.Time) bool {
	return s != nil && s.Probing && s.Reason == ReasonErrorRate && !s.Available(now)
}

// Claim takes the half-open probe (true for a healthy route). Only one caller wins per cooldown.
func (s *State) Claim(now time.Time) bool {
	if s == nil {
		return true
	}
	if now.Before(s.CooldownUntil) {
		return false
	}
	if !s.Probing {
		return true
	}
	return s.probe.CompareAndSwap(false, true)
}

// awaitsProbe reports a route whose cooldown is over and whose probe nobody has taken yet.
func (s *State) awaitsProbe(now time.Time) bool {
	return s != nil && s.Probing && !now.Before(s.CooldownUntil) && !s.probe.Load()
}

// Healthy reports a route with no recent failures at all.
func (s *State) Healthy() bool { return s == nil || s.Streak == 0 && s.CooldownUntil.IsZero() }

// Health is the route's state at now: Healthy, Degraded, Cooling or HalfOpen.
func (s *State) Health(now time.Time) string {
	switch {
	case s == nil:
		return Healthy
	case now.Before(s.CooldownUntil):
		return Cooling
	case s.Probing:
		return HalfOpen
	case s.ErrorRate(now) > 0:
		return Degraded
	}
	return Healthy
}

// Window is the attempts that ended in the error-rate window at now, and the failed ones.
func (s *State) Window(now time.Time) (calls, failed int) {
	if s == nil || s.policy == nil {
		return 0, 0
	}
	return s.window.counts(s.policy.step(), now)
}

// ErrorRate is the share of failed attempts in the window at now, as the route is judged
// by it: 0 while the window holds fewer than MinCalls attempts.
func (s *State) ErrorRate(now time.Time) float64 {
	calls, failed := s.Window(now)
	if calls == 0 || calls < s.policy.MinCalls {
		return 0
	}
	return float64(failed) / float64(calls)
}

// Weight is the share a route of catalog weight w takes among the routes available with it:
// w shrunk by its error rate, reaching 0 where the rate cools the route; 0 while it cannot
// take a request.
func (s *State) Weight(w int, now time.Time) float64 {
	if !s.Available(now) {
		return 0
	}
	rate := s.ErrorRate(now)
	if rate == 0 {
		return float64(w)
	}
	return float64(w) * max(0, 1-rate/s.policy.MaxErrorRate)
}

func (s *State) clone() *State {
	return &State{
		Route: s.Route, CooldownUntil: s.CooldownUntil, CooldownSince: s.CooldownSince, Probing: s.Probing, Streak: s.Streak,
		Cooldowns: s.Cooldowns, InFlight: s.InFlight, Successes: s.Successes, Failures: s.Failures,
		Latency: s.Latency, TTFT: s.TTFT, Reason: s.Reason, Refusal: s.Refusal, RefusedAt: s.RefusedAt,
		window: s.window, policy: s.policy,
	}
}

// Remaining is how long until the route takes requests again (0: now). A route whose
// cooldown has passed counts as ready even while its half-open probe is out, and so does
// one resting for its error rate: it takes a request no other route may.
func (s *State) Remaining(now time.Time) time.Duration {
	if s == nil || !now.Before(s.CooldownUntil) || s.LastResort(now) {
		return 0
	}
	return s.CooldownUntil.Sub(now)
}
