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
	RateLimited  time.Duration // cooldown after a 429 without Retry-After
	Now          func() time.Time
}

// DefaultPolicy: three failures in a row cool a route for 5 s, growing to 5 min.
func DefaultPolicy() Policy {
	return Policy{MaxFails: 3, BaseCooldown: 5 * time.Second, MaxCooldown: 5 * time.Minute, RateLimited: 5 * time.Second, Now: time.Now}
}

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
	probe         atomic.Bool
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
		Latency: s.Latency,
	}
}
