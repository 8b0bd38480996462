// Package authlimit makes guessing credentials slow: a client address whose key, token,
// session or password checks keep failing is refused every auth attempt for a while. Every
// check of the gateway asks the one Limiter the node makes (docs/running.md, "Guessing and
// lockouts"); each answers the refusal in its own envelope.
package authlimit

import (
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/persistence/catalog"
	"github.com/modelgate/modelgate/transport/metrics"
	"github.com/modelgate/modelgate/transport/peer"
)

// Kind is what a failed check was checking: the label of modelgate_auth_failures_total.
type Kind string

// The kinds of check (a bounded set: the metric's labels).
const (
	APIKey     Kind = "api_key"     // an API key (/v1, /v1beta, the account API)
	AdminToken Kind = "admin_token" // the operator's admin token (/admin/v1, /admin/cluster)
	Session    Kind = "session"     // a session cookie (/auth, the account API)
	Password   Kind = "password"    // a login's or a password change's password (/auth)
)

// The refusal's error type and code, in every envelope.
const (
	Type = "rate_limit_error"
	Code = "too_many_auth_failures"
)

// Window is the span failures are counted over: the setting is per minute.
const Window = time.Minute

// maxClients bounds the memory: past it, idle clients are dropped, then others.
const maxClients = 100_000

// Settings are the catalog's server.auth_failures_per_minute and server.auth_penalty.
type Settings struct {
	PerMinute int
	Penalty   time.Duration
}

// Limiter counts failed checks per client network (peer.Info.Network: through trusted
// proxies only) and refuses a network that reached the limit until its penalty ends. It is
// in memory: in a cluster each node limits on its own.
type Limiter struct {
	settings func() Settings
	metrics  *metrics.Metrics // nil: not counted
	now      func() time.Time

	mu      sync.Mutex
	clients map[netip.Prefix]*client
	// refusingUntil is the latest end of any penalty (unix nanoseconds): while none runs,
	// every check passes Wait without the lock or a look at the client (the hot path).
	refusingUntil atomic.Int64
}

// client is one network's failures: an estimate of the last minute's from this minute's
// count and the previous one's, and the end of its penalty.
type client struct {
	start     time.Time // this minute began
	cur, prev int       // failures this minute and in the one before
	until     time.Time // refused until then
}

// New is a limiter reading its settings at each check (a catalog reload changes them).
func New(settings func() Settings, m *metrics.Metrics) *Limiter {
	return &Limiter{settings: settings, metrics: m, now: time.Now, clients: map[netip.Prefix]*client{}}
}

// FromCatalog reads the limiter's settings from the catalog h holds now.
func FromCatalog(h *catalog.Holder) func() Settings {
	return func() Settings {
		s := h.Load().Server
		return Settings{PerMinute: s.AuthFailuresPerMinute, Penalty: s.AuthPenalty}
	}
}

// Wait is how long r's client must wait before an attempt of kind is checked; 0: check it.
// A refusal is counted in modelgate_auth_refusals_total. A nil Limiter refuses nothing.
func (l *Limiter) Wait(r *http.Request, kind Kind) time.Duration {
	if l == nil {
		return 0
	}
	now := l.now()
	if now.UnixNano() >= l.refusingUntil.Load() {
		return 0
	}
	l.mu.Lock()
	c := l.clients[peer.Of(r).Network()]
	var wait time.Duration
	if c != nil {
		wait = c.until.Sub(now)
	}
	l.mu.Unlock()
	if wait <= 0 {
		return 0
	}
	if l.metrics != nil {
		l.metrics.AuthRefused(string(kind))
	}
	return wait
}

// Failed counts a failed check of kind from r's client. The failure that brings the last
// minute's estimate to the limit starts the penalty; a success resets nothing (one valid key
// must not buy an address more guesses).
func (l *Limiter) Failed(r *http.Request, kind Kind) {
	if l == nil {
		return
	}
	if l.metrics != nil {
		l.metrics.AuthFailure(string(kind))
	}
	l.fail(peer.Of(r).Network())
}

