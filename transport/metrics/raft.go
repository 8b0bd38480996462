package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/modelgate/modelgate/cluster/engine"
)

// RaftSource is a cluster node's engine as the metrics read it.
type RaftSource interface {
	ID() uint64
	Stats() engine.Stats
	Progress() []engine.Progress
	ObserveLatency(f func(op string, d time.Duration))
}

// Raft publishes a cluster node's engine: its counts and, per shard, this replica's
// progress, read at each scrape, and the latency of its proposals and reads.
func (m *Metrics) Raft(src RaftSource) {
	latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "modelgate_raft_request_seconds",
		Help:    "Time from a proposal or linearizable read to its answer, retries through elections included, by op (propose, read).",
		Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .2, .5, 1, 2},
	}, []string{"op"})
	src.ObserveLatency(func(op string, d time.Duration) { latency.WithLabelValues(op).Observe(d.Seconds()) })
	m.Registry.MustRegister(latency, raftCollector{src})
}

// raftCollector reads the engine at each scrape.
type raftCollector struct{ src RaftSource }

var (
	raftCounts = []struct {
		desc *prometheus.Desc
		of   func(engine.Stats) uint64
	}{
		{raftDesc("proposals_total", "Proposals made on this node (each a call's admission, settle or another change)."), func(s engine.Stats) uint64 { return s.Proposals }},
		{raftDesc("proposals_forwarded_total", "Proposals made while another node led the shard: the engine forwarded them to it."), func(s engine.Stats) uint64 { return s.ProposalsForwarded }},
		{raftDesc("proposals_failed_total", "Proposals that ended in an error (their outcome unknown to the caller)."), func(s engine.Stats) uint64 { return s.ProposalsFailed }},
		{raftDesc("reads_total", "Linearizable reads (key checks, logins) and catch-up waits."), func(s engine.Stats) uint64 { return s.Reads }},
		{raftDesc("reads_failed_total", "Linearizable reads that ended in an error."), func(s engine.Stats) uint64 { return s.ReadsFailed }},
		{raftDesc("leader_changes_total", "Leader changes this node heard of, every shard."), func(s engine.Stats) uint64 { return s.LeaderChanges }},
		{raftDesc("connection_failures_total", "Raft connections to peers that could not be made or broke."), func(s engine.Stats) uint64 { return s.ConnectionsFailed }},
	}
	raftSnapshots  = raftDesc("snapshots_total", "Snapshots by event: created here, sent to a replica, received, recovered from.", "event")
	raftApplied    = raftDesc("applied_index", "The last entry this node's replica of the shard applied; compare across nodes for a replica's lag behind the leader.", "shard")
	raftUnapplied  = raftDesc("unapplied_entries", "Entries this node's replica of the shard holds and has not applied yet.", "shard")
	raftIsLeader   = raftDesc("is_leader", "1 while this node leads the shard.", "shard")
	raftLeaderless = raftDesc("leaderless", "1 while this node knows no leader of the shard.", "shard")
)

func raftDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("modelgate_raft_"+name, help, labels, nil)
}

func (raftCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range raftCounts {
		ch <- c.desc
	}
	for _, d := range []*prometheus.Desc{raftSnapshots, raftApplied, raftUnapplied, raftIsLeader, raftLeaderless} {
		ch <- d
	}
}

func (c raftCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src.Stats()
	for _, rc := range raftCounts {
		ch <- prometheus.MustNewConstMetric(rc.desc, prometheus.CounterValue, float64(rc.of(s)))
	}
	for event, n := range map[string]uint64{"created": s.SnapshotsCreated, "sent": s.SnapshotsSent, "received": s.SnapshotsReceived, "recovered": s.SnapshotsRecovered} {
		ch <- prometheus.MustNewConstMetric(raftSnapshots, prometheus.CounterValue, float64(n), event)
	}
	self := c.src.ID()
	for _, p := range c.src.Progress() {
		shard := strconv.FormatUint(p.Shard, 10)
		ch <- prometheus.MustNewConstMetric(raftApplied, prometheus.GaugeValue, float64(p.Applied), shard)
		ch <- prometheus.MustNewConstMetric(raftUnapplied, prometheus.GaugeValue, float64(p.Unapplied()), shard)
		ch <- prometheus.MustNewConstMetric(raftIsLeader, prometheus.GaugeValue, flag(p.Leader == self), shard)
		ch <- prometheus.MustNewConstMetric(raftLeaderless, prometheus.GaugeValue, flag(p.Leader == 0), shard)
	}
}

func flag(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
