package metrics

import "github.com/prometheus/client_golang/prometheus"

// QuotaStepSource is a cluster node's quota steps as the metrics read them (its
// accounts.Owner's counters).
type QuotaStepSource interface {
	// QuotaSteps are the steps this node answered as a shard's leader from memory and after
	// their entries applied, the steps it forwarded to another node leading their shard,
	// and the settles it sent Late (carrying their admission).
	QuotaSteps() (memory, awaited, forwarded, late uint64)
}

var (
	quotaSteps = prometheus.NewDesc("modelgate_quota_steps_total",
		"Quota steps by how they were answered: memory (an admission this node, leading its shard, answered before its entry committed), awaited (answered here once its entry applied) or forwarded (sent to the node leading its shard).",
		[]string{"path"}, nil)
	lateSettles = prometheus.NewDesc("modelgate_late_settles_total",
		"Settles this node sent with their call's admission, billed as admitted at the settle if the admission was lost with a shard leader.", nil, nil)
)

// QuotaSteps publishes a cluster node's quota-step counters, read at each scrape.
func (m *Metrics) QuotaSteps(src QuotaStepSource) { m.Registry.MustRegister(stepCollector{src}) }

type stepCollector struct{ src QuotaStepSource }

func (stepCollector) Describe(ch chan<- *prometheus.Desc) { ch <- quotaSteps; ch <- lateSettles }

func (c stepCollector) Collect(ch chan<- prometheus.Metric) {
	memory, awaited, forwarded, late := c.src.QuotaSteps()
	ch <- prometheus.MustNewConstMetric(quotaSteps, prometheus.CounterValue, float64(memory), "memory")
	ch <- prometheus.MustNewConstMetric(quotaSteps, prometheus.CounterValue, float64(awaited), "awaited")
	ch <- prometheus.MustNewConstMetric(quotaSteps, prometheus.CounterValue, float64(forwarded), "forwarded")
	ch <- prometheus.MustNewConstMetric(lateSettles, prometheus.CounterValue, float64(late))
}

// ForwardBatchSource is a cluster node's batches of forwarded steps (its
// accounts.HTTPForward's counters).
type ForwardBatchSource interface {
	// ForwardBatches are the requests that carried this node's forwarded steps to other
	// nodes, and the steps they carried.
	ForwardBatches() (batches, steps uint64)
}

var (
	forwardBatches = prometheus.NewDesc("modelgate_forward_batches_total",
		"Requests that carried this node's quota steps to the nodes leading their shards (each carries every step waiting for that node).", nil, nil)
	forwardBatchSteps = prometheus.NewDesc("modelgate_forward_batch_steps_total",
		"Quota steps those requests carried: divided by modelgate_forward_batches_total, the steps per request.", nil, nil)
)

// ForwardBatches publishes a cluster node's forwarded-batch counters, read at each scrape.
func (m *Metrics) ForwardBatches(src ForwardBatchSource) {
	m.Registry.MustRegister(batchCollector{src})
}

type batchCollector struct{ src ForwardBatchSource }

func (batchCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- forwardBatches
	ch <- forwardBatchSteps
}

func (c batchCollector) Collect(ch chan<- prometheus.Metric) {
	batches, steps := c.src.ForwardBatches()
	ch <- prometheus.MustNewConstMetric(forwardBatches, prometheus.CounterValue, float64(batches))
	ch <- prometheus.MustNewConstMetric(forwardBatchSteps, prometheus.CounterValue, float64(steps))
}
