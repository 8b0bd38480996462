package metrics

import "github.com/prometheus/client_golang/prometheus"

// Payments registers modelgate_payments_total and returns its counter: Stripe webhooks the
// gateway acted on, by kind (credits, refund, ignored) and outcome (granted, reversed,
// repeated, refused, failed).
func (m *Metrics) Payments() func(kind, outcome string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "modelgate_payments_total",
		Help: "Stripe webhooks by kind (credits, refund, ignored) and outcome (granted, reversed, repeated: a retried event applied nothing more, refused: a bad signature or an event the gateway cannot apply, failed: retried by Stripe).",
	}, []string{"kind", "outcome"})
	m.Registry.MustRegister(c)
	return func(kind, outcome string) { c.WithLabelValues(kind, outcome).Inc() }
}
