package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/modelgate/modelgate/bench/load"
)

// SchemaVersion changes when the report's shape does.
const SchemaVersion = 1

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
	// Headline is one row per scenario: the targets, side by side.
	Headline []Comparison `json:"headline"`
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
	SimCPUPerReq  *float64         `json:"sim_cpu_us_per_request"`
	ClientCPUReq  *float64         `json:"client_cpu_us_per_request"`
	HopPeakRSSMiB *float64         `json:"hop_peak_rss_mib"`
	UpstreamPerRq *float64         `json:"upstream_calls_per_request"`
	ExpectedMet   *bool            `json:"expected_met"`
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func spread(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	return Spread{Median: round(median(v), 1), Min: slices.Min(v), Max: slices.Max(v)}
}

func summarize(runs []RunReport, targets []string) []TargetSummary {
	var out []TargetSummary
	for _, tn := range targets {
		ts := TargetSummary{Target: tn, Statuses: map[string]int64{}}
		var thr, p50, p90, p99, p999, ttfb50, ttfb99, hop, sim, cli, up []float64
		allMet, anyExp := true, false
		for _, r := range runs {
			if r.Target != tn {
				continue
			}
			ts.Runs++
			ts.Requests += r.Requests
			ts.Errors += r.Errors
			for k, v := range r.Statuses {
				ts.Statuses[k] += v
			}
			thr = append(thr, r.Throughput)
			p50 = append(p50, r.Latency.P50)
			p90 = append(p90, r.Latency.P90)
			p99 = append(p99, r.Latency.P99)
			p999 = append(p999, r.Latency.P999)
			ts.Max = max(ts.Max, r.Latency.Max)
			if r.TTFB != nil {
				ttfb50 = append(ttfb50, r.TTFB.P50)
				ttfb99 = append(ttfb99, r.TTFB.P99)
			}
			if r.HopCPU != nil {
				hop = append(hop, r.HopCPU.USPerRequest)
			}
			if r.SimCPU != nil {
				sim = append(sim, r.SimCPU.USPerRequest)
			}
			if r.ClientCPU != nil {
				cli = append(cli, r.ClientCPU.USPerRequest)
			}
			if r.HopPeakRSSKB != nil {
				mib := round(float64(r.HopPeakRSSKB.KB)/1024, 1)
				if ts.HopPeakRSSMiB == nil || mib > *ts.HopPeakRSSMiB {
					ts.HopPeakRSSMiB = &mib
				}
			}
			if r.UpstreamCallsPerRequest != nil {
				up = append(up, *r.UpstreamCallsPerRequest)
			}
			if r.Expected != nil {
				anyExp = true
				allMet = allMet && r.Expected.Met
			}
		}
		if ts.Runs == 0 {
			continue
		}
		ts.Throughput, ts.P50 = spread(thr), spread(p50)
		ts.P90, ts.P99, ts.P999 = round(median(p90), 1), round(median(p99), 1), round(median(p999), 1)
		ts.TTFBP50, ts.TTFBP99 = medianPtr(ttfb50), medianPtr(ttfb99)
		if len(hop) > 0 {
			s := spread(hop)
			ts.HopCPUPerReq = &s
		}
		ts.SimCPUPerReq, ts.ClientCPUReq, ts.UpstreamPerRq = medianPtr(sim), medianPtr(cli), medianPtr(up)
		if anyExp {
			ts.ExpectedMet = &allMet
		}
		out = append(out, ts)
	}
	return out
}

func medianPtr(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	m := round(median(v), 3)
	return &m
}

// Comparison is a scenario's headline: the targets, reported and never asserted.
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
	// CPURatio is gateway ÷ proxy hop CPU per request at the fixed rate (else saturated).
	CPURatio        *float64           `json:"cpu_ratio"`
	SaturatedRPS    map[string]float64 `json:"saturated_rps"`
	ThroughputRatio *float64           `json:"throughput_ratio"` // gateway ÷ proxy
	GatewayPeakMiB  *float64           `json:"gateway_peak_rss_mib"`
	Errors          map[string]int64   `json:"errors"`
	Expected        *bool              `json:"expected_met"`
	UpstreamPerReq  *float64           `json:"gateway_upstream_calls_per_request"`
}

