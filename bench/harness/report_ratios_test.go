package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// summary is a phase summary with the figures the comparison reads (core 0: not pinned).
func summary(target string, rps, p50, p99, hopCPU, coreCPU float64) TargetSummary {
	ts := TargetSummary{Target: target, Throughput: Spread{Median: rps}, P50: Spread{Median: p50}, P99: p99, Statuses: map[string]int64{}}
	if hopCPU > 0 {
		ts.HopCPUPerReq = &Spread{Median: hopCPU}
	}
	if coreCPU > 0 {
		ts.CoreCPUPerReq = &Spread{Median: coreCPU}
	}
	return ts
}

// scenarioWith is a scenario of three phases over targets, each phase's summaries given.
func scenarioWith(name string, targets []string, c1, sat, fixed []TargetSummary) ScenarioReport {
	sr := ScenarioReport{Name: name, Targets: targets, Phases: []PhaseReport{
		{Name: PhaseC1, Mode: "closed", Concurrency: 1, Summaries: c1},
		{Name: PhaseSaturated, Mode: "closed", Concurrency: 64, Summaries: sat},
		{Name: PhaseFixedRate, Mode: "open", OfferedRPS: 150, Summaries: fixed},
	}}
	sr.Comparison = compare(sr)
	return sr
}

// TestRatioLinesSayWhichTargetIsMet: each scenario's line gives the gateway ÷ proxy CPU
// and throughput and the gateway's added p99 at c=1, and marks each against its target (a
// converted stream may cost 1.5×, the others 1.2×; c=1 p99 at most 1 ms over the proxy's);
// pinned, the CPU ratio is the server core's with the process's beside it; the peers get a
// line each beneath.
func TestRatioLinesSayWhichTargetIsMet(t *testing.T) {
	all := []string{TargetDirect, TargetProxy, TargetGateway, TargetBifrostLean, TargetBifrostLogging}
	pinned := scenarioWith("chat-plain", all,
		[]TargetSummary{summary(TargetDirect, 0, 300, 400, 0, 0), summary(TargetProxy, 0, 500, 900, 0, 0), summary(TargetGateway, 0, 900, 1800, 0, 0),
			summary(TargetBifrostLean, 0, 700, 1500, 0, 0), summary(TargetBifrostLogging, 0, 800, 1700, 0, 0)},
		[]TargetSummary{summary(TargetDirect, 9000, 0, 0, 0, 90), summary(TargetProxy, 5000, 0, 0, 135, 200), summary(TargetGateway, 2500, 0, 0, 270, 400),
			summary(TargetBifrostLean, 3200, 0, 0, 271, 310), summary(TargetBifrostLogging, 2000, 0, 0, 400, 500)},
		[]TargetSummary{summary(TargetDirect, 150, 500, 900, 0, 150), summary(TargetProxy, 150, 840, 2370, 200, 353), summary(TargetGateway, 150, 1440, 4430, 500, 787),
			summary(TargetBifrostLean, 150, 1100, 4070, 480, 767), summary(TargetBifrostLogging, 150, 1300, 5000, 600, 900)})
	notPinned := scenarioWith("messages-to-chat-stream", []string{TargetProxy, TargetGateway},
		[]TargetSummary{summary(TargetProxy, 0, 500, 500, 0, 0), summary(TargetGateway, 0, 900, 900, 0, 0)},
		[]TargetSummary{summary(TargetProxy, 2000, 0, 0, 300, 0), summary(TargetGateway, 1900, 0, 0, 375, 0)}, nil)
	r := &Report{Scenarios: []ScenarioReport{pinned, notPinned}}
	r.finish()
	want := []string{
		"- **chat-plain**: CPU/req ×2.23 on the server core (process ×2.50) (target ≤ 1.2: **missed**); saturated ×0.50 (target ≥ 0.9: **missed**); c=1 p99 +900 µs over the proxy's (1800 vs 900) (target ≤ +1 ms: met)",
		"  - against bifrost-lean: saturated ×0.78, CPU/req ×1.03 on the server core (process ×1.04)",
		"  - against bifrost-logging: saturated ×1.25, CPU/req ×0.87 on the server core (process ×0.83)",
		"- **messages-to-chat-stream**: CPU/req ×1.25 (target ≤ 1.5: met); saturated ×0.95 (target ≥ 0.9: met); c=1 p99 +400 µs over the proxy's (900 vs 500) (target ≤ +1 ms: met)",
	}
	if got := r.RatioLines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if md := r.Markdown(); !strings.Contains(md, "Gateway against the bare proxy (and any peer) in this run:\n\n"+want[0]) {
		t.Fatalf("the ratios do not open the report:\n%s", md)
	}
}

