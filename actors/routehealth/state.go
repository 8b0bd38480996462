// Package routehealth owns the health of upstream routes: one actor per route records
// outcomes and publishes an immutable snapshot that request handlers read without asking.
package routehealth

import (
	"sync/atomic"
	"time"
)

// Policy is passive health checking in numbers an operator can read.
type Policy struct {
	MaxFails     int           // consecutive failures that start a cooldown
	BaseCooldown time.Duration // first cooldown; each failed probe doubles it
	MaxCooldown  time.Duration
	RateLimited  time.Duration // cooldown after a 429 without a retry hint
	// BillingCooldown is how long a route rests after its provider refused for billing (the
	// operator's quota or credit is gone there), or longer if the provider hinted longer. It
	// gives the operator time to top up without every request paying a failed attempt.
	// 0 means DefaultBillingCooldown.
	BillingCooldown time.Duration
	Now             func() time.Time
}

// DefaultBillingCooldown is the billing cooldown of a policy that does not set one.
const DefaultBillingCooldown = 15 * time.Minute

// DefaultPolicy: three failures in a row cool a route for 5 s, growing to 5 min; a 429
// without a hint cools it for 5 s, a billing refusal for 15 min.
func DefaultPolicy() Policy {
	return Policy{MaxFails: 3, BaseCooldown: 5 * time.Second, MaxCooldown: 5 * time.Minute, RateLimited: 5 * time.Second,
		BillingCooldown: DefaultBillingCooldown, Now: time.Now}
}

// Why a cooldown started (State.Reason); bounded, so they can be metric labels.
const (
	ReasonFailures  = "failures"   // consecutive failed attempts or a failed probe
	ReasonRateLimit = "rate_limit" // the provider said 429
	ReasonBilling   = "billing"    // the provider refused for the operator's quota or credit
)

// State is one route's published health. Everything but the probe claim is immutable.
type State struct {
	Route         string
	CooldownUntil time.Time // zero when healthy
	Probing       bool      // the cooldown was from failures: the first call after it is a probe
	Streak        int       // consecutive failures
	Cooldowns     int       // cooldowns in a row, for the back-off
	InFlight      int64
	Successes     uint64
	Failures      uint64
	Latency       time.Duration // moving average of successful attempts
	// Reason is why the current (or last) cooldown started: ReasonFailures, ReasonRateLimit
	// or ReasonBilling; empty before the first.
	Reason string
	// RefusedSince is when the provider's current refusal cooldown (rate limit or billing)
	// began; an attempt that started before it cannot end it by succeeding.
	RefusedSince time.Time
	// Refusal is the provider's message with its last refusal (a 429 or a billing refusal),
	// at RefusedAt: operator information, never shown to clients.
	Refusal   string
	RefusedAt time.Time
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

// Healthy reports a route with no recent failures at all.
func (s *State) Healthy() bool { return s == nil || s.Streak == 0 && s.CooldownUntil.IsZero() }

func (s *State) clone() *State {
	return &State{
		Route: s.Route, CooldownUntil: s.CooldownUntil, Probing: s.Probing, Streak: s.Streak,
		Cooldowns: s.Cooldowns, InFlight: s.InFlight, Successes: s.Successes, Failures: s.Failures,
		Latency: s.Latency, Reason: s.Reason, RefusedSince: s.RefusedSince, Refusal: s.Refusal, RefusedAt: s.RefusedAt,
	}
}

// Remaining is how long until the route takes requests again (0: now). A route whose
// cooldown has passed counts as ready even while its half-open probe is out.
func (s *State) Remaining(now time.Time) time.Duration {
	if s == nil || !now.Before(s.CooldownUntil) {
		return 0
	}
	return s.CooldownUntil.Sub(now)
}