func compare(sr ScenarioReport) Comparison {
	c := Comparison{Scenario: sr.Name, C1P50US: map[string]float64{}, FixedRateCPUPerReq: map[string]float64{},
		SaturatedCPUPerReq: map[string]float64{}, SaturatedRPS: map[string]float64{}, Errors: map[string]int64{}}
	for _, ph := range sr.Phases {
		for _, ts := range ph.Summaries {
			c.Errors[ts.Target] += ts.Errors
			if ts.HopPeakRSSMiB != nil && ts.Target == TargetGateway && (c.GatewayPeakMiB == nil || *ts.HopPeakRSSMiB > *c.GatewayPeakMiB) {
				v := *ts.HopPeakRSSMiB
				c.GatewayPeakMiB = &v
			}
			if ts.ExpectedMet != nil {
				v := *ts.ExpectedMet && (c.Expected == nil || *c.Expected)
				c.Expected = &v
			}
			if ts.Target == TargetGateway && ts.UpstreamPerRq != nil && (ph.Name == PhaseSaturated || c.UpstreamPerReq == nil) {
				v := *ts.UpstreamPerRq
				c.UpstreamPerReq = &v
			}
			switch ph.Name {
			case PhaseC1:
				c.C1P50US[ts.Target] = ts.P50.Median
			case PhaseSaturated:
				c.SaturatedRPS[ts.Target] = ts.Throughput.Median
				if ts.HopCPUPerReq != nil {
					c.SaturatedCPUPerReq[ts.Target] = ts.HopCPUPerReq.Median
				}
			case PhaseFixedRate:
				r := ph.OfferedRPS
				c.FixedRateRPS = &r
				if ts.HopCPUPerReq != nil {
					c.FixedRateCPUPerReq[ts.Target] = ts.HopCPUPerReq.Median
				}
			}
		}
	}
	diff := func(m map[string]float64, a, b string) *float64 {
		x, ok1 := m[a]
		y, ok2 := m[b]
		if !ok1 || !ok2 {
			return nil
		}
		v := round(x-y, 1)
		return &v
	}
	ratio := func(m map[string]float64, a, b string) *float64 {
		x, ok1 := m[a]
		y, ok2 := m[b]
		if !ok1 || !ok2 || y == 0 {
			return nil
		}
		v := round(x/y, 2)
		return &v
	}
	c.GatewayAddedP50US = diff(c.C1P50US, TargetGateway, TargetProxy)
	c.ProxyHopP50US = diff(c.C1P50US, TargetProxy, TargetDirect)
	if c.CPURatio = ratio(c.FixedRateCPUPerReq, TargetGateway, TargetProxy); c.CPURatio == nil {
		c.CPURatio = ratio(c.SaturatedCPUPerReq, TargetGateway, TargetProxy)
	}
	c.ThroughputRatio = ratio(c.SaturatedRPS, TargetGateway, TargetProxy)
	return c
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
	r.Config.Targets = AllTargets
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

// ReadMachine describes this machine.
func ReadMachine() Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), ClockTicks: ClockTicks()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, err := ParseStatusKB(b, "MemTotal"); err == nil {
			m.MemTotalMB = kb / 1024
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func readGit() GitInfo {
	var g GitInfo
	if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		g.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
			g.Dirty = len(strings.TrimSpace(string(st))) > 0
		}
	}
	return g
}

// ReadReport reads a JSON report written by WriteFiles.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema != SchemaVersion {
		return nil, fmt.Errorf("%s: report schema %d, this build reads %d", path, r.Schema, SchemaVersion)
	}
	return &r, nil
}

