package metrics

import "github.com/prometheus/client_golang/prometheus"

// EdgeRefusals registers modelgate_edge_refusals_total and returns its counter: refusals of
// slow and greedy clients by reason (transport/edge's Reason labels, a fixed set).
func (m *Metrics) EdgeRefusals() func(reason string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "modelgate_edge_refusals_total",
		Help: "Requests and connections the edge refused: body_too_large, body_timeout, body_too_slow, bodies_in_flight (503), conns_per_ip (429), conns_per_ip_closed (closed at accept).",
	}, []string{"reason"})
	m.Registry.MustRegister(c)
	return func(reason string) { c.WithLabelValues(reason).Inc() }
}

// BodyBytes publishes the request-body bytes in flight and their cap, read at each scrape.
func (m *Metrics) BodyBytes(held, limit func() int64) {
	m.Registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "modelgate_body_bytes_in_flight", Help: "Request-body bytes held by the requests in flight (their buffers while read, then the bodies).",
		}, func() float64 { return float64(held()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "modelgate_body_bytes_in_flight_limit", Help: "The cap on modelgate_body_bytes_in_flight (server.max_body_bytes_in_flight, or sized from memory); past it bodies get 503.",
		}, func() float64 { return float64(limit()) }),
	)
}
