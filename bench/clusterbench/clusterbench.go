// Package clusterbench is the bench suite's cluster scenario: charges (an admission, then a
// paid settle with its request-log entry) through quota.Service on one node over its
// account actors (the single-node path, no Raft) and on three dragonboat engine nodes with
// mutual TLS over the account shards (cluster/accounts, batched proposals), all in this
// process, driven directly (no HTTP), so it measures admission and settle alone. It reports
// admission latency, charges per second, steps per Raft proposal, memory, and the longest
// admission wait after the leader of a shard under load is stopped.
package clusterbench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/bench/load"
	"github.com/modelgate/modelgate/cluster/engine"
	"github.com/modelgate/modelgate/cluster/membership"
)

// Config is one cluster scenario run. Zero fields take the defaults of make bench.
type Config struct {
	Nodes        int           // cluster size (default 3)
	Replicas     int           // voters of each account shard (default 3, at most Nodes)
	Shards       int           // account shards (default cluster init's, 64)
	Accounts     int           // accounts charged, round-robin (default 1024)
	InFlight     []int         // charges in flight per run (default 1, 64 and 1024)
	Rates        []int         // open-loop runs after those: charges a second offered (default 250 and 1000; negative first: none)
	Duration     time.Duration // measured part of each run (default 3 s)
	Warmup       time.Duration // unmeasured load before each run (default 0.5 s; negative: none)
	Reps         int           // runs of each (nodes, in flight) cell (default 1)
	Plain        bool          // also the in-flight cells on the cluster with plain TCP (no TLS), for what TLS costs
	Kills        int           // failover trials (default 5; negative: none)
	KillInFlight int           // charges in flight during them (default 64)
	Dir          string        // where the stores go (default a temporary directory, removed)
	Log          io.Writer
}

