package harness

// Each scenario's targets side by side in the Markdown, one row a target: the columns an
// outside review compared gateways by (saturated throughput, CPU per request saturated and
// at a fixed rate, counted by process and by the whole server core, latency at the fixed
// rate and at one connection, peak RSS).

import (
	"fmt"
	"slices"
	"strings"
)

// targetColumn is one column of the targets table.
type targetColumn struct {
	header string
	cell   func(TargetFigures) string
}

// targetsTable is scenario s's targets table ("" when no phase of s gives its figures), its
// columns in the review's order: saturated, fixed rate, one connection.
func targetsTable(s ScenarioReport) string {
	var cols []targetColumn
	for _, name := range []string{PhaseSaturated, PhaseFixedRate, PhaseC1} {
		i := slices.IndexFunc(s.Phases, func(ph PhaseReport) bool { return ph.Name == name })
		if i < 0 {
			continue
		}
		ph := s.Phases[i]
		switch name {
		case PhaseSaturated:
			cols = append(cols,
				targetColumn{fmt.Sprintf("saturated req/s (%d conn)", ph.Concurrency), func(f TargetFigures) string { return optNum(f.SaturatedRPS) }},
				targetColumn{"CPU µs/req saturated: process / server core", func(f TargetFigures) string { return pairCell(f.SaturatedCPU) }})
		case PhaseFixedRate:
			cols = append(cols,
				targetColumn{fmt.Sprintf("CPU µs/req at %.0f req/s: process / server core", ph.OfferedRPS), func(f TargetFigures) string { return pairCell(f.FixedRateCPU) }},
				targetColumn{fmt.Sprintf("p50 / p99 at %.0f req/s, ms", ph.OfferedRPS), func(f TargetFigures) string { return msPair(f.FixedRateP50US, f.FixedRateP99US) }})
		case PhaseC1:
			cols = append(cols, targetColumn{"p50 / p99 at c=1, ms", func(f TargetFigures) string { return msPair(f.C1P50US, f.C1P99US) }})
		}
	}
	if len(cols) == 0 || len(s.Comparison.Targets) == 0 {
		return ""
	}
	cols = append(cols,
		targetColumn{"peak RSS MiB", func(f TargetFigures) string { return optNum(f.PeakRSSMiB) }},
		targetColumn{"errors", func(f TargetFigures) string { return fmt.Sprintf("%d", f.Errors) }})
	var b strings.Builder
	b.WriteString("| target |")
	for _, c := range cols {
		b.WriteString(" " + c.header + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(cols)) + "\n")
	for _, f := range s.Comparison.Targets {
		b.WriteString("| " + f.Target + " |")
		for _, c := range cols {
			b.WriteString(" " + c.cell(f) + " |")
		}
		b.WriteString("\n")
	}
	return b.String() + "\n"
}

// pairCell is "process / server core".
func pairCell(p CPUPair) string {
	return optNum(p.Process) + " / " + optNum(p.Core)
}

// msPair is two latencies in µs written in ms, "0.84 / 2.37".
func msPair(a, b *float64) string {
	ms := func(v *float64) string {
		if v == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f", *v/1000)
	}
	return ms(a) + " / " + ms(b)
}