// WriteFiles writes <dir>/<stamp>.json and <dir>/<stamp>.md (through .tmp files renamed
// into place) and returns their paths. The stamp is the start time, UTC.
func (r *Report) WriteFiles(dir string) (jsonPath, mdPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	stamp := r.StartedAt.Format("2006-01-02T150405Z")
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", err
	}
	jsonPath, mdPath = filepath.Join(dir, stamp+".json"), filepath.Join(dir, stamp+".md")
	for path, data := range map[string][]byte{jsonPath: append(b, '\n'), mdPath: []byte(r.Markdown())} {
		if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
			return "", "", err
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return "", "", err
		}
	}
	return jsonPath, mdPath, nil
}

// Markdown is the summary: the headline table, then one table per scenario.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# modelgate bench, %s\n\n", r.StartedAt.Format("2006-01-02 15:04 UTC"))
	b.WriteString(r.MachineLine() + "\n\n")
	b.WriteString(r.HeadlineTable())
	b.WriteString("\n")
	for _, s := range r.Scenarios {
		fmt.Fprintf(&b, "## %s\n\n%s.\n\n", s.Name, s.Description)
		b.WriteString("| phase | target | req/s (range) | p50 µs (range) | p90 | p99 | p99.9 | max | TTFB p50 | errors | hop CPU µs/req | sim CPU µs/req | client CPU µs/req | hop peak RSS MiB |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, ph := range s.Phases {
			for _, ts := range ph.Summaries {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					phaseLabel(ph), ts.Target, spreadCell(ts.Throughput), spreadCell(ts.P50), num(ts.P90), num(ts.P99), num(ts.P999), num(ts.Max),
					optNum(ts.TTFBP50), errorsCell(ts), optSpread(ts.HopCPUPerReq), optNum(ts.SimCPUPerReq), optNum(ts.ClientCPUReq), optNum(ts.HopPeakRSSMiB))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// MachineLine is one sentence on the machine and the run's shape.
func (r *Report) MachineLine() string {
	m := r.Machine
	pin := "not pinned"
	if r.Config.ClientCPUs != "" || r.Config.ServerCPUs != "" {
		pin = fmt.Sprintf("load generator on CPUs %s, servers on CPUs %s", orDash(r.Config.ClientCPUs), orDash(r.Config.ServerCPUs))
	}
	commit := r.Git.Commit
	if commit == "" {
		commit = "unknown"
	} else if r.Git.Dirty {
		commit += " (uncommitted changes)"
	}
	return fmt.Sprintf("Machine: %d × %s, %d MiB RAM, Linux %s, %s, %s/%s; %s. Commit %s. Each run: %.1f s warm-up, %.1f s measured, %d repetitions interleaved direct → proxy → gateway; saturated = %d connections; fixed rate = %s; %s; wall time %.0f s. %s",
		m.CPUs, m.CPUModel, m.MemTotalMB, m.Kernel, m.GoVersion, m.OS, m.Arch, pin, commit,
		r.Config.WarmupS, r.Config.DurationS, r.Config.Reps, r.Config.Concurrency, rateText(r.Config), accountsText(r), r.WallS, r.NoiseLine())
}

// NoiseLine says how busy the rest of the machine was.
func (r *Report) NoiseLine() string {
	n := r.Noise
	if n.Runs == 0 {
		return ""
	}
	return fmt.Sprintf("Other processes used a median %.2f cores during the runs (max %.2f), hypervisor steal a median %.2f (max %.2f); load average at start %s.",
		n.MedianOtherCores, n.MaxOtherCores, n.MedianStealCores, n.MaxStealCores, orDash(n.LoadAvgStart))
}

func rateText(c ReportConfig) string {
	if c.Rate > 0 {
		return fmt.Sprintf("%.0f req/s for every target", c.Rate)
	}
	return fmt.Sprintf("%.0f%% of the gateway's saturated req/s, the same for every target", c.RateFraction*100)
}

func accountsText(r *Report) string {
	if r.Setup.Accounts == 0 {
		return "no many-accounts setup"
	}
	s := fmt.Sprintf("%d accounts created through the admin API in %.1f s", r.Setup.Accounts, r.Setup.AccountsSeconds)
	if r.Setup.GatewayPeakRSSKB != nil {
		s += fmt.Sprintf(" (gateway peak RSS after setup %.0f MiB)", float64(*r.Setup.GatewayPeakRSSKB)/1024)
	}
	return s
}

// HeadlineTable is the side-by-side table: per scenario, p50 at concurrency 1, hop CPU per
// request at the same offered load, saturated throughput and the gateway's peak RSS.
func (r *Report) HeadlineTable() string {
	var b strings.Builder
	b.WriteString("| scenario | p50 at c=1, µs: direct / proxy / gateway | gateway added p50 vs proxy | hop CPU µs/req at the same load: proxy / gateway | saturated req/s: direct / proxy / gateway | gateway peak RSS MiB | errors (gateway) |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, c := range r.Headline {
		cpu, at := c.FixedRateCPUPerReq, ""
		if c.FixedRateRPS != nil {
			at = fmt.Sprintf(" (%.0f req/s)", *c.FixedRateRPS)
		} else if len(c.SaturatedCPUPerReq) > 0 {
			cpu, at = c.SaturatedCPUPerReq, " (saturated)"
		}
		cpuCell := "—"
		if len(cpu) > 0 {
			cpuCell = triple(cpu, TargetProxy, TargetGateway) + at
		}
		added := "—"
		if c.GatewayAddedP50US != nil {
			added = fmt.Sprintf("%+.0f µs", *c.GatewayAddedP50US)
		}
		errs := fmt.Sprintf("%d", c.Errors[TargetGateway])
		if c.Expected != nil {
			if *c.Expected {
				errs += " (429s as expected)"
			} else {
				errs += " (429 count NOT as expected)"
			}
		}
		if c.UpstreamPerReq != nil && c.Scenario == "failover" {
			errs += fmt.Sprintf("; %.2f upstream calls/req", *c.UpstreamPerReq)
		}
		thr := "—"
		if len(c.SaturatedRPS) > 0 {
			thr = triple(c.SaturatedRPS, TargetDirect, TargetProxy, TargetGateway)
			if c.ThroughputRatio != nil {
				thr += fmt.Sprintf(" (×%.2f)", *c.ThroughputRatio)
			}
		}
		if len(cpu) > 0 && c.CPURatio != nil {
			cpuCell += fmt.Sprintf(" ×%.1f", *c.CPURatio)
		}
		c1 := "—"
		if len(c.C1P50US) > 0 {
			c1 = triple(c.C1P50US, TargetDirect, TargetProxy, TargetGateway)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.Scenario, c1, added, cpuCell, thr, optNum(c.GatewayPeakMiB), errs)
	}
	return b.String()
}

func triple(m map[string]float64, keys ...string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		if v, ok := m[k]; ok {
			parts[i] = num(v)
		} else {
			parts[i] = "—"
		}
	}
	return strings.Join(parts, " / ")
}

func phaseLabel(ph PhaseReport) string {
	if ph.Mode == "open" {
		return fmt.Sprintf("%s (%.0f req/s offered)", ph.Name, ph.OfferedRPS)
	}
	return fmt.Sprintf("%s (%d conn)", ph.Name, ph.Concurrency)
}

func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func optNum(v *float64) string {
	if v == nil {
		return "—"
	}
	return num(*v)
}

func optSpread(s *Spread) string {
	if s == nil {
		return "—"
	}
	return num(s.Median)
}

func spreadCell(s Spread) string {
	return fmt.Sprintf("%s (%s–%s)", num(s.Median), num(s.Min), num(s.Max))
}

func errorsCell(ts TargetSummary) string {
	var parts []string
	for _, k := range load.StatusKeys(ts.Statuses) {
		if k != "200" {
			parts = append(parts, fmt.Sprintf("%s×%d", k, ts.Statuses[k]))
		}
	}
	s := fmt.Sprintf("%d", ts.Errors)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	if ts.ExpectedMet != nil {
		if *ts.ExpectedMet {
			s += " ✓ expected"
		} else {
			s += " ✗ unexpected"
		}
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
