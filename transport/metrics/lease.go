package metrics

import "github.com/prometheus/client_golang/prometheus"

// ReadLeaseSource is a cluster node's key check as the metrics read it: whether it holds its
// read lease on the metadata shard, and how its key checks were answered.
type ReadLeaseSource interface {
	LeaseValid() bool
	// KeyChecks are the key checks answered from this node's replica under the lease, and
	// those read linearizably (no lease, or a secret the replica did not know).
	KeyChecks() (lease, linear uint64)
}

var (
	leaseValid = prometheus.NewDesc("modelgate_read_lease_valid",
		"1 while this node holds its read lease on the metadata shard (key checks, logins and sessions read its own replica).", nil, nil)
	keyChecks = prometheus.NewDesc("modelgate_key_checks_total",
		"Key checks by how they were answered: lease (this node's replica, under its read lease) or linear (a read through the metadata shard's leader).",
		[]string{"path"}, nil)
)

// ReadLease publishes a cluster node's read lease and its key checks, read at each scrape.
func (m *Metrics) ReadLease(src ReadLeaseSource) { m.Registry.MustRegister(leaseCollector{src}) }

type leaseCollector struct{ src ReadLeaseSource }

func (leaseCollector) Describe(ch chan<- *prometheus.Desc) { ch <- leaseValid; ch <- keyChecks }

func (c leaseCollector) Collect(ch chan<- prometheus.Metric) {
	valid := 0.0
	if c.src.LeaseValid() {
		valid = 1
	}
	ch <- prometheus.MustNewConstMetric(leaseValid, prometheus.GaugeValue, valid)
	lease, linear := c.src.KeyChecks()
	ch <- prometheus.MustNewConstMetric(keyChecks, prometheus.CounterValue, float64(lease), "lease")
	ch <- prometheus.MustNewConstMetric(keyChecks, prometheus.CounterValue, float64(linear), "linear")
}