func (c *Config) defaults() {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Nodes, 3)
	def(&c.Replicas, min(membership.DefaultReplicas, c.Nodes))
	def(&c.Shards, membership.DefaultShards)
	def(&c.Accounts, 1024)
	def(&c.Reps, 1)
	def(&c.Kills, 5)
	def(&c.KillInFlight, 64)
	if len(c.InFlight) == 0 {
		c.InFlight = []int{1, 64, 1024}
	}
	switch {
	case len(c.Rates) == 0:
		c.Rates = []int{250, 1000}
	case c.Rates[0] < 0:
		c.Rates = nil
	}
	if c.Duration == 0 {
		c.Duration = 3 * time.Second
	}
	if c.Warmup == 0 {
		c.Warmup = 500 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Paths measured.
const (
	PathSingle  = "single node: account actors over Pebble"
	PathCluster = "cluster: engine nodes in one process, mutual TLS, account shards, batched proposals"
	PathPlain   = "cluster: as above with plain TCP between the nodes (no TLS), for comparison only"
)

// Report is the cluster scenario's section of the bench report.
type Report struct {
	Nodes     int            `json:"nodes"`
	Replicas  int            `json:"replicas"`
	Shards    int            `json:"shards"`
	Accounts  int            `json:"accounts"`
	MutualTLS bool           `json:"mutual_tls"`
	Engine    EngineSettings `json:"engine"`
	Runs      []Cell         `json:"runs"`
	Memory    []Memory       `json:"memory"`
	Failover  *Failover      `json:"failover"`
	Targets   string         `json:"targets"`
}

// EngineSettings are the engine's settings in the run (cluster/engine's defaults).
type EngineSettings struct {
	RTTMillisecond uint64 `json:"rtt_ms"`
	ElectionRTT    uint64 `json:"election_rtt"`
	HeartbeatRTT   uint64 `json:"heartbeat_rtt"`
	LogDBShards    uint64 `json:"logdb_shards"`
	ExecShards     uint64 `json:"exec_shards"`
}

// Cell is one (nodes, in flight) cell over its repetitions: latencies of every rep merged,
// charges per second per rep.
type Cell struct {
	Nodes     int    `json:"nodes"`
	Path      string `json:"path"`
	MutualTLS bool   `json:"mutual_tls"` // between the nodes (false on the single node)
	InFlight  int    `json:"in_flight"`
	// Rate is the charges a second offered in an open-loop cell (InFlight is then 0).
	Rate             int          `json:"offered_per_s,omitempty"`
	Reps             int          `json:"reps"`
	Charges          int64        `json:"charges"`
	Errors           int64        `json:"errors"`
	ErrorSample      string       `json:"error_sample,omitempty"`
	ChargesPerSecond Spread       `json:"charges_per_s"`
	Admit            load.Summary `json:"admit_latency_us"`
	Charge           load.Summary `json:"charge_latency_us"` // admit + settle
	// Forwarded is the admission latency of the charges taken by a node not leading the
	// account's shard (cluster only): what the forward hop adds to a call's first byte.
	Forwarded *load.Summary `json:"admit_forwarded_latency_us,omitempty"`
	// StepsPerProposal is quota steps (2 per charge) per committed Raft entry: how much the
	// batchers packed (null on the single node).
	StepsPerProposal *float64 `json:"steps_per_proposal"`
	// StepsPerForward is forwarded steps per request that carried them to another node (null
	// when none was forwarded).
	StepsPerForward *float64 `json:"steps_per_forwarded_batch"`
	// FromMemory is the share of admissions a shard's leader answered from memory, before
	// their entries committed (cluster only).
	FromMemory *float64 `json:"admits_from_memory"`
	// CPUPerChargeMS is this process's CPU time (user and system) over the measured runs
	// per charge, divided by the nodes: a node's share of a charge's work (the load
	// generator's own small share included).
	CPUPerChargeMS float64 `json:"cpu_ms_per_charge_per_node"`
	// LedgerExact: every account's spend equals what its acknowledged charges took (null
	// when a charge failed, its outcome then unknown).
	LedgerExact *bool `json:"ledger_exact"`
}

// Spread is the median and range over repetitions.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Memory is this process's resident memory around one setup's runs. The cluster's nodes
// share the process, so PerNodeMiB is the growth divided by the nodes: an estimate.
type Memory struct {
	Nodes      int     `json:"nodes"`
	Path       string  `json:"path"`
	BeforeMiB  float64 `json:"rss_before_mib"`
	AfterMiB   float64 `json:"rss_after_mib"`
	PerNodeMiB float64 `json:"per_node_mib"`
}

// Failover is the kill trials: in each, the leader of a shard under load is stopped at once
// while the other nodes charge; a stall is the longest admission wait that ended after the
// stop (an admission that gave up after accounts.TotalWait counts its wait too).
type Failover struct {
	Kills       int       `json:"kills"`
	InFlight    int       `json:"in_flight"`
	StallsMS    []float64 `json:"stalls_ms"`
	MedianMS    float64   `json:"median_ms"`
	MaxMS       float64   `json:"max_ms"`
	Charges     int64     `json:"charges"`
	Errors      int64     `json:"errors"`
	ErrorSample string    `json:"error_sample,omitempty"`
}

// TargetsText is the cluster's performance targets, reported and never asserted.
const TargetsText = "3-node admission p99 ≤ 5 ms at 1,000 charges/s offered, ≥ 10,000 charges/s at 1,024 in flight, forwarded admission ≤ 1 ms p50, CPU per charge per node with 6 nodes ≤ 0.6× that with 3 at the same offered load, single-node figures no worse than today"

// Run measures the single node, then the cluster.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	dir := cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "modelgate-clusterbench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	b := &bench{cfg: cfg, rep: &Report{Nodes: cfg.Nodes, Replicas: cfg.Replicas, Shards: cfg.Shards, Accounts: cfg.Accounts, MutualTLS: true, Targets: TargetsText,
		Engine: EngineSettings{engine.DefaultRTTMillisecond, engine.DefaultElectionRTT, engine.DefaultHeartbeatRTT, engine.DefaultLogDBShards, engine.DefaultExecShards}}}
	for i := range cfg.Accounts {
		b.accounts = append(b.accounts, fmt.Sprintf("cb-acct-%05d", i))
	}
	if err := b.measure(ctx, 1, PathSingle, func() (*deployment, error) { return startSingle(filepath.Join(dir, "single")) }); err != nil {
		return nil, fmt.Errorf("single node: %w", err)
	}
	err := b.measure(ctx, cfg.Nodes, PathCluster, func() (*deployment, error) {
		return startCluster(filepath.Join(dir, "cluster"), cfg.Nodes, cfg.Replicas, cfg.Shards, false)
	})
	if err != nil {
		return nil, fmt.Errorf("%d nodes: %w", cfg.Nodes, err)
	}
	if cfg.Plain {
		err := b.measure(ctx, cfg.Nodes, PathPlain, func() (*deployment, error) {
			return startCluster(filepath.Join(dir, "plain"), cfg.Nodes, cfg.Replicas, cfg.Shards, true)
		})
		if err != nil {
			return nil, fmt.Errorf("%d nodes, plain TCP: %w", cfg.Nodes, err)
		}
	}
	return b.rep, nil
}