// TestTargetsTableHasTheReviewColumns: a scenario's table gives every target's saturated
// req/s, CPU per request saturated and at the fixed rate (process / server core), latency at
// the fixed rate and at c=1 in ms, peak RSS and errors, a dash where a figure was not taken.
func TestTargetsTableHasTheReviewColumns(t *testing.T) {
	sr := scenarioWith("chat-plain", []string{TargetProxy, TargetGateway, TargetBifrostLean},
		[]TargetSummary{summary(TargetProxy, 0, 500, 900, 0, 0), summary(TargetGateway, 0, 900, 1800, 0, 0), summary(TargetBifrostLean, 0, 700, 1500, 0, 0)},
		[]TargetSummary{summary(TargetProxy, 5931, 0, 0, 135, 200), summary(TargetGateway, 2290, 0, 0, 269, 400), summary(TargetBifrostLean, 3194, 0, 0, 271, 0)},
		[]TargetSummary{summary(TargetProxy, 150, 840, 2370, 200, 353), summary(TargetGateway, 150, 1440, 4430, 500, 787), summary(TargetBifrostLean, 150, 1100, 4070, 480, 767)})
	rss := 51.0
	sr.Phases[1].Summaries[1].HopPeakRSSMiB = &rss
	sr.Comparison = compare(sr)
	want := "| target | saturated req/s (64 conn) | CPU µs/req saturated: process / server core | CPU µs/req at 150 req/s: process / server core | p50 / p99 at 150 req/s, ms | p50 / p99 at c=1, ms | peak RSS MiB | errors |\n" +
		"|---|---|---|---|---|---|---|---|\n" +
		"| proxy | 5931 | 135 / 200 | 200 / 353 | 0.84 / 2.37 | 0.50 / 0.90 | — | 0 |\n" +
		"| gateway | 2290 | 269 / 400 | 500 / 787 | 1.44 / 4.43 | 0.90 / 1.80 | 51.0 | 0 |\n" +
		"| bifrost-lean | 3194 | 271 / — | 480 / 767 | 1.10 / 4.07 | 0.70 / 1.50 | — | 0 |\n\n"
	if got := targetsTable(sr); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := targetsTable(ScenarioReport{Name: "burst-limit", Phases: []PhaseReport{{Name: PhaseBurst}}}); got != "" {
		t.Errorf("a burst-only scenario has a targets table:\n%s", got)
	}
}

// The report warns that the server core figures hold other processes' work only when they
// were taken (pinned) and the rest of the machine was busy.
func TestCoreNoiseWarning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cores  CPUSet
		median float64
		warns  bool
	}{
		{"pinned, quiet", CPUSet{1}, 0.1, false},
		{"pinned, at the threshold", CPUSet{1}, 0.25, true},
		{"pinned, busy", CPUSet{1}, 0.99, true},
		{"not pinned, busy", nil, 0.99, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Endpoints: Endpoints{CoreCPUs: tc.cores}, Noise: Noise{Runs: 4, MedianOtherCores: tc.median}}
			got := r.coreNoiseWarning()
			if (got != "") != tc.warns || strings.Contains(r.Markdown(), "**Noisy machine**") != tc.warns {
				t.Fatalf("warning %q, want one: %v", got, tc.warns)
			}
			if tc.warns && !strings.Contains(got, fmt.Sprintf("a median %.2f cores", tc.median)) {
				t.Errorf("warning %q does not give the median", got)
			}
		})
	}
}

// A schema 1 report (before the per-target figures and ratios) reads with its comparisons
// derived again from its phases, so render prints its ratios and headline as a new one would.
func TestReadReportDerivesOldComparisons(t *testing.T) {
	sr := scenarioWith("chat-plain", []string{TargetDirect, TargetProxy, TargetGateway},
		[]TargetSummary{summary(TargetDirect, 0, 220, 400, 0, 0), summary(TargetProxy, 0, 439, 1331, 0, 0), summary(TargetGateway, 0, 848, 2648, 0, 0)},
		[]TargetSummary{summary(TargetDirect, 8575, 0, 0, 0, 0), summary(TargetProxy, 3461, 0, 0, 200, 0), summary(TargetGateway, 2791, 0, 0, 300, 0)},
		[]TargetSummary{summary(TargetProxy, 1390, 0, 0, 388, 0), summary(TargetGateway, 1390, 0, 0, 547, 0)})
	sr.Comparison = Comparison{Scenario: sr.Name} // what schema 1 did not have is absent
	old := &Report{Schema: 1, Scenarios: []ScenarioReport{sr}, Headline: []Comparison{sr.Comparison}}
	path := filepath.Join(t.TempDir(), "old.json")
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"- **chat-plain**: CPU/req ×1.41 (target ≤ 1.2: **missed**); saturated ×0.81 (target ≥ 0.9: **missed**); c=1 p99 +1317 µs over the proxy's (2648 vs 1331) (target ≤ +1 ms: **missed**)"}
	if got := r.RatioLines(); strings.Join(got, "\n") != want[0] {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if h := r.Headline[0]; h.CPUBasis != BasisProcess || h.GatewayAddedP50US == nil || *h.GatewayAddedP50US != 409 {
		t.Errorf("headline %+v", h)
	}
	old.Schema = SchemaVersion + 1
	b, _ = json.Marshal(old)
	os.WriteFile(path, b, 0o644)
	if _, err := ReadReport(path); err == nil || !strings.Contains(err.Error(), "this build reads 1 to 2") {
		t.Errorf("a newer schema read: %v", err)
	}
}
