package harness

// What a suite run records, in the shape of its JSON file (report_files.go writes it,
// report_markdown.go renders it).

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelgate/modelgate/bench/clusterbench"
	"github.com/modelgate/modelgate/bench/load"
)

// SchemaVersion changes when the report's shape does: 2 added the server core's CPU, the
// peer targets, each scenario's per-target figures and its ratios against each other target.
const SchemaVersion = 2

// Report is everything one suite run measured. Missing measurements are null, never absent.
type Report struct {
	Schema     int              `json:"schema"`
	Tool       string           `json:"tool"`
	StartedAt  time.Time        `json:"started_at"`
	FinishedAt time.Time        `json:"finished_at"`
	WallS      float64          `json:"wall_s"`
	Machine    Machine          `json:"machine"`
	Git        GitInfo          `json:"git"`
	Config     ReportConfig     `json:"config"`
	Endpoints  Endpoints        `json:"endpoints"`
	Setup      Setup            `json:"setup"`
	Scenarios  []ScenarioReport `json:"scenarios"`
	// Noise is how busy the rest of the machine was during the runs.
	Noise Noise `json:"noise"`
	// Headline is one row per scenario: the performance targets, side by side.
	Headline []Comparison `json:"headline"`
	// Cluster is the cluster scenario's section (null when it did not run).
	Cluster *clusterbench.Report `json:"cluster"`
}

// Machine is where the run happened.
type Machine struct {
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	MemTotalMB int64  `json:"mem_total_mib"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"`
	ClockTicks int64  `json:"clock_ticks_per_s"`
}

// GitInfo is the commit measured, when the run is inside a git checkout.
type GitInfo struct {
	Commit string `json:"commit"`
	Dirty  bool   `json:"dirty"`
}

// ReportConfig is Config as recorded.
type ReportConfig struct {
	Scenarios      []string `json:"scenarios"`
	Targets        []string `json:"targets"`
	DurationS      float64  `json:"duration_s"`
	WarmupS        float64  `json:"warmup_s"`
	Reps           int      `json:"reps"`
	Concurrency    int      `json:"concurrency"`
	Rate           float64  `json:"rate_rps"`
	RateFraction   float64  `json:"rate_fraction"`
	MaxInFlight    int      `json:"max_in_flight"`
	Accounts       int      `json:"accounts"`
	AccountWorkers int      `json:"account_workers"`
	BurstRPM       int      `json:"burst_rpm"`
	ClientCPUs     string   `json:"client_cpus"`
	ServerCPUs     string   `json:"server_cpus"`
}

// Setup is what happened before the measurements.
type Setup struct {
	Seconds           float64 `json:"seconds"`
	Accounts          int     `json:"accounts"`
	AccountsSeconds   float64 `json:"accounts_s"`
	AccountsPerSecond float64 `json:"accounts_per_s"`
	BurstAccounts     int     `json:"burst_accounts"`
	HotAccounts       int     `json:"hot_accounts"`
	// GatewayPeakRSSKB is the gateway's VmHWM after setup: its peak since it started,
	// account creation included (null when the gateway's PID is unknown).
	GatewayPeakRSSKB *int64 `json:"gateway_peak_rss_after_setup_kib"`
}

// ScenarioReport is one scenario's phases and comparison.
type ScenarioReport struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Endpoint    string        `json:"endpoint"`
	Stream      bool          `json:"stream"`
	Targets     []string      `json:"targets"`
	Phases      []PhaseReport `json:"phases"`
	Comparison  Comparison    `json:"comparison"`
	// Profile is the gateway's CPU profile over the first saturated run (--profile).
	Profile *ProfileReport `json:"profile,omitempty"`
}

// PhaseReport is one load shape, every run of it and a summary per target.
type PhaseReport struct {
	Name        string          `json:"name"`
	Mode        string          `json:"mode"`        // closed | open
	Concurrency int             `json:"concurrency"` // closed loop
	OfferedRPS  float64         `json:"offered_rps"` // open loop
	Runs        []RunReport     `json:"runs"`
	Summaries   []TargetSummary `json:"summaries"`
}