type bench struct {
	cfg      Config
	rep      *Report
	accounts []string
	runs     int // request ids stay unique across runs
}

func (b *bench) logf(format string, args ...any) { fmt.Fprintf(b.cfg.Log, format+"\n", args...) }

// measure starts a setup, funds the accounts, runs every in-flight cell, checks the ledger,
// reads memory, runs the kill trials on a cluster, and stops it.
func (b *bench) measure(ctx context.Context, nodes int, path string, start func() (*deployment, error)) error {
	debug.FreeOSMemory() // what the last setup left is not charged to this one
	before := rssMiB()
	t0 := time.Now()
	d, err := start()
	if err != nil {
		return err
	}
	defer d.close()
	if err := fund(ctx, d.members[0].svc, b.accounts); err != nil {
		return err
	}
	b.logf("cluster scenario: %d node(s) started and %d accounts funded in %.1fs", nodes, len(b.accounts), time.Since(t0).Seconds())
	l := newLedger(len(b.accounts))
	for _, inFlight := range b.cfg.InFlight {
		run, err := b.cell(ctx, d, nodes, path, shape{inFlight: inFlight}, l)
		if err != nil {
			return err
		}
		b.rep.Runs = append(b.rep.Runs, run)
	}
	for _, rate := range b.cfg.Rates {
		if path == PathPlain {
			break // the comparison is the closed-loop cells
		}
		run, err := b.cell(ctx, d, nodes, path, shape{rate: rate}, l)
		if err != nil {
			return err
		}
		b.rep.Runs = append(b.rep.Runs, run)
	}
	after := rssMiB()
	b.rep.Memory = append(b.rep.Memory, Memory{Nodes: nodes, Path: path, BeforeMiB: before, AfterMiB: after, PerNodeMiB: round((after-before)/float64(nodes), 1)})
	if path == PathCluster && b.cfg.Kills > 0 {
		f, err := b.failover(ctx, d, l)
		if err != nil {
			return err
		}
		b.rep.Failover = f
	}
	return nil
}

// shape is a cell's load: inFlight charges at a time (closed loop) or rate charges a second
// (open loop).
type shape struct{ inFlight, rate int }

func (s shape) String() string {
	if s.rate > 0 {
		return fmt.Sprintf("%d/s offered", s.rate)
	}
	return fmt.Sprintf("%d in flight", s.inFlight)
}

// cell is one (nodes, load) cell: Reps runs, each after its warm-up.
func (b *bench) cell(ctx context.Context, d *deployment, nodes int, path string, sh shape, l *ledger) (Cell, error) {
	run := Cell{Nodes: nodes, Path: path, MutualTLS: path == PathCluster, InFlight: sh.inFlight, Rate: sh.rate, Reps: b.cfg.Reps}
	admit, charge, forwarded := load.NewHistogram(), load.NewHistogram(), load.NewHistogram()
	var rates []float64
	var steps, entries, fromMemory, batches, batched uint64
	var cpu time.Duration
	for rep := 1; rep <= b.cfg.Reps; rep++ {
		if b.cfg.Warmup > 0 {
			b.load(d.members, sh, b.cfg.Warmup, l).run(ctx)
		}
		applied0, memory0, cpu0 := d.committed(), d.fromMemory(), processCPU()
		batches0, batched0 := d.forwardBatches()
		res := b.load(d.members, sh, b.cfg.Duration, l).run(ctx)
		cpu += processCPU() - cpu0
		fromMemory += d.fromMemory() - memory0
		batches1, batched1 := d.forwardBatches()
		batches, batched = batches+batches1-batches0, batched+batched1-batched0
		if err := ctx.Err(); err != nil {
			return run, err
		}
		entries += d.committed() - applied0
		steps += 2 * uint64(res.charges)
		run.Charges += res.charges
		run.Errors += res.errors
		if run.ErrorSample == "" {
			run.ErrorSample = res.errSample
		}
		admit.Merge(res.admit)
		charge.Merge(res.charge)
		forwarded.Merge(res.forwarded)
		rate := float64(res.charges) / res.elapsed.Seconds()
		rates = append(rates, rate)
		b.logf("cluster %d node(s) %s rep %d: %.0f charges/s, admit p50 %.2f ms p99 %.2f ms, %d errors",
			nodes, sh, rep, rate, ms(res.admit.Quantile(0.5)), ms(res.admit.Quantile(0.99)), res.errors)
	}
	run.ChargesPerSecond = spread(rates)
	if run.Charges > 0 {
		run.CPUPerChargeMS = round(cpu.Seconds()*1000/float64(run.Charges)/float64(nodes), 3)
	}
	run.Admit, run.Charge = admit.Summarize(), charge.Summarize()
	if !d.single && entries > 0 {
		v := round(float64(steps)/float64(entries), 2)
		run.StepsPerProposal = &v
		if f := forwarded.Summarize(); f.Count > 0 {
			run.Forwarded = &f
		}
		if batches > 0 {
			v := round(float64(batched)/float64(batches), 2)
			run.StepsPerForward = &v
		}
		if run.Charges > 0 {
			m := round(float64(fromMemory)/float64(run.Charges), 2)
			run.FromMemory = &m
		}
	}
	if run.Errors == 0 {
		exact, err := ledgerExact(ctx, d.members[0].svc, b.accounts, l)
		if err != nil {
			return run, err
		}
		run.LedgerExact = &exact
	}
	return run, nil
}

