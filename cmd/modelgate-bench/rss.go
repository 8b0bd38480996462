package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/bench/harness"
)

// runRSS is "modelgate-bench rss": the gateway's memory idle after the demo's warm-up, or
// with many accounts called (harness.MeasureRSS).
func runRSS(args []string) error {
	fs := flag.NewFlagSet("rss", flag.ContinueOnError)
	demo := fs.Bool("demo", false, "measure `modelgate demo` warmed up with --calls calls, instead of serve with --accounts accounts")
	accounts := fs.Int("accounts", 10000, "serve: accounts created through the admin API, one key each")
	calls := fs.Int("calls", 0, "demo: the warm-up's calls (default 400); serve: calls per account (default 1)")
	conc := fs.Int("concurrency", 8, "calls in flight")
	idle := fs.Duration("idle", 30*time.Second, "wait after the calls before the idle figure")
	gatewayBin := fs.String("gateway-bin", "bin/modelgate", "the gateway binary")
	simBin := fs.String("sim-bin", "bin/modelgate-sim", "the simulator binary (serve)")
	var env listFlag
	fs.Var(&env, "env", "extra NAME=value for the gateway's environment, e.g. GOMEMLIMIT=40MiB (comma-separated or repeated)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *calls == 0 {
		*calls = map[bool]int{true: 400, false: 1}[*demo]
	}
	work, err := os.MkdirTemp("", "modelgate-rss-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	what := fmt.Sprintf("modelgate serve, %d accounts, %d call(s) each", *accounts, *calls)
	if *demo {
		what = fmt.Sprintf("modelgate demo, %d warm-up calls", *calls)
	}
	if len(env) > 0 {
		what += ", " + strings.Join(env, " ")
	}
	fmt.Printf("%s, %d in flight:\n", what, *conc)
	_, err = harness.MeasureRSS(ctx, harness.RSSConfig{GatewayBin: *gatewayBin, SimBin: *simBin, WorkDir: work, Demo: *demo,
		Accounts: *accounts, Calls: *calls, Concurrency: *conc, Idle: *idle, Env: env, Log: os.Stdout})
	return err
}
