package harness

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/bench/clusterbench"
	"github.com/modelgate/modelgate/cluster/membership"
)

// RunCluster runs the cluster scenario and adds its section to rep (a new report when rep
// is nil: only the cluster scenario was asked for). cc's Duration, Warmup, Reps and Log
// default to cfg's.
func RunCluster(ctx context.Context, cfg Config, cc clusterbench.Config, rep *Report) (*Report, error) {
	cfg.Defaults()
	if rep == nil {
		rep = newReport(cfg, Endpoints{})
	}
	if cc.Duration == 0 {
		cc.Duration = cfg.Duration
	}
	if cc.Warmup == 0 {
		cc.Warmup = cfg.Warmup
	}
	if cc.Reps == 0 {
		cc.Reps = cfg.Reps
	}
	if cc.Log == nil {
		cc.Log = cfg.Log
	}
	cr, err := clusterbench.Run(ctx, cc)
	if err != nil {
		return nil, err
	}
	rep.Cluster = cr
	rep.finish()
	return rep, nil
}

// ClusterFlags are the cluster scenario's command-line flags.
type ClusterFlags struct {
	nodes, replicas, shards, accounts, kills, killInFlight *int
	inFlight, rates                                        *string
	plain                                                  *bool
}

// Register adds the flags to fs.
func (f *ClusterFlags) Register(fs *flag.FlagSet) {
	f.nodes = fs.Int("cluster-nodes", 3, "cluster scenario: engine nodes")
	f.replicas = fs.Int("cluster-replicas", membership.DefaultReplicas, "cluster scenario: voters of each account shard, placed as cluster init places them (at most --cluster-nodes)")
	f.shards = fs.Int("cluster-shards", membership.DefaultShards, "cluster scenario: account shards (cluster init's default)")
	f.accounts = fs.Int("cluster-accounts", 1024, "cluster scenario: accounts charged round-robin")
	f.inFlight = fs.String("cluster-in-flight", "1,64,1024", "cluster scenario: charges in flight, one cell per value (comma-separated); each node's batcher packs a shard's steps that arrive while its proposal is under way")
	f.rates = fs.String("cluster-rates", "250,1000", "cluster scenario: open-loop cells after the in-flight ones, charges a second offered (comma-separated; \"none\" for none); latency counts from when each charge was due")
	f.plain = fs.Bool("cluster-plain", true, "cluster scenario: run the in-flight cells again with plain TCP between the nodes (no TLS), for what mutual TLS costs")
	f.kills = fs.Int("cluster-kills", 5, "cluster scenario: failover trials (stop the leader of a shard under load); 0: none")
	f.killInFlight = fs.Int("cluster-kill-in-flight", 64, "cluster scenario: charges in flight during the failover trials")
}

// Config is the flags' clusterbench.Config (the in-flight list already checked by Check).
func (f *ClusterFlags) Config() clusterbench.Config {
	in, _ := parseInts(*f.inFlight)
	rates := []int{-1} // clusterbench: none
	if *f.rates != "none" {
		rates, _ = parseInts(*f.rates)
	}
	kills := *f.kills
	if kills == 0 {
		kills = -1 // clusterbench: none
	}
	return clusterbench.Config{Nodes: *f.nodes, Replicas: min(*f.replicas, *f.nodes), Shards: *f.shards, Accounts: *f.accounts, InFlight: in, Rates: rates, Plain: *f.plain, Kills: kills, KillInFlight: *f.killInFlight}
}

// Check says what is wrong with the flags.
func (f *ClusterFlags) Check() error {
	if _, err := parseInts(*f.inFlight); err != nil {
		return fmt.Errorf("--cluster-in-flight: %w", err)
	}
	if _, err := parseInts(*f.rates); err != nil && *f.rates != "none" {
		return fmt.Errorf("--cluster-rates: %w", err)
	}
	for _, v := range []struct {
		name string
		n    int
	}{{"--cluster-nodes", *f.nodes}, {"--cluster-replicas", *f.replicas}, {"--cluster-shards", *f.shards}, {"--cluster-accounts", *f.accounts}, {"--cluster-kill-in-flight", *f.killInFlight}} {
		if v.n < 1 {
			return fmt.Errorf("%s must be at least 1", v.name)
		}
	}
	if *f.kills < 0 {
		return errors.New("--cluster-kills must not be negative")
	}
	return nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for p := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive count", p)
		}
		out = append(out, n)
	}
	return out, nil
}
