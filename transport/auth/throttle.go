package auth

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelgate/modelgate/transport/authlimit"
	"github.com/modelgate/modelgate/transport/peer"
	"github.com/modelgate/modelgate/transport/respond"
)

// Limit is at most Max counted events per Window (a fixed window from the first event).
type Limit struct {
	Max    int
	Window time.Duration
}

// Limits are the throttles of the sign-in endpoints. They are in memory on each node: a
// cluster's limit is per node (docs/decisions.md, "Sign-up, sessions and disabled accounts").
type Limits struct {
	// Failed logins lock an e-mail out from one address (LoginPerEmailAddress) and an address
	// out from every e-mail (LoginPerAddress). An e-mail's failures from everywhere only slow
	// its failing attempts (LoginDelay): no one can lock an owner out from another address.
	LoginPerEmailAddress, LoginPerAddress Limit
	LoginDelay                            Delay
	SignupPerEmail, SignupPerAddress      Limit // sign-ups
	ForgotPerEmail, ForgotPerAddress      Limit // forgotten-password requests
}

// Delay is how long the answer to an e-mail's failed login waits: First after the e-mail's
// first failure in Window, doubling with each further one, never more than Max. A right
// password is never delayed.
type Delay struct {
	First, Max, Window time.Duration
}

// DefaultLimits are the limits of a Config that sets none.
var DefaultLimits = Limits{
	LoginPerEmailAddress: Limit{5, 15 * time.Minute}, LoginPerAddress: Limit{20, 15 * time.Minute},
	LoginDelay:     Delay{First: 250 * time.Millisecond, Max: 3 * time.Second, Window: 15 * time.Minute},
	SignupPerEmail: Limit{3, time.Hour}, SignupPerAddress: Limit{10, time.Hour},
	ForgotPerEmail: Limit{3, time.Hour}, ForgotPerAddress: Limit{10, time.Hour},
}

// after is the delay of an e-mail's n-th failure in the window.
func (d Delay) after(n int) time.Duration {
	if n < 1 || d.First <= 0 {
		return 0
	}
	wait := d.First
	for i := 1; i < n && wait < d.Max; i++ {
		wait *= 2
	}
	return min(wait, d.Max)
}

// throttle counts events per key in fixed windows.
type throttle struct {
	mu    sync.Mutex
	now   func() time.Time
	limit Limit
	hits  map[string]*window
}

type window struct {
	start time.Time
	count int
}

// maxKeys bounds a throttle's memory: past it, ended windows are dropped.
const maxKeys = 100_000

func newThrottle(now func() time.Time, limit Limit) *throttle {
	return &throttle{now: now, limit: limit, hits: map[string]*window{}}
}

// wait is how long key must wait before its next event is allowed (0: allowed now).
func (t *throttle) wait(key string) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.hits[key]
	now := t.now()
	if w == nil || now.Sub(w.start) >= t.limit.Window || w.count < t.limit.Max {
		return 0
	}
	return w.start.Add(t.limit.Window).Sub(now)
}

// add counts an event of key and returns its count in the window.
func (t *throttle) add(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	if len(t.hits) >= maxKeys {
		for k, w := range t.hits {
			if now.Sub(w.start) >= t.limit.Window {
				delete(t.hits, k)
			}
		}
	}
	w := t.hits[key]
	if w == nil || now.Sub(w.start) >= t.limit.Window {
		w = &window{start: now}
		t.hits[key] = w
	}
	w.count++
	return w.count
}

// pair is one throttle per e-mail and one per client address.
type pair struct{ email, addr *throttle }

func newPair(now func() time.Time, email, addr Limit) pair {
	return pair{newThrottle(now, email), newThrottle(now, addr)}
}

// refused answers 429 with Retry-After when either limit is reached.
func (p pair) refused(w http.ResponseWriter, r *http.Request, email string) bool {
	return tooMany(w, max(p.email.wait(strings.ToLower(email)), p.addr.wait(clientAddr(r))))
}

// add counts an attempt for the e-mail and the address.
func (p pair) add(r *http.Request, email string) {
	p.email.add(strings.ToLower(email))
	p.addr.add(clientAddr(r))
}

// logins are the throttles of failed logins: lockouts per (e-mail, address) and per
// address, and the count per e-mail that the delay grows with.
type logins struct {
	emailAddr, addr, email *throttle
	delay                  Delay
}

func newLogins(now func() time.Time, l Limits) logins {
	return logins{emailAddr: newThrottle(now, l.LoginPerEmailAddress), addr: newThrottle(now, l.LoginPerAddress),
		email: newThrottle(now, Limit{Window: l.LoginDelay.Window}), delay: l.LoginDelay} // email only counts
}

// refused answers 429 with Retry-After while the address is locked out for the e-mail or
// for every e-mail.
func (l logins) refused(w http.ResponseWriter, r *http.Request, email string) bool {
	addr := clientAddr(r)
	return tooMany(w, max(l.emailAddr.wait(strings.ToLower(email)+"\x00"+addr), l.addr.wait(addr)))
}

// failed counts a failed login and returns how long its answer waits.
func (l logins) failed(r *http.Request, email string) time.Duration {
	addr, email := clientAddr(r), strings.ToLower(email)
	l.emailAddr.add(email + "\x00" + addr)
	l.addr.add(addr)
	return l.delay.after(l.email.add(email))
}

// tooMany answers 429 too_many_attempts with Retry-After when wait is positive.
func tooMany(w http.ResponseWriter, wait time.Duration) bool {
	if wait <= 0 {
		return false
	}
	secs := authlimit.Seconds(wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	respond.Error(w, http.StatusTooManyRequests, "rate_limit_error", "too_many_attempts", "",
		"too many attempts; try again in "+strconv.Itoa(secs)+" seconds")
	return true
}

// clientAddr is the client as peer.Of finds it (forwarding headers from trusted proxies
// only), an IPv6 client by its /64.
func clientAddr(r *http.Request) string { return peer.Of(r).Network().String() }

// sleep waits d, or until ctx ends (the client left).
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
