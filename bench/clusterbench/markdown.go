package clusterbench

import (
	"fmt"
	"strings"

	"github.com/modelgate/modelgate/bench/load"
)

// Markdown is the scenario's section of the bench summary: one row per (nodes, in flight),
// then memory and the kill trials.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## cluster\n\nCharges (admit, then a paid settle with its request-log entry) through the quota service, driven in process (no HTTP): "+
		"1 node on its account actors, and %d engine nodes in this process with mutual TLS over %d account shards of %d voters each (RTT %d ms, election %d RTT, heartbeat %d RTT, %d log DB shard(s), %d step workers), "+
		"%d accounts round-robin. Targets (reported, not asserted): %s.\n\n",
		r.Nodes, r.Shards, r.Replicas, r.Engine.RTTMillisecond, r.Engine.ElectionRTT, r.Engine.HeartbeatRTT, r.Engine.LogDBShards, r.Engine.ExecShards, r.Accounts, r.Targets)
	b.WriteString("| nodes | TLS | load | charges/s (range) | admit p50 ms | admit p99 ms | admit max ms | charge p50 ms | charge p99 ms | forwarded admit p50/p99 ms | steps/forward | steps/proposal | admits from memory | CPU ms per charge per node | errors | ledger exact |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, run := range r.Runs {
		fmt.Fprintf(&b, "| %d | %s | %s | %.0f (%.0f–%.0f) | %.2f | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %s | %.3f | %s | %s |\n",
			run.Nodes, tlsText(run), shape{run.InFlight, run.Rate}, run.ChargesPerSecond.Median, run.ChargesPerSecond.Min, run.ChargesPerSecond.Max,
			run.Admit.P50/1000, run.Admit.P99/1000, run.Admit.Max/1000, run.Charge.P50/1000, run.Charge.P99/1000,
			forwardedText(run.Forwarded), optFloat(run.StepsPerForward), optFloat(run.StepsPerProposal), optFloat(run.FromMemory), run.CPUPerChargeMS, errorsText(run.Errors, run.ErrorSample), optBool(run.LedgerExact))
	}
	b.WriteString("\n")
	for _, m := range r.Memory {
		if m.Path == PathPlain {
			fmt.Fprintf(&b, "Memory, %d node(s), plain TCP: process RSS %.0f MiB before start, %.0f MiB after the runs: about %.0f MiB per node.\n", m.Nodes, m.BeforeMiB, m.AfterMiB, m.PerNodeMiB)
			continue
		}
		fmt.Fprintf(&b, "Memory, %d node(s): process RSS %.0f MiB before start, %.0f MiB after the runs: about %.0f MiB per node.\n", m.Nodes, m.BeforeMiB, m.AfterMiB, m.PerNodeMiB)
	}
	if f := r.Failover; f != nil {
		fmt.Fprintf(&b, "\nFailover: %d stops of the leader of a shard under load (%d charges in flight on the other nodes): longest admission wait median %.0f ms, max %.0f ms (each: %s); %d charges, %s.\n",
			f.Kills, f.InFlight, f.MedianMS, f.MaxMS, joinMS(f.StallsMS), f.Charges, errorsText(f.Errors, f.ErrorSample))
	}
	b.WriteString("\n")
	return b.String()
}

// forwardedText is a cell's forwarded admissions' p50/p99 in ms, "–" without any.
func forwardedText(s *load.Summary) string {
	if s == nil {
		return "–"
	}
	return fmt.Sprintf("%.2f / %.2f", s.P50/1000, s.P99/1000)
}

func tlsText(c Cell) string {
	switch {
	case c.Nodes == 1:
		return "–"
	case c.MutualTLS:
		return "mutual"
	}
	return "none"
}

func optFloat(v *float64) string {
	if v == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f", *v)
}

func optBool(v *bool) string {
	switch {
	case v == nil:
		return "–"
	case *v:
		return "yes"
	}
	return "NO"
}

func errorsText(n int64, sample string) string {
	if n == 0 {
		return "0 errors"
	}
	return fmt.Sprintf("%d errors (%s)", n, sample)
}

func joinMS(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("%.0f", x)
	}
	return strings.Join(parts, ", ") + " ms"
}
