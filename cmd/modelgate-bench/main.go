// Command modelgate-bench is the load-testing harness (bench/harness, bench/load).
//
// Without --target-url it runs the suite: it starts the upstream simulator, a plain reverse
// proxy (the floor) and the gateway as separate processes, measures every scenario on the
// three side by side, and writes <out>/<date>.json and <out>/<date>.md. With --target-url it
// loads that one base URL with one scenario's request. "modelgate-bench proxy" is the floor
// proxy the suite starts.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/modelgate/modelgate/bench/harness"
	"github.com/modelgate/modelgate/bench/load"
	"github.com/modelgate/modelgate/bench/proxy"
)

const usage = `modelgate-bench: load-test the gateway against the simulator and a plain proxy

Usage:
  modelgate-bench [flags]                         the suite: start simulator, proxy and gateway,
                                                  measure every scenario, write --out/<date>.json|md
  modelgate-bench --target-url URL --key KEY ...  load one base URL (e.g. http://127.0.0.1:8080/v1)
  modelgate-bench proxy --addr A --upstream URL   the floor proxy (started by the suite)
  modelgate-bench catalog --sim-url URL           the catalog a --gateway-url gateway must serve
  modelgate-bench rss [--demo] [--accounts N]     the gateway's RSS idle after the demo's warm-up,
                                                  or with N accounts called (the RSS figures)
  modelgate-bench render REPORT.json              print a saved report's Markdown again

The suite starts what it is not given: --sim-url uses a running simulator, --gateway-url a
running gateway (serving "modelgate-bench catalog --sim-url ..." with its admin API at
--gateway-admin-url and --admin-token). With --bifrost-bin and --bifrost-config it also
starts Bifrost twice (targets bifrost-lean and bifrost-logging) for chat-plain and
chat-stream; --targets picks the targets (default: every one started).

Scenarios: %s
("cluster" runs last, in this process: charges through the quota service on one node and on
an engine cluster, no HTTP; --scenario cluster runs it alone, without starting any server.)

Flags:
`

