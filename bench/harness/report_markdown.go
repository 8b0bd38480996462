package harness

// The Markdown summary: the machine line, the headline table and one detail table per
// scenario, with the cell formats they share.

import (
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/bench/load"
)

// Markdown is the summary: the headline table, then one table per scenario.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# modelgate bench, %s\n\n", r.StartedAt.Format("2006-01-02 15:04 UTC"))
	if lines := r.RatioLines(); len(lines) > 0 {
		b.WriteString("Gateway against the bare proxy (and any peer) in this run:\n\n" + strings.Join(lines, "\n") + "\n\n")
	}
	if w := r.coreNoiseWarning(); w != "" {
		b.WriteString(w + "\n\n")
	}
	b.WriteString(r.MachineLine() + "\n\n")
	if len(r.Headline) > 0 {
		b.WriteString(r.HeadlineTable())
		b.WriteString("\n")
	}
	for _, s := range r.Scenarios {
		fmt.Fprintf(&b, "## %s\n\n%s.\n\n", s.Name, s.Description)
		b.WriteString(targetsTable(s))
		b.WriteString("| phase | target | req/s (range) | p50 µs (range) | p90 | p99 | p99.9 | max | TTFB p50 | errors | hop CPU µs/req | server core CPU µs/req | sim CPU µs/req | client CPU µs/req | hop peak RSS MiB |\n")
		b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, ph := range s.Phases {
			for _, ts := range ph.Summaries {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
					phaseLabel(ph), ts.Target, spreadCell(ts.Throughput), spreadCell(ts.P50), num(ts.P90), num(ts.P99), num(ts.P999), num(ts.Max),
					optNum(ts.TTFBP50), errorsCell(ts), optSpread(ts.HopCPUPerReq), optSpread(ts.CoreCPUPerReq), optNum(ts.SimCPUPerReq), optNum(ts.ClientCPUReq), optNum(ts.HopPeakRSSMiB))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString(r.ProfilesMarkdown())
	if r.Cluster != nil {
		b.WriteString(r.Cluster.Markdown())
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
	return fmt.Sprintf("Machine: %d × %s, %d MiB RAM, Linux %s, %s, %s/%s; %s. Commit %s. Each run: %.1f s warm-up, %.1f s measured, %d repetitions interleaved %s; saturated = %d connections; fixed rate = %s; %s; wall time %.0f s. %s%s",
		m.CPUs, m.CPUModel, m.MemTotalMB, m.Kernel, m.GoVersion, m.OS, m.Arch, pin, commit,
		r.Config.WarmupS, r.Config.DurationS, r.Config.Reps, strings.Join(r.Config.Targets, " → "), r.Config.Concurrency, rateText(r.Config), accountsText(r), r.WallS,
		r.NoiseLine(), r.peersLine())
}

// peersLine names the peers' builds and what the server core figures count.
func (r *Report) peersLine() string {
	var s string
	if len(r.Endpoints.CoreCPUs) > 0 {
		s += fmt.Sprintf(" Server core CPU is CPUs %s's whole busy time (/proc/stat: user+nice+system+irq+softirq+steal) per request: the servers there and the kernel's work for them; process CPU is the hop's utime+stime.", r.Endpoints.CoreCPUs)
	}
	for _, p := range r.Endpoints.Peers {
		s += fmt.Sprintf(" %s: %s.", p.Name, orDash(p.Build))
	}
	return s
}

// coreNoiseThreshold is how many cores other processes may use, as a median over the runs,
// before the report warns that the server core figures hold some of their work.
const coreNoiseThreshold = 0.25

// coreNoiseWarning warns when the server core figures are not the servers' alone: other
// processes were busy, and the scheduler may have run them on the server CPUs.
func (r *Report) coreNoiseWarning() string {
	if len(r.Endpoints.CoreCPUs) == 0 || r.Noise.Runs == 0 || r.Noise.MedianOtherCores < coreNoiseThreshold {
		return ""
	}
	return fmt.Sprintf("**Noisy machine**: other processes used a median %.2f cores during the runs, and whatever of theirs ran on the server CPUs is in the server core figures; compare those only between targets of this run, beside the process figures, or measure on a quiet machine.",
		r.Noise.MedianOtherCores)
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

// HeadlineTable is the side-by-side table: per scenario, latency at concurrency 1, CPU per
// request at the same offered load (on the server core when pinned), saturated throughput
// and the gateway's peak RSS.
func (r *Report) HeadlineTable() string {
	var b strings.Builder
	b.WriteString("| scenario | p50 at c=1, µs: direct / proxy / gateway | gateway added at c=1, µs: p50 / p99 | CPU µs/req at the same load: proxy / gateway | saturated req/s: direct / proxy / gateway | gateway peak RSS MiB | errors (gateway) |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, c := range r.Headline {
		cpuCell := "—"
		if cpu := c.comparedCPU(); len(cpu) > 0 {
			at := " (saturated)"
			if c.FixedRateRPS != nil {
				at = fmt.Sprintf(" (%.0f req/s)", *c.FixedRateRPS)
			}
			if c.CPUBasis == BasisCore {
				at += " server core"
			}
			cpuCell = triple(cpu, TargetProxy, TargetGateway) + at
			if c.CPURatio != nil {
				cpuCell += fmt.Sprintf(" ×%.1f", *c.CPURatio)
			}
		}
		added := "—"
		if c.GatewayAddedP50US != nil && c.GatewayAddedP99US != nil {
			added = fmt.Sprintf("%+.0f / %+.0f", *c.GatewayAddedP50US, *c.GatewayAddedP99US)
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
		c1 := "—"
		if len(c.C1P50US) > 0 {
			c1 = triple(c.C1P50US, TargetDirect, TargetProxy, TargetGateway)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", c.Scenario, c1, added, cpuCell, thr, optNum(c.GatewayPeakMiB), errs)
	}
	return b.String()
}

// comparedCPU is each target's CPU per request the headline compares, on its CPUBasis.
func (c Comparison) comparedCPU() map[string]float64 {
	m := map[string]float64{}
	for _, f := range c.Targets {
		p := f.comparedCPU()
		v := p.Process
		if c.CPUBasis == BasisCore {
			v = p.Core
		}
		if v != nil {
			m[f.Target] = *v
		}
	}
	return m
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
