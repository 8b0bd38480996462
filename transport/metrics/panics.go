package metrics

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/modelgate/modelgate/internal/supervise"
)

// panics is modelgate_panics_total{where}: one metric for every recovered panic. A request
// handler's are counted here, under its endpoint (this registry's own, like every request
// metric); a background goroutine's or an actor's are internal/supervise's, counted for the
// whole process under the supervised name (persistence.ledger, actor.quota, …) and read at
// each scrape.
type panics struct {
	desc     *prometheus.Desc
	mu       sync.Mutex
	handlers map[string]uint64
}

func newPanics() *panics {
	return &panics{handlers: map[string]uint64{}, desc: prometheus.NewDesc("modelgate_panics_total",
		"Panics recovered, by where: a request handler's under its endpoint (the request answered 500), a background goroutine's or an actor's under its supervised name (the goroutine resumed); each logged with its stack.",
		[]string{"where"}, nil)}
}

func (p *panics) add(endpoint string) {
	p.mu.Lock()
	p.handlers[endpoint]++
	p.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (p *panics) Describe(ch chan<- *prometheus.Desc) { ch <- p.desc }

// Collect implements prometheus.Collector.
func (p *panics) Collect(ch chan<- prometheus.Metric) {
	p.mu.Lock()
	all := make(map[string]uint64, len(p.handlers))
	for w, n := range p.handlers {
		all[w] = n
	}
	p.mu.Unlock()
	for _, c := range supervise.Counts() {
		all[c.Where] += c.N // endpoints have no dot, supervised names do: they never meet
	}
	wheres := make([]string, 0, len(all))
	for w := range all {
		wheres = append(wheres, w)
	}
	sort.Strings(wheres)
	for _, w := range wheres {
		ch <- prometheus.MustNewConstMetric(p.desc, prometheus.CounterValue, float64(all[w]), w)
	}
}
