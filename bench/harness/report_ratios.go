package harness

import (
	"fmt"
	"strings"
)

// The ratio lines open the report: per scenario, the gateway against the floor proxy in the
// same run, beside its performance target, so a regression shows at a glance.

// cpuTarget is the allowed gateway ÷ proxy CPU per request: a converted stream does more.
func cpuTarget(scenario string) float64 {
	if scenario == "messages-to-chat-stream" {
		return 1.5
	}
	return 1.2
}

// throughputTarget is the least gateway ÷ proxy saturated throughput.
const throughputTarget = 0.9

// addedP99TargetUS is the most the gateway may add to the proxy's p99 at concurrency 1.
const addedP99TargetUS = 1000

// RatioLines is one line per scenario that ran against the proxy, with the gateway against
// the peers beneath it.
func (r *Report) RatioLines() []string {
	var lines []string
	for _, c := range r.Headline {
		var parts []string
		for _, pr := range c.Ratios {
			if pr.Against != TargetProxy {
				continue
			}
			if pr.CPU != nil {
				parts = append(parts, fmt.Sprintf("CPU/req ×%.2f%s %s", *pr.CPU, basisNote(c.CPUBasis, pr),
					mark(*pr.CPU <= cpuTarget(c.Scenario), fmt.Sprintf("≤ %.1f", cpuTarget(c.Scenario)))))
			}
			if pr.Throughput != nil {
				parts = append(parts, fmt.Sprintf("saturated ×%.2f %s", *pr.Throughput, mark(*pr.Throughput >= throughputTarget, fmt.Sprintf("≥ %.1f", throughputTarget))))
			}
		}
		if c.GatewayAddedP99US != nil {
			parts = append(parts, fmt.Sprintf("c=1 p99 %+.0f µs over the proxy's (%.0f vs %.0f) %s", *c.GatewayAddedP99US, c.C1P99US[TargetGateway], c.C1P99US[TargetProxy],
				mark(*c.GatewayAddedP99US <= addedP99TargetUS, "≤ +1 ms")))
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("- **%s**: %s", c.Scenario, strings.Join(parts, "; ")))
		}
		for _, pr := range c.Ratios {
			if pr.Against == TargetProxy || (pr.CPU == nil && pr.Throughput == nil) {
				continue
			}
			var peer []string
			if pr.Throughput != nil {
				peer = append(peer, fmt.Sprintf("saturated ×%.2f", *pr.Throughput))
			}
			if pr.CPU != nil {
				peer = append(peer, fmt.Sprintf("CPU/req ×%.2f%s", *pr.CPU, basisNote(c.CPUBasis, pr)))
			}
			lines = append(lines, fmt.Sprintf("  - against %s: %s", pr.Against, strings.Join(peer, ", ")))
		}
	}
	return lines
}

// basisNote says what a CPU ratio counts: on the server core, with the process ratio beside.
func basisNote(basis string, pr PairRatios) string {
	if basis != BasisCore {
		return ""
	}
	if pr.ProcessCPU != nil {
		return fmt.Sprintf(" on the server core (process ×%.2f)", *pr.ProcessCPU)
	}
	return " on the server core"
}

// mark says whether a figure meets its target.
func mark(met bool, target string) string {
	if met {
		return "(target " + target + ": met)"
	}
	return "(target " + target + ": **missed**)"
}

// ProfilesMarkdown is each scenario's gateway CPU profile top (--profile).
func (r *Report) ProfilesMarkdown() string {
	var b strings.Builder
	for _, s := range r.Scenarios {
		if s.Profile == nil {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("## Gateway CPU profiles (first saturated run of each scenario)\n\n")
		}
		fmt.Fprintf(&b, "### %s\n\n`%s`\n\n```\n%s\n```\n\n", s.Name, s.Profile.File, strings.Join(s.Profile.Top, "\n"))
	}
	return b.String()
}