func (l *Limiter) fail(network netip.Prefix) {
	set := l.settings()
	if set.PerMinute < 1 {
		set.PerMinute = catalog.DefaultAuthFailuresPerMinute
	}
	if set.Penalty <= 0 {
		set.Penalty = catalog.DefaultAuthPenalty
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	c := l.clients[network]
	if c == nil {
		l.makeRoom(now)
		c = &client{start: now}
		l.clients[network] = c
	}
	if now.Before(c.until) {
		return // a check that began before the penalty did: the penalty stands as it is
	}
	c.roll(now)
	c.cur++
	if c.estimate(now) >= int64(set.PerMinute)*Window.Milliseconds() {
		l.penalize(c, now.Add(set.Penalty))
	}
}

// penalize refuses c until then; counting starts afresh when the penalty ends. Called with mu
// held (the one writer of refusingUntil).
func (l *Limiter) penalize(c *client, until time.Time) {
	c.until = until
	c.start, c.cur, c.prev = until, 0, 0
	if u := until.UnixNano(); u > l.refusingUntil.Load() {
		l.refusingUntil.Store(u)
	}
}

// roll moves the client's minute on to the one now is in.
func (c *client) roll(now time.Time) {
	elapsed := now.Sub(c.start)
	switch {
	case elapsed < Window:
	case elapsed < 2*Window:
		c.start, c.prev, c.cur = c.start.Add(Window), c.cur, 0
	default:
		c.start, c.prev, c.cur = now, 0, 0
	}
}

// estimate is the failures of the 60 s up to now, times Window in milliseconds (an integer
// that cannot overflow for any limit a catalog holds): this minute's count, and the previous
// minute's in the share the last 60 s still cover.
func (c *client) estimate(now time.Time) int64 {
	covered := (Window - now.Sub(c.start)).Milliseconds()
	return int64(c.prev)*covered + int64(c.cur)*Window.Milliseconds()
}

// idle says nothing of the client is remembered any longer: no penalty and no failure in
// the last minute.
func (c *client) idle(now time.Time) bool {
	return !now.Before(c.until) && now.Sub(c.start) >= 2*Window
}

// makeRoom keeps the map under maxClients: when full, idle clients go, then, down to nine
// tenths of the cap, any not being refused, then any. Sweeping to nine tenths makes a sweep
// happen at most once per tenth of the cap of new clients.
func (l *Limiter) makeRoom(now time.Time) {
	if len(l.clients) < maxClients {
		return
	}
	for k, c := range l.clients {
		if c.idle(now) {
			delete(l.clients, k)
		}
	}
	keep := maxClients * 9 / 10
	for _, refusedToo := range []bool{false, true} {
		for k, c := range l.clients {
			if len(l.clients) <= keep {
				return
			}
			if refusedToo || !now.Before(c.until) {
				delete(l.clients, k)
			}
		}
	}
}

// tracked is how many client networks the limiter remembers.
func (l *Limiter) tracked() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// Envelope writes an error answer in a surface's envelope (admin.Fail, auth's fail).
type Envelope func(w http.ResponseWriter, status int, typ, code, param, msg string)

// Refuse answers an attempt Wait refused: 429 with Retry-After, in env.
func Refuse(w http.ResponseWriter, wait time.Duration, env Envelope) {
	w.Header().Set("Retry-After", strconv.Itoa(Seconds(wait)))
	env(w, http.StatusTooManyRequests, Type, Code, "", Message(wait))
}

// Seconds is a wait as Retry-After gives it: whole seconds, rounded up.
func Seconds(wait time.Duration) int { return int((wait + time.Second - 1) / time.Second) }

// Message is the refusal's message, the same in every envelope.
func Message(wait time.Duration) string {
	return "too many failed authentication attempts from this address; try again in " + strconv.Itoa(Seconds(wait)) + " seconds"
}
