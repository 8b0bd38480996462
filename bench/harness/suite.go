// Package harness runs the bench suite: it starts (or is given) the upstream simulator, the
// floor proxy and the gateway as separate processes, creates the accounts the scenarios
// need, measures every scenario on the three targets interleaved and repeated (direct, proxy,
// gateway, direct, proxy, gateway, ...), reads each server's CPU time and peak RSS from
// /proc, and writes a JSON report and a Markdown summary.
package harness

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelgate/modelgate/bench/load"
)

// Config is one suite run.
type Config struct {
	Scenarios []string // names; empty: all
	// Targets limits the targets measured (KnownTargets); empty: every one available (the
	// peers only when Endpoints has them).
	Targets     []string
	Duration    time.Duration // measured part of each run
	Warmup      time.Duration // unmeasured load before each run
	Reps        int           // repetitions of each (phase, target)
	Concurrency int           // connections of the saturated phase
	// Rate is the fixed-rate phase's offered load in requests per second; 0 takes
	// RateFraction of the gateway's median saturated throughput in the same scenario.
	Rate         float64
	RateFraction float64
	MaxInFlight  int // open-loop cap on requests in flight
	Accounts     int // accounts of the many-accounts scenario
	// AccountWorkers is how many admin API calls run in parallel while creating them.
	AccountWorkers int
	BurstRPM       int    // the burst plan's limit (must match the gateway's catalog)
	ClientCPUs     CPUSet // pin this process (the load generator) here; nil: not pinned
	ServerCPUs     CPUSet // recorded in the report (Launch pins the servers)
	AllowRemote    bool   // allow non-loopback endpoints
	Log            io.Writer
	// ProfileDir, with a gateway serving its profiles (Endpoints.GatewayDebugURL), keeps a
	// CPU profile of the gateway over each scenario's first saturated run there, and its top
	// functions in the report.
	ProfileDir string
}

// PinnedConcurrency is the saturated phase's connections when the servers are pinned: the
// load generator has a core of its own to drive them, as in the outside review's setup.
const PinnedConcurrency = 64