// RunReport is one measured run of one target.
type RunReport struct {
	Target string `json:"target"`
	Rep    int    `json:"rep"`
	*load.Result
	// HopCPU is the CPU of the process between client and simulator (proxy or gateway;
	// null for direct), SimCPU the simulator's, ClientCPU the load generator's.
	HopCPU    *CPUReport `json:"hop_cpu"`
	SimCPU    *CPUReport `json:"sim_cpu"`
	ClientCPU *CPUReport `json:"client_cpu"`
	// Peak RSS during the run (VmHWM, reset before the run when the kernel allows it).
	HopPeakRSSKB *PeakRSS `json:"hop_peak_rss"`
	SimPeakRSSKB *PeakRSS `json:"sim_peak_rss"`
	// UpstreamCalls is how many calls reached the simulator's routes of the scenario.
	UpstreamCalls           *int64       `json:"upstream_calls"`
	UpstreamCallsPerRequest *float64     `json:"upstream_calls_per_request"`
	Expected                *Expectation `json:"expected"`
	// Machine is the whole machine's CPU during the run, to show noise: what our processes
	// used, what other processes used, and hypervisor steal.
	Machine *MachineCPU `json:"machine_cpu"`
	// ServerCore is the server CPUs' whole busy time (pinned runs only, else null).
	ServerCore *CoreCPU `json:"server_core_cpu"`
}

// CoreCPU is the whole busy time of the CPUs the servers are pinned to over one run, from
// /proc/stat's per-CPU lines (user+nice+system+irq+softirq+steal): every server there and
// the kernel's work on their behalf that no process's utime+stime holds (softirqs of the
// loopback traffic, interrupts, the journal's work for an fsync when it runs there). The
// other servers idle on the same CPUs, and another process scheduled there counts too.
type CoreCPU struct {
	CPUs         string  `json:"cpus"`
	BusySeconds  float64 `json:"busy_s"`
	StealSeconds float64 `json:"steal_s"`
	BusyCores    float64 `json:"busy_cores"` // busy seconds per second of the run
	USPerRequest float64 `json:"us_per_request"`
	// ServersSeconds is our server processes' own utime+stime in the run; what the core
	// spent beyond it, per request, is OutsideServersUSPerRequest.
	ServersSeconds             float64 `json:"servers_s"`
	OutsideServersUSPerRequest float64 `json:"outside_servers_us_per_request"`
}

// MachineCPU is the whole machine's CPU over one run (/proc/stat), split into our processes
// (simulator, proxy, gateway, load generator) and the rest. OtherCores and StealCores are
// per second of the run: 0.5 means half a core was busy elsewhere (or stolen) throughout.
type MachineCPU struct {
	BusySeconds  float64 `json:"busy_s"`
	OursSeconds  float64 `json:"ours_s"`
	OtherSeconds float64 `json:"other_s"`
	StealSeconds float64 `json:"steal_s"`
	OtherCores   float64 `json:"other_cores"`
	StealCores   float64 `json:"steal_cores"`
}

// Noise is MachineCPU over every run of the report.
type Noise struct {
	Runs             int     `json:"runs"`
	MedianOtherCores float64 `json:"median_other_cores"`
	MaxOtherCores    float64 `json:"max_other_cores"`
	MedianStealCores float64 `json:"median_steal_cores"`
	MaxStealCores    float64 `json:"max_steal_cores"`
	LoadAvgStart     string  `json:"loadavg_start"`
}

// CPUReport is a process's CPU time over a run, from /proc/<pid>/stat.
type CPUReport struct {
	Seconds       float64 `json:"cpu_s"`
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	USPerRequest  float64 `json:"us_per_request"`
}

// PeakRSS is VmHWM in KiB; PerRun says whether it was reset before the run (otherwise it
// is the peak since the process started).
type PeakRSS struct {
	KB     int64 `json:"kib"`
	PerRun bool  `json:"per_run"`
}

