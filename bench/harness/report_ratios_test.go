package harness

import (
	"strings"
	"testing"
)

// TestRatioLinesSayWhichTargetIsMet: each scenario's line gives the gateway ÷ proxy CPU
// and throughput and the c=1 p99 pair, and marks each against its performance target (a
// converted stream may cost 1.5×, the others 1.2×).
func TestRatioLinesSayWhichTargetIsMet(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	c1 := func(name string, gateway, proxy float64) ScenarioReport {
		return ScenarioReport{Name: name, Phases: []PhaseReport{{Name: PhaseC1, Summaries: []TargetSummary{
			{Target: TargetDirect, P99: 1}, {Target: TargetProxy, P99: proxy}, {Target: TargetGateway, P99: gateway}}}}}
	}
	r := &Report{
		Headline: []Comparison{
			{Scenario: "chat-plain", CPURatio: f(1.25), ThroughputRatio: f(0.95)},
			{Scenario: "messages-to-chat-stream", CPURatio: f(1.25), ThroughputRatio: f(0.5)},
			{Scenario: "burst-limit"},
		},
		Scenarios: []ScenarioReport{c1("chat-plain", 400, 500), c1("messages-to-chat-stream", 900, 500)},
	}
	want := []string{
		"- **chat-plain**: CPU/req ×1.25 (target ≤ 1.2: **missed**); saturated ×0.95 (target ≥ 0.9: met); c=1 p99 400 µs vs 500 (target ≤ proxy: met)",
		"- **messages-to-chat-stream**: CPU/req ×1.25 (target ≤ 1.5: met); saturated ×0.50 (target ≥ 0.9: **missed**); c=1 p99 900 µs vs 500 (target ≤ proxy: **missed**)",
	}
	if got := r.RatioLines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if md := r.Markdown(); !strings.Contains(md, "Gateway against the bare proxy in this run:\n\n"+want[0]) {
		t.Fatalf("the ratios do not open the report:\n%s", md)
	}
}