func main() {
	if len(os.Args) > 1 && os.Args[1] == "catalog" {
		if err := printCatalog(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "modelgate-bench catalog:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 2 && os.Args[1] == "render" {
		for _, path := range os.Args[2:] {
			r, err := harness.ReadReport(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, "modelgate-bench render:", err)
				os.Exit(1)
			}
			fmt.Print(r.Markdown())
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "rss" {
		if err := runRSS(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "modelgate-bench rss:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "proxy" {
		if err := runProxy(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "modelgate-bench proxy:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "modelgate-bench:", err)
		os.Exit(1)
	}
}

type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*l = append(*l, p)
		}
	}
	return nil
}

func run(args []string) error {
	fs := flag.NewFlagSet("modelgate-bench", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), usage, strings.Join(append(harness.ScenarioNames(), harness.ClusterScenario), ", "))
		fs.PrintDefaults()
	}
	var scenarios, keys, targets listFlag
	fs.Var(&targets, "targets", "suite: the targets to measure, comma-separated ("+strings.Join(harness.KnownTargets(), ", ")+"; default: direct, proxy, gateway and the Bifrost ones when --bifrost-bin is given)")
	bifrostBin := fs.String("bifrost-bin", "", "suite: Bifrost's bifrost-http binary, to measure it beside the gateway (make bench-peers builds it)")
	bifrostConfig := fs.String("bifrost-config", "", "suite: config.py of the Bifrost build kit, which writes each Bifrost setup's app directory")
	fs.Var(&scenarios, "scenario", "scenario(s), comma-separated or repeated (suite default: all; --target-url default: chat-plain)")
	targetURL := fs.String("target-url", "", "load this base URL (up to /v1) instead of running the suite")
	fs.Var(&keys, "key", "API key for --target-url (repeat or comma-separate to rotate keys per request)")
	keysFile := fs.String("keys-file", "", "file of API keys, one a line, rotated per request (--target-url)")
	model := fs.String("model", "", "model for --target-url (default: the scenario's bench model)")
	pid := fs.Int("pid", 0, "the --target-url server's process id, to read its CPU time and peak RSS from /proc")
	duration := fs.Duration("duration", 1500*time.Millisecond, "measured length of each run")
	warmup := fs.Duration("warmup", 300*time.Millisecond, "unmeasured load before each run")
	reps := fs.Int("reps", 0, "repetitions of each run (suite default 3, --target-url default 1)")
	concurrency := fs.Int("concurrency", 0, "connections: the suite's saturated phase (default 32, 64 when pinned), or --target-url's closed loop (default 1)")
	rate := fs.Float64("rate", 0, "requests per second: the suite's fixed-rate phase (default: --rate-fraction of the gateway's saturated rate), or --target-url's open loop")
	rateFraction := fs.Float64("rate-fraction", 0.5, "suite: fixed-rate load as a fraction of the gateway's saturated throughput")
	maxInFlight := fs.Int("max-in-flight", 1024, "open loop: cap on requests in flight (late sends still count from their intended time)")
	out := fs.String("out", "bench/results", "directory for <date>.json and <date>.md")
	gatewayBin := fs.String("gateway-bin", "bin/modelgate", "suite: the gateway binary")
	simBin := fs.String("sim-bin", "bin/modelgate-sim", "suite: the simulator binary")
	accounts := fs.Int("accounts", 10000, "suite: accounts of the accounts-10k scenario")
	accountWorkers := fs.Int("account-workers", 16, "suite: parallel admin API calls while creating them")
	burstRPM := fs.Int("burst-rpm", harness.DefaultBurstRPM, "suite: the burst-limit plan's calls per sliding minute")
	pin := fs.Bool("pin", false, "pin the load generator and the servers to different CPUs (default split: the first quarter of the allowed CPUs, at least one, for the load generator) and count the server CPUs' whole busy time per request")
	clientCPUs := fs.String("client-cpus", "", "pin the load generator to these CPUs (e.g. 0 or 0-1); implies --pin")
	serverCPUs := fs.String("server-cpus", "", "pin the simulator, proxy and gateway to these CPUs (e.g. 1 or 2-3); implies --pin")
	work := fs.String("work", "", "suite: directory for the catalog, data and server logs (default: a temporary one, removed unless --keep)")
	keep := fs.Bool("keep", false, "suite: keep the work directory")
	logLevel := fs.String("gateway-log-level", "info", "suite: the gateway's MODELGATE_LOG_LEVEL")
	simURL := fs.String("sim-url", "", "suite: use this running simulator instead of starting one")
	simPID := fs.Int("sim-pid", 0, "suite: the --sim-url simulator's process id (CPU and RSS)")
	gatewayURL := fs.String("gateway-url", "", "suite: use this running gateway (it must serve the bench catalog for the simulator) instead of starting one")
	gatewayPID := fs.Int("gateway-pid", 0, "suite: the --gateway-url gateway's process id (CPU and RSS)")
	gatewayAdminURL := fs.String("gateway-admin-url", os.Getenv("MODELGATE_ADMIN_URL"), "suite: the --gateway-url gateway's admin listener (default $MODELGATE_ADMIN_URL)")
	adminToken := fs.String("admin-token", os.Getenv("MODELGATE_ADMIN_TOKEN"), "suite: the --gateway-url gateway's admin token (default $MODELGATE_ADMIN_TOKEN)")
	allowRemote := fs.Bool("allow-remote", false, "allow a non-loopback --target-url (a load test sends a lot of traffic)")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	profile := fs.Bool("profile", false, "suite: keep a CPU profile of the started gateway over each scenario's first saturated run (<out>/profiles-<date>/<scenario>.cpu.pprof) and its top functions in the report")
	var cc harness.ClusterFlags
	cc.Register(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := cc.Check(); err != nil {
		return err
	}
	cfg := harness.Config{Scenarios: scenarios, Targets: targets, Duration: *duration, Warmup: *warmup, Reps: *reps, Concurrency: *concurrency,
		Rate: *rate, RateFraction: *rateFraction, MaxInFlight: *maxInFlight, Accounts: *accounts, AccountWorkers: *accountWorkers,
		BurstRPM: *burstRPM, AllowRemote: *allowRemote, Log: os.Stderr}
	if *profile {
		cfg.ProfileDir = filepath.Join(*out, "profiles-"+time.Now().UTC().Format("2006-01-02T150405Z"))
	}
	if *warmup == 0 {
		cfg.Warmup = -1 // Defaults() keeps a negative warm-up: none
	}
	if *quiet {
		cfg.Log = nil
	}
	startCPUs, _ := harness.Allowed() // before the suite pins this process
	var err error
	if cfg.ClientCPUs, cfg.ServerCPUs, err = cpuSplit(*pin, *clientCPUs, *serverCPUs); err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()

	var rep *harness.Report
	if *targetURL != "" {
		if *keysFile != "" {
			k, err := readLines(*keysFile)
			if err != nil {
				return err
			}
			keys = append(keys, k...)
		}
		if len(scenarios) > 1 {
			return errors.New("--target-url takes one --scenario")
		}
		name := ""
		if len(scenarios) == 1 {
			name = scenarios[0]
		}
		rep, err = harness.RunTarget(ctx, harness.TargetConfig{URL: *targetURL, Keys: keys, Model: *model, PID: *pid, Scenario: name, Config: cfg})
	} else {
		if *gatewayURL != "" && (*simURL == "" || *adminToken == "" || *gatewayAdminURL == "") {
			return errors.New("--gateway-url needs --sim-url (the simulator its catalog points at), --gateway-admin-url and --admin-token")
		}
		lc := harness.LaunchConfig{GatewayBin: *gatewayBin, SimBin: *simBin, BurstRPM: cfg.BurstRPM, LogLevel: *logLevel,
			ServerCPUs: cfg.ServerCPUs, Profile: *profile, SimURL: *simURL, SimPID: *simPID, GatewayURL: *gatewayURL, GatewayPID: *gatewayPID,
			AdminURL: *gatewayAdminURL, AdminToken: *adminToken, Bifrost: harness.BifrostConfig{Bin: *bifrostBin, ConfigScript: *bifrostConfig}}
		if lc.Peers, err = peersToStart(targets, lc.Bifrost); err != nil {
			return err
		}
		if scs, _ := harness.SelectScenarios(scenarios); len(scs) > 0 {
			rep, err = suite(ctx, cfg, lc, *work, *keep)
		}
		if err == nil && harness.WantsCluster(scenarios) {
			if err = unpin(cfg, startCPUs); err != nil {
				return err
			}
			logf(cfg, "cluster scenario (in this process)...")
			rep, err = harness.RunCluster(ctx, cfg, cc.Config(), rep)
		}
	}
	if err != nil {
		return err
	}
	jsonPath, mdPath, err := rep.WriteFiles(*out)
	if err != nil {
		return err
	}
	fmt.Println(rep.Markdown())
	fmt.Printf("wrote %s and %s\n", jsonPath, mdPath)
	return nil
}

