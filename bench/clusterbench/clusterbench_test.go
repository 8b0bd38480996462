package clusterbench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A short run of the whole scenario on real engine nodes (mutual TLS, Pebble on disk):
// every cell charges without an error and the ledger is exact, the cluster's proposals
// carry steps, memory is read, and every kill trial is measured and ends with a leader.
func TestClusterScenarioChargesExactlyAndMeasuresEveryCellAndKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three engine nodes")
	}
	cfg := Config{Shards: 4, Accounts: 32, InFlight: []int{1, 8}, Rates: []int{40}, Plain: true, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond,
		Kills: 2, KillInFlight: 8, Dir: t.TempDir()}
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		nodes, inFlight, rate int
		path                  string
	}{{1, 1, 0, PathSingle}, {1, 8, 0, PathSingle}, {1, 0, 40, PathSingle}, {3, 1, 0, PathCluster}, {3, 8, 0, PathCluster}, {3, 0, 40, PathCluster},
		{3, 1, 0, PathPlain}, {3, 8, 0, PathPlain}}
	if len(r.Runs) != len(want) {
		t.Fatalf("%d cells, want %d: %+v", len(r.Runs), len(want), r.Runs)
	}
	for i, w := range want {
		c := r.Runs[i]
		if c.Nodes != w.nodes || c.InFlight != w.inFlight || c.Rate != w.rate || c.Path != w.path {
			t.Errorf("cell %d is (%d nodes, %d in flight, %d/s, %s), want (%d, %d, %d, %s)", i, c.Nodes, c.InFlight, c.Rate, c.Path, w.nodes, w.inFlight, w.rate, w.path)
		}
		if c.Charges == 0 || c.Errors != 0 || c.LedgerExact == nil || !*c.LedgerExact {
			t.Errorf("cell %d: %d charges, %d errors (%s), ledger exact %v", i, c.Charges, c.Errors, c.ErrorSample, optBool(c.LedgerExact))
		}
		if c.Admit.Count != c.Charges || c.Charge.Count != c.Charges || c.Admit.P50 <= 0 || c.Charge.P50 < c.Admit.P50 {
			t.Errorf("cell %d: admit %+v, charge %+v for %d charges", i, c.Admit, c.Charge, c.Charges)
		}
		if c.MutualTLS != (w.path == PathCluster) {
			t.Errorf("cell %d: mutual TLS %v", i, c.MutualTLS)
		}
		if (c.StepsPerProposal != nil) != (w.nodes == 3) || c.StepsPerProposal != nil && *c.StepsPerProposal <= 0 {
			t.Errorf("cell %d: steps per proposal %s", i, optFloat(c.StepsPerProposal))
		}
		// Three nodes: some admissions answered from a leader's memory, and, once the load
		// goes through every node (more than 1 in flight), some taken by a node not leading
		// the shard (forwarded); one node: neither.
		spread := w.nodes == 3 && w.inFlight != 1
		if (c.FromMemory != nil && *c.FromMemory > 0) != (w.nodes == 3) || spread && (c.Forwarded == nil || c.Forwarded.Count == 0) || w.nodes == 1 && c.Forwarded != nil {
			t.Errorf("cell %d: admits from memory %s, forwarded %+v", i, optFloat(c.FromMemory), c.Forwarded)
		}
		// Forwarded steps travel in batches: at least one step per request sent.
		if spread && (c.StepsPerForward == nil || *c.StepsPerForward < 1) || w.nodes == 1 && c.StepsPerForward != nil {
			t.Errorf("cell %d: forwarded steps per batch %s", i, optFloat(c.StepsPerForward))
		}
	}
	if len(r.Memory) != 3 || r.Memory[0].Nodes != 1 || r.Memory[1].Nodes != 3 || r.Memory[1].AfterMiB <= 0 || r.Memory[2].Path != PathPlain {
		t.Errorf("memory %+v", r.Memory)
	}
	f := r.Failover
	if f == nil || f.Kills != 2 || len(f.StallsMS) != 2 || f.Charges == 0 || f.MaxMS < f.MedianMS || f.StallsMS[0] <= 0 {
		t.Fatalf("failover %+v", f)
	}
	md := r.Markdown()
	for _, s := range []string{"## cluster", "| 3 | mutual | 8 in flight |", "| 3 | mutual | 40/s offered |", "| 3 | none | 8 in flight |", "plain TCP", "Failover: 2 stops", "Memory, 3 node(s)"} {
		if !strings.Contains(md, s) {
			t.Errorf("the Markdown lacks %q:\n%s", s, md)
		}
	}
}