// Expectation is a correctness check reported (never asserted) by a scenario.
type Expectation struct {
	Status int    `json:"status"`
	Want   int64  `json:"want"`
	Got    int64  `json:"got"`
	Met    bool   `json:"met"`
	Rule   string `json:"rule"`
}

// Spread is the median and range of one number over repetitions.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// TargetSummary is one target's runs of a phase: medians over repetitions, except Max
// latency and peak RSS (the largest) and counts (summed).
type TargetSummary struct {
	Target        string           `json:"target"`
	Runs          int              `json:"runs"`
	Requests      int64            `json:"requests"`
	Errors        int64            `json:"errors"`
	Statuses      map[string]int64 `json:"statuses"`
	Throughput    Spread           `json:"throughput_rps"`
	P50           Spread           `json:"p50_us"`
	P90           float64          `json:"p90_us"`
	P99           float64          `json:"p99_us"`
	P999          float64          `json:"p99_9_us"`
	Max           float64          `json:"max_us"`
	TTFBP50       *float64         `json:"ttfb_p50_us"`
	TTFBP99       *float64         `json:"ttfb_p99_us"`
	HopCPUPerReq  *Spread          `json:"hop_cpu_us_per_request"`
	CoreCPUPerReq *Spread          `json:"server_core_cpu_us_per_request"`
	OutsidePerReq *float64         `json:"outside_servers_cpu_us_per_request"`
	SimCPUPerReq  *float64         `json:"sim_cpu_us_per_request"`
	ClientCPUReq  *float64         `json:"client_cpu_us_per_request"`
	HopPeakRSSMiB *float64         `json:"hop_peak_rss_mib"`
	UpstreamPerRq *float64         `json:"upstream_calls_per_request"`
	ExpectedMet   *bool            `json:"expected_met"`
}

// Comparison is a scenario's headline: the performance targets, reported and never asserted.
type Comparison struct {
	Scenario string `json:"scenario"`
	// P50 at concurrency 1 per target, and the gateway's added latency over the floor
	// proxy (gateway − proxy) and the proxy hop's own (proxy − direct).
	C1P50US            map[string]float64 `json:"c1_p50_us"`
	GatewayAddedP50US  *float64           `json:"gateway_added_p50_us"`
	ProxyHopP50US      *float64           `json:"proxy_hop_p50_us"`
	FixedRateRPS       *float64           `json:"fixed_rate_rps"`
	FixedRateCPUPerReq map[string]float64 `json:"fixed_rate_hop_cpu_us_per_request"`
	SaturatedCPUPerReq map[string]float64 `json:"saturated_hop_cpu_us_per_request"`
	// C1P99US is p99 at concurrency 1 per target; GatewayAddedP99US the gateway's over the
	// proxy's.
	C1P99US           map[string]float64 `json:"c1_p99_us"`
	GatewayAddedP99US *float64           `json:"gateway_added_p99_us"`
	// CPURatio is gateway ÷ proxy CPU per request at the fixed rate (else saturated), on
	// CPUBasis: the whole server core when pinned, else the hop process.
	CPURatio        *float64           `json:"cpu_ratio"`
	CPUBasis        string             `json:"cpu_basis"`
	SaturatedRPS    map[string]float64 `json:"saturated_rps"`
	ThroughputRatio *float64           `json:"throughput_ratio"` // gateway ÷ proxy
	GatewayPeakMiB  *float64           `json:"gateway_peak_rss_mib"`
	Errors          map[string]int64   `json:"errors"`
	Expected        *bool              `json:"expected_met"`
	UpstreamPerReq  *float64           `json:"gateway_upstream_calls_per_request"`
	// Targets is each target's figures side by side (the outside review's columns).
	Targets []TargetFigures `json:"targets"`
	// Ratios is the gateway against each other hop in the run: the proxy, then the peers.
	Ratios []PairRatios `json:"ratios"`
}

// CPUBasis values: what a CPU per request figure counts.
const (
	BasisCore    = "server core" // the pinned server CPUs' whole busy time
	BasisProcess = "process"     // the hop process's utime+stime
)

