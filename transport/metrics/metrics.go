// Package metrics exposes the gateway's Prometheus metrics.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics is one registry; tests make their own so they do not share counters.
type Metrics struct {
	Registry  *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	ttft      *prometheus.HistogramVec
	attempts  *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	inFlight  prometheus.Gauge
	routeUp   *prometheus.GaugeVec
	routeFlow *prometheus.GaugeVec
	routeSt   *prometheus.GaugeVec
	routeErr  *prometheus.GaugeVec
	routeWt   *prometheus.GaugeVec
	logDrops  prometheus.Counter
	dropped   *prometheus.CounterVec
	panics    *panics
	authFails *prometheus.CounterVec
	authRefs  *prometheus.CounterVec
}

// New registers every metric, plus the Go runtime and process collectors.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "modelgate_requests_total", Help: "Requests answered, by endpoint, model, final route and HTTP status.",
		}, []string{"endpoint", "model", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "modelgate_request_duration_seconds", Help: "Time from request to last byte, by endpoint and model.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"endpoint", "model"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "modelgate_time_to_first_byte_seconds", Help: "Time from request to the first byte sent to the client.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"endpoint", "model"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "modelgate_upstream_attempts_total", Help: "Upstream attempts by route and outcome (ok, failed, rate_limited, refused).",
		}, []string{"route", "outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "modelgate_upstream_refusals_total",
			Help: "Provider refusals that cooled a route, by route and reason: rate_limit (a 429) or billing (the operator's quota or credit is gone at the provider).",
		}, []string{"route", "reason"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "modelgate_requests_in_flight", Help: "Requests being served now.",
		}),
		routeUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "modelgate_route_available", Help: "1 when the route takes traffic, 0 while it cools down.",
		}, []string{"route"}),
		routeFlow: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "modelgate_route_in_flight", Help: "Attempts in flight per route.",
		}, []string{"route"}),
		routeSt: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "modelgate_route_state",
			Help: "1 for the route's health state now, 0 for the others: healthy, degraded (weight shrunk by its error rate), cooling, half_open (its probe is due or out).",
		}, []string{"route", "state"}),
		routeErr: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "modelgate_route_error_rate",
			Help: "Share of the route's failed attempts over the error-rate window, as the route is judged by it (0 below the minimum of calls).",
		}, []string{"route"}),
		routeWt: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "modelgate_route_effective_weight",
			Help: "The route's weight as picking uses it now: its catalog weight shrunk by its error rate, 0 while it cannot take a request.",
		}, []string{"route"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "modelgate_conversion_dropped_fields_total", Help: "Request fields a format conversion could not express, by client format, upstream format and field.",
		}, []string{"client_format", "upstream_format", "field"}),
		logDrops: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "modelgate_request_log_errors_total", Help: "Request log entries that could not be queued.",
		}),
		panics: newPanics(),
		authFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "modelgate_auth_failures_total", Help: "Failed credential checks, by kind (api_key, admin_token, session, password).",
		}, []string{"kind"}),
		authRefs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "modelgate_auth_refusals_total", Help: "Auth attempts refused with 429 unchecked because their client address failed too often, by kind.",
		}, []string{"kind"}),
	}
	r.MustRegister(m.requests, m.latency, m.ttft, m.attempts, m.refusals, m.inFlight, m.routeUp, m.routeFlow, m.routeSt, m.routeErr, m.routeWt, m.logDrops, m.dropped, m.panics,
		m.authFails, m.authRefs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Handler serves the text exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// Request records one finished request.
func (m *Metrics) Request(endpoint, model, route string, status int, total, firstByte time.Duration) {
	m.requests.WithLabelValues(endpoint, model, route, strconv.Itoa(status)).Inc()
	m.latency.WithLabelValues(endpoint, model).Observe(total.Seconds())
	if firstByte > 0 {
		m.ttft.WithLabelValues(endpoint, model).Observe(firstByte.Seconds())
	}
}

// Attempt records one upstream attempt.
func (m *Metrics) Attempt(route, outcome string) { m.attempts.WithLabelValues(route, outcome).Inc() }

// Refusal counts a provider's refusal of a route; reason is a routehealth reason, never the
// provider's free text, so the label stays bounded.
func (m *Metrics) Refusal(route, reason string) { m.refusals.WithLabelValues(route, reason).Inc() }

// InFlight moves the in-flight gauge.
func (m *Metrics) InFlight(delta float64) { m.inFlight.Add(delta) }

// RouteHealth is a route's health as the metrics show it.
type RouteHealth struct {
	Available bool
	InFlight  int64
	State     string   // one of States
	States    []string // every state, so the others read 0
	ErrorRate float64
	Weight    float64 // effective weight
}

// Route publishes a route's health.
func (m *Metrics) Route(route string, h RouteHealth) {
	v := 0.0
	if h.Available {
		v = 1
	}
	m.routeUp.WithLabelValues(route).Set(v)
	m.routeFlow.WithLabelValues(route).Set(float64(h.InFlight))
	for _, st := range h.States {
		on := 0.0
		if st == h.State {
			on = 1
		}
		m.routeSt.WithLabelValues(route, st).Set(on)
	}
	m.routeErr.WithLabelValues(route).Set(h.ErrorRate)
	m.routeWt.WithLabelValues(route).Set(h.Weight)
}

// Dropped counts fields a conversion could not express.
func (m *Metrics) Dropped(client, upstream string, fields []string) {
	for _, f := range fields {
		m.dropped.WithLabelValues(client, upstream, f).Inc()
	}
}

// Panic counts a request whose handler panicked, under where=endpoint.
func (m *Metrics) Panic(endpoint string) { m.panics.add(endpoint) }

// AuthFailure counts a failed credential check; kind is one of authlimit's kinds.
func (m *Metrics) AuthFailure(kind string) { m.authFails.WithLabelValues(kind).Inc() }

// AuthRefused counts an auth attempt refused because its address failed too often.
func (m *Metrics) AuthRefused(kind string) { m.authRefs.WithLabelValues(kind).Inc() }

// Store publishes the data directory's state, read at each scrape: whether the store takes
// writes (0 while its disk is full and calls are refused with 503) and the free bytes.
func (m *Metrics) Store(writable func() bool, freeBytes func() int64) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "modelgate_store_writable", Help: "1 while the store takes writes; 0 while its disk is full and calls are refused with 503.",
		}, func() float64 {
			if writable() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "modelgate_store_free_bytes", Help: "Free space of the data directory's filesystem, in bytes (-1: unknown).",
		}, func() float64 { return float64(freeBytes()) }),
	)
}

// Ledger publishes the single node's group commit, read at each scrape: its commits (each
// one fsync) and the quota writes they carried, so that syncs per call can be watched.
func (m *Metrics) Ledger(commits, writes func() uint64) {
	m.Registry.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "modelgate_ledger_commits_total", Help: "Group commits of the quota ledger, each one fsync of the store.",
		}, func() float64 { return float64(commits()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "modelgate_ledger_writes_total", Help: "Quota writes (an account's settles, log entries and counters since its last write) the ledger's commits carried.",
		}, func() float64 { return float64(writes()) }),
	)
}
