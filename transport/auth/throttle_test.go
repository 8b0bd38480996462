package auth

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLoginLockoutSparesTheOwner: failed logins lock an e-mail out from the address they
// came from only (and an address out from every e-mail past its own limit); from everywhere
// they only delay the e-mail's failing answers, growing to at most 3 s. The owner's right
// password from another address is answered at once while the attacker stays locked out, and
// the lockout ends with its window.
func TestLoginLockoutSparesTheOwner(t *testing.T) {
	e := newEnv(t, Limits{LoginPerEmailAddress: Limit{3, 15 * time.Minute}, LoginPerAddress: Limit{5, time.Hour},
		LoginDelay:     Delay{First: 250 * time.Millisecond, Max: 3 * time.Second, Window: 15 * time.Minute},
		SignupPerEmail: Limit{10, time.Hour}, SignupPerAddress: Limit{10, time.Hour}, ForgotPerEmail: Limit{1, time.Hour}, ForgotPerAddress: Limit{10, time.Hour}})
	var mu sync.Mutex
	var delays []time.Duration
	e.srv.sleep = func(_ context.Context, d time.Duration) { mu.Lock(); delays = append(delays, d); mu.Unlock() }
	e.signupVerified("ada@example.com", "ada's good password")
	const (
		wrong = `{"email":"ada@example.com","password":"not her password"}`
		right = `{"email":"ada@example.com","password":"ada's good password"}`
	)
	const owner, attacker, another = "127.0.0.1", "127.0.0.2", "127.0.0.3"
	for i, s := range []struct {
		from, body string
		status     int
		retryAfter string
		delay      time.Duration // the answer's delay; 0: none
	}{
		{attacker, wrong, 401, "", 250 * time.Millisecond},
		{attacker, wrong, 401, "", 500 * time.Millisecond},
		{attacker, wrong, 401, "", time.Second},
		{attacker, right, 429, "900", 0}, // locked out from this address, even with the password
		{owner, right, 200, "", 0},       // not from another
		{another, wrong, 401, "", 2 * time.Second},
		{another, wrong, 401, "", 3 * time.Second},
		{another, wrong, 401, "", 3 * time.Second}, // the cap
		{another, right, 429, "900", 0},
		{owner, wrong, 401, "", 3 * time.Second},
		{owner, right, 200, "", 0},
		{attacker, wrong, 429, "900", 0},
	} {
		delays = nil
		a := e.callFrom(s.from, "POST", "/auth/login", s.body, "", "")
		var want []time.Duration
		if s.delay > 0 {
			want = []time.Duration{s.delay}
		}
		if a.status != s.status || a.header.Get("Retry-After") != s.retryAfter || len(delays) != len(want) || (len(want) == 1 && delays[0] != want[0]) {
			t.Fatalf("attempt %d from %s: %d Retry-After %q delays %v, want %d %q %v: %s", i+1, s.from, a.status, a.header.Get("Retry-After"), delays, s.status, s.retryAfter, want, a.body)
		}
		if s.status == 429 && !strings.Contains(a.body, `"code":"too_many_attempts"`) {
			t.Fatalf("attempt %d: %s", i+1, a.body)
		}
	}
	// Per address: five failures over any e-mails lock the address out of every e-mail.
	for _, email := range []string{"v", "w", "x", "y", "z"} {
		if a := e.callFrom("127.0.0.4", "POST", "/auth/login", `{"email":"`+email+`@example.com","password":"whatever it is"}`, "", ""); a.status != 401 {
			t.Fatalf("failure for %s: %d %s", email, a.status, a.body)
		}
	}
	if a := e.callFrom("127.0.0.4", "POST", "/auth/login", right, "", ""); a.status != 429 || a.header.Get("Retry-After") != "3600" {
		t.Fatalf("6th attempt from one address: %d %q %s", a.status, a.header.Get("Retry-After"), a.body)
	}
	e.clock.Add(15 * time.Minute)
	if a := e.callFrom(attacker, "POST", "/auth/login", right, "", ""); a.status != 200 {
		t.Fatalf("after the window: %d %s", a.status, a.body)
	}
	// Forgotten-password requests: one per e-mail per hour here.
	e.call("POST", "/auth/password/forgot", `{"email":"ada@example.com"}`, "", "")
	e.smtp.Next(t)
	if a := e.call("POST", "/auth/password/forgot", `{"email":"ada@example.com"}`, "", ""); a.status != 429 || a.header.Get("Retry-After") != "3600" {
		t.Fatalf("second forgot: %d %q", a.status, a.header.Get("Retry-After"))
	}
}

// TestLoginDelay: First after the first failure, doubling, never over Max; none without one.
func TestLoginDelay(t *testing.T) {
	d := DefaultLimits.LoginDelay
	for n, want := range []time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second} {
		if got := d.after(n); got != want {
			t.Errorf("failure %d: %v, want %v", n, got, want)
		}
	}
	if got := d.after(1 << 20); got != 3*time.Second {
		t.Errorf("failure 2^20: %v", got)
	}
	if got := (Delay{}).after(5); got != 0 {
		t.Errorf("no delay set: %v", got)
	}
}