// TargetFigures is one target's medians in a scenario: saturated throughput, CPU per request
// (the hop process's and the whole server core's) saturated and at the fixed rate, latency
// at the fixed rate and at concurrency 1, and the hop's peak RSS over the scenario.
type TargetFigures struct {
	Target            string   `json:"target"`
	SaturatedRPS      *float64 `json:"saturated_rps"`
	SaturatedCPU      CPUPair  `json:"saturated_cpu_us_per_request"`
	FixedRateCPU      CPUPair  `json:"fixed_rate_cpu_us_per_request"`
	FixedRateP50US    *float64 `json:"fixed_rate_p50_us"`
	FixedRateP99US    *float64 `json:"fixed_rate_p99_us"`
	C1P50US           *float64 `json:"c1_p50_us"`
	C1P99US           *float64 `json:"c1_p99_us"`
	PeakRSSMiB        *float64 `json:"peak_rss_mib"`
	Errors            int64    `json:"errors"`
	IncompleteStreams int64    `json:"incomplete_streams"`
}

// CPUPair is CPU per request counted two ways (null where not measured).
type CPUPair struct {
	Process *float64 `json:"process"`
	Core    *float64 `json:"server_core"`
}

// PairRatios is the gateway ÷ another target in one scenario: saturated throughput (more
// is better) and CPU per request at the fixed rate, else saturated (less is better).
type PairRatios struct {
	Against    string   `json:"against"`
	Throughput *float64 `json:"throughput"`
	CPU        *float64 `json:"cpu"` // on the comparison's CPUBasis
	ProcessCPU *float64 `json:"process_cpu"`
	CoreCPU    *float64 `json:"core_cpu"`
}

func newReport(cfg Config, ep Endpoints) *Report {
	r := &Report{Schema: SchemaVersion, Tool: "modelgate-bench", StartedAt: time.Now().UTC(), Machine: ReadMachine(), Git: readGit(), Endpoints: ep,
		Scenarios: []ScenarioReport{}, Headline: []Comparison{}}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 3 {
			r.Noise.LoadAvgStart = strings.Join(f[:3], " ")
		}
	}
	sel, _ := SelectScenarios(cfg.Scenarios)
	for _, s := range sel {
		r.Config.Scenarios = append(r.Config.Scenarios, s.Name)
	}
	if WantsCluster(cfg.Scenarios) {
		r.Config.Scenarios = append(r.Config.Scenarios, ClusterScenario)
	}
	r.Config.Targets = AllTargets // Run sets the targets it measures
	r.Config.DurationS, r.Config.WarmupS = cfg.Duration.Seconds(), max(0, cfg.Warmup.Seconds())
	r.Config.Reps, r.Config.Concurrency, r.Config.Rate, r.Config.RateFraction = cfg.Reps, cfg.Concurrency, cfg.Rate, cfg.RateFraction
	r.Config.MaxInFlight, r.Config.Accounts, r.Config.AccountWorkers, r.Config.BurstRPM = cfg.MaxInFlight, cfg.Accounts, cfg.AccountWorkers, cfg.BurstRPM
	r.Config.ClientCPUs, r.Config.ServerCPUs = cfg.ClientCPUs.String(), cfg.ServerCPUs.String()
	return r
}

func (r *Report) finish() {
	r.FinishedAt = time.Now().UTC()
	r.WallS = round(r.FinishedAt.Sub(r.StartedAt).Seconds(), 1)
	r.Headline = r.Headline[:0]
	var other, steal []float64
	for _, s := range r.Scenarios {
		r.Headline = append(r.Headline, s.Comparison)
		for _, ph := range s.Phases {
			for _, run := range ph.Runs {
				if run.Machine != nil {
					other = append(other, run.Machine.OtherCores)
					steal = append(steal, run.Machine.StealCores)
				}
			}
		}
	}
	r.Noise.Runs = len(other)
	if len(other) > 0 {
		r.Noise.MedianOtherCores, r.Noise.MaxOtherCores = round(median(other), 2), slices.Max(other)
		r.Noise.MedianStealCores, r.Noise.MaxStealCores = round(median(steal), 2), slices.Max(steal)
	}
}
