package auth

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelgate/modelgate/transport/peer"
)

// Limit is at most Max counted events per Window (a fixed window from the first event).
type Limit struct {
	Max    int
	Window time.Duration
}

// Limits are the throttles of the sign-in endpoints, each per e-mail and per client address.
// They are in memory on each node: a cluster's limit is per node (docs/decisions.md, "#14").
type Limits struct {
	LoginPerEmail, LoginPerAddress   Limit // failed logins
	SignupPerEmail, SignupPerAddress Limit // sign-ups
	ForgotPerEmail, ForgotPerAddress Limit // forgotten-password requests
}

// DefaultLimits are the limits of a Config that sets none.
var DefaultLimits = Limits{
	LoginPerEmail: Limit{5, 15 * time.Minute}, LoginPerAddress: Limit{20, 15 * time.Minute},
	SignupPerEmail: Limit{3, time.Hour}, SignupPerAddress: Limit{10, time.Hour},
	ForgotPerEmail: Limit{3, time.Hour}, ForgotPerAddress: Limit{10, time.Hour},
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

// add counts an event of key.
func (t *throttle) add(key string) {
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
}

// pair is one throttle per e-mail and one per client address.
type pair struct{ email, addr *throttle }

func newPair(now func() time.Time, email, addr Limit) pair {
	return pair{&throttle{now: now, limit: email, hits: map[string]*window{}}, &throttle{now: now, limit: addr, hits: map[string]*window{}}}
}

// refused answers 429 with Retry-After when either limit is reached.
func (p pair) refused(w http.ResponseWriter, r *http.Request, email string) bool {
	wait := max(p.email.wait(strings.ToLower(email)), p.addr.wait(clientAddr(r)))
	if wait <= 0 {
		return false
	}
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	fail(w, http.StatusTooManyRequests, "rate_limit_error", "too_many_attempts", "",
		"too many attempts; try again in "+strconv.Itoa(secs)+" seconds")
	return true
}

// add counts an attempt for the e-mail and the address.
func (p pair) add(r *http.Request, email string) {
	p.email.add(strings.ToLower(email))
	p.addr.add(clientAddr(r))
}

// clientAddr is the client's address (peer.Of): the connection's, or behind a trusted proxy
// the client it reports. A caller's own forwarding headers are not believed: it could set
// them to dodge the limit.
func clientAddr(r *http.Request) string {
	return peer.Of(r).String()
}