func (b *bench) load(members []*member, sh shape, d time.Duration, l *ledger) *loadRun {
	b.runs++
	return &loadRun{members: members, accounts: b.accounts, inFlight: sh.inFlight, rate: sh.rate, duration: d, ledger: l, runID: "cb" + strconv.Itoa(b.runs)}
}

// Shape of a kill trial: load before the stop, then long enough after it for an election
// and for a given-up admission (accounts.TotalWait) to be counted.
const (
	beforeKill = time.Second
	afterKill  = 3 * time.Second
)

// failover runs the kill trials: each stops the leader of the first account's shard while
// the other nodes charge, then starts it again and waits for every shard to have a leader.
func (b *bench) failover(ctx context.Context, d *deployment, l *ledger) (*Failover, error) {
	f := &Failover{InFlight: b.cfg.KillInFlight}
	shard := d.members[0].owner.Shard(b.accounts[0])
	for k := 1; k <= b.cfg.Kills; k++ {
		victim, ok := d.leader(shard)
		if !ok {
			return nil, fmt.Errorf("kill %d: shard %d has no leader", k, shard)
		}
		var others []*member
		for _, m := range d.running() {
			if m != victim {
				others = append(others, m)
			}
		}
		lr := b.load(others, shape{inFlight: b.cfg.KillInFlight}, beforeKill+afterKill, l)
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			select {
			case <-time.After(beforeKill):
			case <-ctx.Done():
				return
			}
			lr.killedAt.Store(time.Now().UnixNano())
			d.kill(victim)
		}()
		res := lr.run(ctx)
		<-stopped
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f.Kills++
		f.StallsMS = append(f.StallsMS, round(res.stall.Seconds()*1000, 1))
		f.Charges += res.charges
		f.Errors += res.errors
		if f.ErrorSample == "" {
			f.ErrorSample = res.errSample
		}
		b.logf("cluster kill %d/%d of node %d (leader of shard %d): longest admission wait %.0f ms, %d errors",
			k, b.cfg.Kills, victim.id, shard, res.stall.Seconds()*1000, res.errors)
		if victim.eng == nil { // the context did not end before the stop
			if err := d.start(victim); err != nil {
				return nil, fmt.Errorf("restart node %d: %w", victim.id, err)
			}
		}
		if err := d.waitLeaders(30 * time.Second); err != nil {
			return nil, err
		}
	}
	sorted := slices.Sorted(slices.Values(f.StallsMS))
	if len(sorted) > 0 {
		f.MedianMS, f.MaxMS = median(sorted), sorted[len(sorted)-1]
	}
	return f, nil
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return round((sorted[n/2-1]+sorted[n/2])/2, 1)
}

func spread(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Sorted(slices.Values(v))
	return Spread{Median: round(median(s), 0), Min: round(s[0], 0), Max: round(s[len(s)-1], 0)}
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// rssMiB is this process's resident memory now (VmRSS), 0 when /proc cannot say.
func rssMiB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return 0
			}
			return round(float64(kb)/1024, 1)
		}
	}
	return 0
}

// processCPU is this process's CPU time so far (user and system), 0 when it cannot say.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
