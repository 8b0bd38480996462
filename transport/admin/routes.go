package admin

import (
	"math"
	"net/http"
	"time"

	"github.com/modelgate/modelgate/actors/routehealth"
	"github.com/modelgate/modelgate/transport/respond"
)

// RouteHealth is every route's published health, read without asking the route actors.
type RouteHealth interface {
	State(route string) *routehealth.State // nil before the route's first report
	Now() time.Time                        // route health's clock
}

// routeView is one catalog route as an operator needs to see it: can it take traffic, why
// not, until when, and what its provider last said when it refused.
type routeView struct {
	Route  string `json:"route"`
	Model  string `json:"model"`
	Format string `json:"format"`
	// Provider is the cloud serving the route (bedrock, vertex, azure), "" for the format's
	// own API. Auth is how it authenticates (none, api_key, aws_sigv4, google_oauth,
	// azure_entra); TokenRefreshAt is when its short-lived credential is next fetched (null
	// for a static one, or before the first call fetched it).
	Provider       string     `json:"provider"`
	Auth           string     `json:"auth"`
	TokenRefreshAt *time.Time `json:"token_refresh_at"`
	Weight         int        `json:"weight"`
	ZDR            bool       `json:"zdr"`
	// State is healthy, degraded (its weight shrunk by its error rate), cooling or
	// half_open (the cooldown is over; its probe is due or out).
	State string `json:"state"`
	// Available: a request may use the route now. A route cooling for its error rate is not,
	// but LastResort says it still takes requests no other route may.
	Available  bool `json:"available"`
	LastResort bool `json:"last_resort"`
	// ErrorRate is the share of failed attempts in the error-rate window as the route is
	// judged by it (0 below the policy's minimum of calls); WindowCalls and WindowFailures
	// are the window's counts. EffectiveWeight is the weight picking uses now.
	ErrorRate       float64 `json:"error_rate"`
	WindowCalls     int     `json:"window_calls"`
	WindowFailures  int     `json:"window_failures"`
	EffectiveWeight float64 `json:"effective_weight"`
	// CooldownUntil is the end of the cooldown in force (null when none); the seconds
	// left are rounded up.
	CooldownUntil   *time.Time `json:"cooldown_until"`
	CooldownSeconds int        `json:"cooldown_remaining_seconds"`
	// CooldownReason is why the current or last cooldown started: failures, error_rate,
	// rate_limit or billing (null before the first).
	CooldownReason *string `json:"cooldown_reason"`
	// Probing: the cooldown came from failures or the error rate, so the first request
	// after it is a probe.
	Probing bool `json:"probing"`
	// LastRefusal is the provider's message with its last 429 or billing refusal.
	LastRefusal *refusalView `json:"last_refusal"`
	Streak      int          `json:"streak"`
	Successes   uint64       `json:"successes"`
	Failures    uint64       `json:"failures"`
	InFlight    int64        `json:"in_flight"`
	LatencyMS   float64      `json:"latency_ms"` // moving average of successful attempts
	// TTFTMS is the moving average of successful attempts' time to first byte (a stream's
	// first content, a whole answer's headers): what the lowest_latency policy picks by.
	TTFTMS float64 `json:"ttft_ms"`
}

type refusalView struct {
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// routes answers GET /admin/v1/routes: every route of the catalog with its health, in
// route id order.
func (s *Server) routes(w http.ResponseWriter, r *http.Request) {
	now := s.health.Now()
	out := []routeView{}
	for _, rt := range s.catalog.Load().Routes() {
		st := s.health.State(rt.ID)
		v := routeView{Route: rt.ID, Model: rt.Model, Format: rt.Format, Weight: rt.Weight, ZDR: rt.ZDR, State: st.Health(now),
			Available: st.Available(now), LastResort: st.LastResort(now), ErrorRate: st.ErrorRate(now), EffectiveWeight: st.Weight(rt.Weight, now)}
		v.WindowCalls, v.WindowFailures = st.Window(now)
		v.Provider, v.Auth = rt.Provider, rt.AuthKind()
		if s.creds != nil {
			if at := s.creds.NextRefresh(rt); !at.IsZero() {
				at = at.UTC()
				v.TokenRefreshAt = &at
			}
		}
		if st != nil {
			v.Streak, v.Successes, v.Failures, v.InFlight, v.Probing = st.Streak, st.Successes, st.Failures, st.InFlight, st.Probing
			v.LatencyMS, v.TTFTMS = millis(st.Latency), millis(st.TTFT)
			if left := st.CooldownUntil.Sub(now); left > 0 {
				until := st.CooldownUntil.UTC()
				v.CooldownUntil, v.CooldownSeconds = &until, int(math.Ceil(left.Seconds()))
			}
			if st.Reason != "" {
				v.CooldownReason = &st.Reason
			}
			if !st.RefusedAt.IsZero() {
				v.LastRefusal = &refusalView{Message: st.Refusal, At: st.RefusedAt.UTC()}
			}
		}
		out = append(out, v)
	}
	respond.JSON(w, http.StatusOK, map[string]any{"object": "list", "data": out})
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