func suite(ctx context.Context, cfg harness.Config, lc harness.LaunchConfig, work string, keep bool) (*harness.Report, error) {
	if work == "" {
		dir, err := os.MkdirTemp("", "modelgate-bench-")
		if err != nil {
			return nil, err
		}
		work = dir
		if !keep {
			defer os.RemoveAll(dir)
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	if !cfg.AllowRemote {
		for _, u := range []string{lc.SimURL, lc.GatewayURL} {
			if u != "" && !load.IsLoopback(u) {
				return nil, fmt.Errorf("%q is not a loopback address (--allow-remote to load it)", u)
			}
		}
	}
	logf(cfg, "starting the servers not given (work directory %s)...", work)
	lc.WorkDir = work
	l, err := harness.Launch(ctx, lc)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := l.Stop(); err != nil {
			logf(cfg, "stopping: %v", err)
		}
		if keep {
			logf(cfg, "kept %s (catalog.yaml, data/, gateway.log, simulator.log, proxy.log)", work)
		}
	}()
	logf(cfg, "simulator %s (pid %d), proxy %s (pid %d), gateway %s (pid %d)", l.SimURL, l.SimPID, l.ProxyURL, l.ProxyPID, l.GatewayURL, l.GatewayPID)
	for _, p := range l.Peers {
		logf(cfg, "%s %s (pid %d; %s)", p.Name, p.URL, p.PID, p.Build)
	}
	return harness.Run(ctx, cfg, l.Endpoints)
}

func logf(cfg harness.Config, format string, args ...any) {
	if cfg.Log != nil {
		fmt.Fprintf(cfg.Log, format+"\n", args...)
	}
}

// peersToStart is the peer targets named in --targets, or every one when a Bifrost binary
// is given and --targets names none.
func peersToStart(targets []string, b harness.BifrostConfig) ([]string, error) {
	var peers []string
	for _, t := range targets {
		if slices.Contains(harness.PeerTargets, t) {
			peers = append(peers, t)
		}
	}
	if len(targets) == 0 && b.Bin != "" {
		peers = harness.PeerTargets
	}
	if len(peers) > 0 {
		if err := b.Check(); err != nil {
			return nil, fmt.Errorf("targets %s: %w", strings.Join(peers, ", "), err)
		}
	}
	return peers, nil
}

// unpin gives this process back the CPUs it started with: the cluster scenario runs its
// nodes in this process and measures them on the whole machine, not the load generator's CPU.
func unpin(cfg harness.Config, startCPUs harness.CPUSet) error {
	if len(cfg.ClientCPUs) == 0 || len(startCPUs) == 0 {
		return nil
	}
	return harness.PinSelf(startCPUs)
}

// cpuSplit turns the pinning flags into CPU sets.
func cpuSplit(pin bool, client, server string) (harness.CPUSet, harness.CPUSet, error) {
	if !pin && client == "" && server == "" {
		return nil, nil, nil
	}
	allowed, err := harness.Allowed()
	if err != nil {
		return nil, nil, err
	}
	if len(allowed) < 2 {
		return nil, nil, fmt.Errorf("pinning needs at least 2 CPUs; this process may use %s", allowed)
	}
	n := max(1, len(allowed)/4)
	c, s := allowed[:n], allowed[n:]
	if client != "" {
		if c, err = harness.ParseCPUSet(client); err != nil {
			return nil, nil, err
		}
	}
	if server != "" {
		if s, err = harness.ParseCPUSet(server); err != nil {
			return nil, nil, err
		}
	}
	return c, s, nil
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}

func runProxy(args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	upstream := fs.String("upstream", "", "upstream base URL (the simulator)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	u, err := url.Parse(*upstream)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("--upstream %q must be a base URL such as http://127.0.0.1:9090", *upstream)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "modelgate-bench proxy listening on http://%s, upstream %s\n", ln.Addr(), u)
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	return proxy.Serve(ctx, ln, u)
}

func printCatalog(args []string) error {
	fs := flag.NewFlagSet("catalog", flag.ContinueOnError)
	simURL := fs.String("sim-url", "", "the simulator's base URL, e.g. http://127.0.0.1:9090")
	burst := fs.Int("burst-rpm", harness.DefaultBurstRPM, "the burst-limit plan's calls per sliding minute")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *simURL == "" {
		return errors.New("--sim-url is required")
	}
	fmt.Print(harness.Catalog(strings.TrimSuffix(*simURL, "/"), *burst))
	fmt.Fprintf(os.Stderr, "# serve it with %s=<anything> in the gateway's environment\n", harness.SimCredentialEnv)
	return nil
}
