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

// RatioLines is one line per scenario that ran against the proxy.
func (r *Report) RatioLines() []string {
	var lines []string
	for _, c := range r.Headline {
		var parts []string
		if c.CPURatio != nil {
			parts = append(parts, fmt.Sprintf("CPU/req ×%.2f %s", *c.CPURatio, mark(*c.CPURatio <= cpuTarget(c.Scenario), fmt.Sprintf("≤ %.1f", cpuTarget(c.Scenario)))))
		}
		if c.ThroughputRatio != nil {
			parts = append(parts, fmt.Sprintf("saturated ×%.2f %s", *c.ThroughputRatio, mark(*c.ThroughputRatio >= throughputTarget, fmt.Sprintf("≥ %.1f", throughputTarget))))
		}
		if gw, px, ok := r.c1P99(c.Scenario); ok {
			parts = append(parts, fmt.Sprintf("c=1 p99 %.0f µs vs %.0f %s", gw, px, mark(gw <= px, "≤ proxy")))
		}
		if len(parts) > 0 {
			lines = append(lines, fmt.Sprintf("- **%s**: %s", c.Scenario, strings.Join(parts, "; ")))
		}
	}
	return lines
}

// mark says whether a figure meets its target.
func mark(met bool, target string) string {
	if met {
		return "(target " + target + ": met)"
	}
	return "(target " + target + ": **missed**)"
}

// c1P99 is the gateway's and the proxy's p99 at concurrency 1 in a scenario.
func (r *Report) c1P99(scenario string) (gateway, proxy float64, ok bool) {
	for _, s := range r.Scenarios {
		if s.Name != scenario {
			continue
		}
		for _, ph := range s.Phases {
			if ph.Name != PhaseC1 {
				continue
			}
			var g, p bool
			for _, ts := range ph.Summaries {
				switch ts.Target {
				case TargetGateway:
					gateway, g = ts.P99, true
				case TargetProxy:
					proxy, p = ts.P99, true
				}
			}
			return gateway, proxy, g && p
		}
	}
	return 0, 0, false
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