// Defaults fills zero fields with the values of make bench.
func (c *Config) Defaults() {
	if c.Duration == 0 {
		c.Duration = 1500 * time.Millisecond
	}
	if c.Warmup == 0 {
		c.Warmup = 300 * time.Millisecond
	}
	if c.Reps == 0 {
		c.Reps = 3
	}
	if c.Concurrency == 0 {
		c.Concurrency = 32
		if len(c.ServerCPUs) > 0 {
			c.Concurrency = PinnedConcurrency
		}
	}
	if c.RateFraction == 0 {
		c.RateFraction = 0.5
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = 1024
	}
	if c.Accounts == 0 {
		c.Accounts = 10000
	}
	if c.AccountWorkers == 0 {
		c.AccountWorkers = 16
	}
	if c.BurstRPM == 0 {
		c.BurstRPM = DefaultBurstRPM
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

type target struct {
	name   string
	pid    int // the hop's process (proxy, gateway, peer), 0 for direct
	peer   *Peer
	client *http.Client
	offset int64 // requests sent so far with rotating keys, so every run starts on fresh ones
	// An external target (RunTarget): its base URL (up to /v1), keys and model.
	base  string
	keys  []string
	model string
}

type suite struct {
	cfg       Config
	ep        Endpoints
	targets   map[string]*target
	order     []string // the targets there are, in interleaving order
	key       string   // the bench account's key
	hotKeys   []string // one per account of the hot-accounts scenario
	manyKeys  []string // one per account of the many-accounts scenario
	burstKeys []string // burstKeys[0] warms up, burstKeys[r] is repetition r's account
	report    *Report
	custom    *PhaseReport // RunTarget's one phase
	profiles  map[string]profileResult
}

func (s *suite) logf(format string, args ...any) {
	fmt.Fprintf(s.cfg.Log, format+"\n", args...)
}

// Run measures the scenarios on the endpoints.
func Run(ctx context.Context, cfg Config, ep Endpoints) (*Report, error) {
	cfg.Defaults()
	scenarios, err := SelectScenarios(cfg.Scenarios)
	if err != nil {
		return nil, err
	}
	if !cfg.AllowRemote {
		for _, u := range []string{ep.SimURL, ep.ProxyURL, ep.GatewayURL} {
			if !load.IsLoopback(u) {
				return nil, fmt.Errorf("endpoint %q is not a loopback address (AllowRemote to allow it)", u)
			}
		}
	}
	if len(cfg.ClientCPUs) > 0 {
		if err := PinSelf(cfg.ClientCPUs); err != nil {
			return nil, err
		}
	}
	s := &suite{cfg: cfg, ep: ep, targets: map[string]*target{}, profiles: map[string]profileResult{}}
	s.report = newReport(cfg, ep)
	if err := s.addTargets(); err != nil {
		return nil, err
	}
	// Idle keep-alive connections left open hold a server's graceful stop (Bifrost's waits
	// for them), so none outlives the run.
	defer s.closeIdle()
	s.report.Config.Targets = s.available()
	if err := s.setup(ctx, scenarios); err != nil {
		return nil, err
	}
	for _, sc := range scenarios {
		sr, err := s.scenario(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		s.report.Scenarios = append(s.report.Scenarios, sr)
	}
	s.report.finish()
	return s.report, nil
}

// addTargets makes the targets the endpoints offer, refusing a wanted one they do not.
func (s *suite) addTargets() error {
	newTarget := func(name string, pid int) *target {
		return &target{name: name, pid: pid, client: load.NewClient(max(s.cfg.Concurrency, s.cfg.MaxInFlight))}
	}
	s.targets[TargetDirect] = newTarget(TargetDirect, 0)
	s.targets[TargetProxy] = newTarget(TargetProxy, s.ep.ProxyPID)
	s.targets[TargetGateway] = newTarget(TargetGateway, s.ep.GatewayPID)
	for i := range s.ep.Peers {
		p := &s.ep.Peers[i]
		s.targets[p.Name] = newTarget(p.Name, p.PID)
		s.targets[p.Name].peer = p
	}
	for _, name := range KnownTargets() {
		if s.targets[name] != nil {
			s.order = append(s.order, name)
		}
	}
	for _, name := range s.cfg.Targets {
		if !slices.Contains(KnownTargets(), name) {
			return fmt.Errorf("unknown target %q (known: %s)", name, strings.Join(KnownTargets(), ", "))
		}
		if s.targets[name] == nil {
			return fmt.Errorf("target %s is not running (a peer needs its binary: make bench-peers)", name)
		}
	}
	return nil
}

// closeIdle closes every target client's idle connections.
func (s *suite) closeIdle() {
	for _, t := range s.targets {
		t.client.CloseIdleConnections()
	}
}

// available is every target measured, in interleaving order.
func (s *suite) available() []string {
	var out []string
	for _, name := range s.order {
		if len(s.cfg.Targets) == 0 || slices.Contains(s.cfg.Targets, name) {
			out = append(out, name)
		}
	}
	return out
}

// targetsOf is what scenario sc measures: its own targets and, on the peers' route, the
// peers, less those Config.Targets leaves out, in interleaving order.
func (s *suite) targetsOf(sc *Scenario) []string {
	var out []string
	for _, name := range s.available() {
		if slices.Contains(sc.Targets, name) || (sc.Peers && s.targets[name].peer != nil) {
			out = append(out, name)
		}
	}
	return out
}

// setup creates the accounts and resets the simulator routes.
func (s *suite) setup(ctx context.Context, scenarios []*Scenario) error {
	t0 := time.Now()
	for _, r := range []string{RouteChat, RouteResponses, RouteFailA, RouteFailB, RouteFailC} {
		if err := SetSimRoute(ctx, s.ep.SimURL, r, SimRoute{}); err != nil {
			return fmt.Errorf("simulator control API: %w", err)
		}
	}
	var err error
	// E-mails are unique per account: a run's own stamp lets a given gateway serve many runs.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	if s.key, err = CreateAccountKey(ctx, s.ep.AdminURL, s.ep.AdminToken, "bench-"+run+"@bench.invalid", PlanBench); err != nil {
		return fmt.Errorf("bench account: %w", err)
	}
	for _, sc := range scenarios {
		switch sc.Keys {
		case "accounts":
			if s.manyKeys != nil {
				continue
			}
			s.logf("creating %d accounts through the admin API (%d in parallel)...", s.cfg.Accounts, s.cfg.AccountWorkers)
			a0 := time.Now()
			s.manyKeys, err = CreateAccounts(ctx, s.ep.AdminURL, s.ep.AdminToken, PlanBench, "many-"+run, s.cfg.Accounts, s.cfg.AccountWorkers,
				func(n int) {
					if n%2500 == 0 {
						s.logf("  %d accounts", n)
					}
				})
			if err != nil {
				return err
			}
			el := time.Since(a0)
			s.report.Setup.Accounts = len(s.manyKeys)
			s.report.Setup.AccountsSeconds = round(el.Seconds(), 2)
			s.report.Setup.AccountsPerSecond = round(float64(len(s.manyKeys))/el.Seconds(), 0)
			s.logf("  %d accounts in %.1fs (%.0f/s)", len(s.manyKeys), el.Seconds(), float64(len(s.manyKeys))/el.Seconds())
		case "hot":
			if s.hotKeys != nil {
				continue
			}
			if s.hotKeys, err = CreateAccounts(ctx, s.ep.AdminURL, s.ep.AdminToken, PlanBench, "hot-"+run, HotAccounts, s.cfg.AccountWorkers, nil); err != nil {
				return err
			}
			s.report.Setup.HotAccounts = len(s.hotKeys)
		case "burst":
			if s.burstKeys != nil {
				continue
			}
			s.burstKeys, err = CreateAccounts(ctx, s.ep.AdminURL, s.ep.AdminToken, PlanBurst, "burst-"+run, s.cfg.Reps+1, 4, nil)
			if err != nil {
				return err
			}
			s.report.Setup.BurstAccounts = len(s.burstKeys)
		}
	}
	s.report.Setup.Seconds = round(time.Since(t0).Seconds(), 2)
	if s.ep.GatewayPID != 0 {
		if kb, err := ReadPeakRSS(s.ep.GatewayPID); err == nil {
			s.report.Setup.GatewayPeakRSSKB = &kb
		}
	}
	return nil
}

func (s *suite) scenario(ctx context.Context, sc *Scenario) (ScenarioReport, error) {
	sr := ScenarioReport{Name: sc.Name, Description: sc.Description, Endpoint: "POST /v1" + sc.Path, Stream: sc.Stream(), Targets: s.targetsOf(sc)}
	if len(sr.Targets) == 0 {
		return sr, fmt.Errorf("none of its targets (%s) is measured", strings.Join(sc.Targets, ", "))
	}
	if sc.FailRoute != "" {
		if err := SetSimRoute(ctx, s.ep.SimURL, sc.FailRoute, SimRoute{FailStatus: 500, FailFraction: sc.FailFraction}); err != nil {
			return sr, err
		}
		defer SetSimRoute(context.WithoutCancel(ctx), s.ep.SimURL, sc.FailRoute, SimRoute{})
	}
	for _, phase := range sc.Phases {
		pr := PhaseReport{Name: phase}
		switch phase {
		case PhaseC1:
			pr.Mode, pr.Concurrency = "closed", 1
		case PhaseSaturated:
			pr.Mode, pr.Concurrency = "closed", s.cfg.Concurrency
		case PhaseFixedRate:
			pr.Mode, pr.OfferedRPS = "open", s.fixedRate(sr)
		case PhaseBurst:
			pr.Mode = "open"
			pr.OfferedRPS = math.Ceil(2 * float64(s.cfg.BurstRPM) / s.cfg.Duration.Seconds())
		case PhaseCustom:
			pr = *s.custom
		default:
			return sr, fmt.Errorf("unknown phase %q", phase)
		}
		for rep := 1; rep <= s.cfg.Reps; rep++ {
			for _, tn := range sr.Targets {
				if err := ctx.Err(); err != nil {
					return sr, err
				}
				run, err := s.run(ctx, sc, &pr, s.targets[tn], rep)
				if err != nil {
					return sr, fmt.Errorf("%s %s rep %d: %w", phase, tn, rep, err)
				}
				pr.Runs = append(pr.Runs, run)
			}
		}
		pr.Summaries = summarize(pr.Runs, sr.Targets)
		sr.Phases = append(sr.Phases, pr)
	}
	sr.Comparison = compare(sr)
	if p, ok := s.profiles[sc.Name]; ok && p.err == nil {
		sr.Profile = &ProfileReport{File: p.file, Top: p.top}
	}
	return sr, nil
}

// fixedRate is the fixed-rate phase's offered load: Config.Rate, or RateFraction of the
// gateway's (else the slowest target's) median saturated throughput, rounded down to 10.
func (s *suite) fixedRate(sr ScenarioReport) float64 {
	if s.cfg.Rate > 0 {
		return s.cfg.Rate
	}
	best := 0.0
	for _, ph := range sr.Phases {
		if ph.Name != PhaseSaturated {
			continue
		}
		for _, ts := range ph.Summaries {
			if ts.Target == TargetGateway {
				best = ts.Throughput.Median
				break
			}
			if best == 0 || ts.Throughput.Median < best {
				best = ts.Throughput.Median
			}
		}
	}
	if best == 0 {
		return 100
	}
	return max(10, math.Floor(best*s.cfg.RateFraction/10)*10)
}

// request is what target tn sends in scenario sc.
func (s *suite) request(sc *Scenario, tn string) load.HTTPRequest {
	r := load.HTTPRequest{Method: http.MethodPost, Header: http.Header{"Content-Type": {"application/json"}},
		KeyHeader: sc.KeyHeader, StreamEnd: sc.StreamEnd}
	for k, v := range sc.Header {
		r.Header.Set(k, v)
	}
	model := sc.UpstreamModel
	if tg := s.targets[tn]; tg.base != "" {
		r.URL = tg.base + sc.Path
		r.Body = []byte(strings.ReplaceAll(sc.Body, "{{MODEL}}", tg.model))
		r.Keys = tg.keys
		return r
	}
	if p := s.targets[tn].peer; p != nil {
		r.URL = p.URL + "/v1" + sc.Path
		r.Body = []byte(strings.ReplaceAll(sc.Body, "{{MODEL}}", p.ModelPrefix+sc.UpstreamModel))
		return r // no key: the peer holds the upstream's
	}
	switch tn {
	case TargetDirect:
		r.URL = s.ep.SimURL + "/r/" + sc.Route + "/v1" + sc.Path
	case TargetProxy:
		r.URL = s.ep.ProxyURL + "/r/" + sc.Route + "/v1" + sc.Path
	case TargetGateway:
		r.URL, model = s.ep.GatewayURL+"/v1"+sc.Path, sc.GatewayModel
	}
	r.Body = []byte(strings.ReplaceAll(sc.Body, "{{MODEL}}", model))
	r.Keys = []string{SimCredential}
	if tn == TargetGateway {
		r.Keys = []string{s.key}
		switch sc.Keys {
		case "hot":
			r.Keys = s.hotKeys
		case "accounts":
			r.Keys = s.manyKeys
		}
	}
	return r
}

// offsetExchanger numbers requests from the target's running offset, so rotating keys
// continue where the last run stopped instead of starting again on the warmed-up ones.
func offsetExchanger(ex load.Exchanger, off int64) load.Exchanger {
	return load.ExchangeFunc(func(ctx context.Context, i int64) load.Outcome { return ex.Exchange(ctx, i+off) })
}

// run is one measurement: warm-up, then the measured load with CPU, memory and upstream
// calls read around it.
func (s *suite) run(ctx context.Context, sc *Scenario, pr *PhaseReport, tg *target, rep int) (RunReport, error) {
	cell := time.Now()
	if waited := settle(ctx, s.ep.CoreCPUs); waited > time.Second {
		s.logf("%s: waited %.1fs for the server CPUs to go idle before %s", sc.Name, waited.Seconds(), tg.name)
	}
	req := s.request(sc, tg.name)
	lc := load.Config{Duration: s.cfg.Duration, Concurrency: pr.Concurrency, Rate: pr.OfferedRPS, MaxInFlight: s.cfg.MaxInFlight, OKStatus: sc.OKStatus}
	if s.cfg.Warmup > 0 {
		wreq := req
		if sc.Keys == "burst" && len(s.burstKeys) > 0 {
			wreq.Keys = []string{s.burstKeys[0]}
		}
		wc := lc
		wc.Duration = s.cfg.Warmup
		wres, err := load.Run(ctx, wc, offsetExchanger(&load.HTTP{Client: tg.client, Req: wreq}, tg.offset))
		if err != nil {
			return RunReport{}, err
		}
		tg.offset += wres.Requests
	}
	if sc.Keys == "burst" && len(s.burstKeys) > 0 {
		req.Keys = []string{s.burstKeys[rep%len(s.burstKeys)]}
	}

	calls0 := s.simCalls(ctx, sc.CountRoutes)
	probes := newRunProbes(s.ep.serverPIDs(tg.pid), s.ep.CoreCPUs)
	probes.start()
	var profiled chan profileResult
	if s.cfg.ProfileDir != "" && s.ep.GatewayDebugURL != "" && tg.name == TargetGateway && pr.Name == PhaseSaturated && rep == 1 {
		profiled = make(chan profileResult, 1)
		go func() { profiled <- s.profile(ctx, sc.Name, s.cfg.Duration) }()
	}
	res, err := load.Run(ctx, lc, offsetExchanger(&load.HTTP{Client: tg.client, Req: req}, tg.offset))
	if err != nil {
		return RunReport{}, err
	}
	probes.stop()
	if profiled != nil {
		p := <-profiled
		if p.err != nil {
			s.logf("%s: gateway profile: %v", sc.Name, p.err)
		}
		s.profiles[sc.Name] = p
	}
	tg.offset += res.Requests
	calls1 := s.simCalls(ctx, sc.CountRoutes)

	hop, sim, self := probes.probe(tg.pid), probes.probe(s.ep.SimPID), probes.probe(os.Getpid())
	run := RunReport{Target: tg.name, Rep: rep, Result: res,
		HopCPU: hop.cpu(res.Requests), SimCPU: sim.cpu(res.Requests), ClientCPU: self.cpu(res.Requests),
		HopPeakRSSKB: hop.peak(), SimPeakRSSKB: sim.peak(),
		ServerCore: probes.core(res.Requests, res.DurationS), Machine: probes.machine(res.DurationS)}
	if calls0 != nil && calls1 != nil && res.Requests > 0 {
		n := *calls1 - *calls0
		per := round(float64(n)/float64(res.Requests), 3)
		run.UpstreamCalls, run.UpstreamCallsPerRequest = &n, &per
	}
	if sc.Keys == "burst" && len(s.burstKeys) > 0 {
		want := min(int64(s.cfg.BurstRPM), res.Requests)
		got := res.Statuses["200"]
		run.Expected = &Expectation{Status: 200, Want: want, Got: got, Met: got == want,
			Rule: fmt.Sprintf("a fresh account on burst_rpm %d admits exactly min(%d, requests) calls in a run shorter than 60 s; the rest are 429", s.cfg.BurstRPM, s.cfg.BurstRPM)}
	}
	s.logf("%-24s %-10s rep %d %-15s %s%s [%.1fs]", sc.Name, pr.Name, rep, tg.name, res.String(), cpuNote(run), time.Since(cell).Seconds())
	return run, nil
}

func cpuNote(run RunReport) string {
	var s string
	if run.HopCPU != nil {
		s = fmt.Sprintf(", hop CPU %.0fµs/req", run.HopCPU.USPerRequest)
	}
	if run.ServerCore != nil {
		s += fmt.Sprintf(", server core %.0fµs/req", run.ServerCore.USPerRequest)
	}
	return s
}

// simCalls sums the simulator's call counters of routes (nil if they cannot be read).
func (s *suite) simCalls(ctx context.Context, routes []string) *int64 {
	if len(routes) == 0 || s.ep.SimURL == "" {
		return nil
	}
	var n int64
	for _, r := range routes {
		c, err := SimCalls(ctx, s.ep.SimURL, r)
		if err != nil {
			return nil
		}
		n += c
	}
	return &n
}

func round(v float64, digits int) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// PhaseCustom is RunTarget's single phase, shaped by its flags.
const PhaseCustom = "custom"

// TargetName is the name of RunTarget's target in the report.
const TargetName = "target"

// TargetConfig is a load run against one given base URL (any server speaking the
// scenario's API: the gateway, a provider-compatible upstream, another gateway).
type TargetConfig struct {
	URL      string   // base URL up to and including /v1, e.g. http://127.0.0.1:8080/v1
	Keys     []string // rotated per request
	Model    string   // default: the scenario's gateway model
	PID      int      // the server's process, to read its CPU and peak RSS (0: not read)
	Scenario string   // whose request shape to send (default chat-plain)
	Config            // Duration, Warmup, Reps, Concurrency or Rate, MaxInFlight, ...
}

// RunTarget measures one scenario's request against one target: the closed loop with
// Concurrency connections, or the open loop at Rate when Rate > 0. The scenario's account
// setup and simulator steering do not apply: the request shape is all it takes.
func RunTarget(ctx context.Context, tc TargetConfig) (*Report, error) {
	cfg := tc.Config
	if tc.Scenario == "" {
		tc.Scenario = "chat-plain"
	}
	if cfg.Reps == 0 {
		cfg.Reps = 1
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 1
	}
	cfg.Defaults()
	if !cfg.AllowRemote && !load.IsLoopback(tc.URL) {
		return nil, fmt.Errorf("target %q is not a loopback address (allow it explicitly to load a remote server)", tc.URL)
	}
	base, err := ScenarioByName(tc.Scenario)
	if err != nil {
		return nil, err
	}
	sc := *base
	sc.Targets, sc.Phases, sc.CountRoutes, sc.FailRoute, sc.Keys = []string{TargetName}, []string{PhaseCustom}, nil, "", ""
	if tc.Model == "" {
		tc.Model = sc.GatewayModel
	}
	if len(cfg.ClientCPUs) > 0 {
		if err := PinSelf(cfg.ClientCPUs); err != nil {
			return nil, err
		}
	}
	cfg.Scenarios = []string{sc.Name}
	s := &suite{cfg: cfg, targets: map[string]*target{TargetName: {name: TargetName, pid: tc.PID,
		client: load.NewClient(max(cfg.Concurrency, cfg.MaxInFlight)), base: strings.TrimSuffix(tc.URL, "/"), keys: tc.Keys, model: tc.Model}},
		order: []string{TargetName}}
	s.report = newReport(cfg, Endpoints{})
	s.report.Config.Targets = []string{TargetName}
	s.custom = &PhaseReport{Name: fmt.Sprintf("closed-%d", cfg.Concurrency), Mode: "closed", Concurrency: cfg.Concurrency}
	if cfg.Rate > 0 {
		s.custom = &PhaseReport{Name: fmt.Sprintf("open-%g", cfg.Rate), Mode: "open", OfferedRPS: cfg.Rate}
	}
	sr, err := s.scenario(ctx, &sc)
	if err != nil {
		return nil, err
	}
	s.report.Scenarios = append(s.report.Scenarios, sr)
	s.report.finish()
	return s.report, nil
}
