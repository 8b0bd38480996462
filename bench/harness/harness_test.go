package harness

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/bench/load"
	"github.com/modelgate/modelgate/bench/proxy"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// jsonKeys lists the JSON names of a struct type's fields that are always written, promoted
// fields of embedded structs included.
func jsonKeys(t reflect.Type) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		if f.Anonymous && tag == "" {
			out = append(out, jsonKeys(f.Type)...)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(opts, "omitempty") {
			continue // optional by declaration (a profile only with --profile)
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

func requireKeys(t *testing.T, where string, m map[string]any, typ reflect.Type) {
	t.Helper()
	for _, k := range jsonKeys(typ) {
		if _, ok := m[k]; !ok {
			t.Errorf("%s: field %q missing", where, k)
		}
	}
}

func notNull(t *testing.T, where string, m map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if m[k] == nil {
			t.Errorf("%s: %s is null", where, k)
		}
	}
}

// checkReport decodes the report as JSON and checks that every field of every level is
// present, and that the measurements each scenario must produce are not null.
func checkReport(t *testing.T, b []byte, wantScenarios []string, cpu, core bool) {
	t.Helper()
	var r map[string]any
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	requireKeys(t, "report", r, reflect.TypeFor[Report]())
	requireKeys(t, "machine", r["machine"].(map[string]any), reflect.TypeFor[Machine]())
	requireKeys(t, "config", r["config"].(map[string]any), reflect.TypeFor[ReportConfig]())
	requireKeys(t, "setup", r["setup"].(map[string]any), reflect.TypeFor[Setup]())
	requireKeys(t, "noise", r["noise"].(map[string]any), reflect.TypeFor[Noise]())
	scs := r["scenarios"].([]any)
	if len(scs) != len(wantScenarios) {
		t.Fatalf("%d scenarios, want %d", len(scs), len(wantScenarios))
	}
	if h := r["headline"].([]any); len(h) != len(wantScenarios) {
		t.Errorf("%d headline rows", len(h))
	}
	for i, x := range scs {
		sc := x.(map[string]any)
		name := sc["name"].(string)
		if name != wantScenarios[i] {
			t.Errorf("scenario %d is %s, want %s", i, name, wantScenarios[i])
		}
		requireKeys(t, name, sc, reflect.TypeFor[ScenarioReport]())
		requireKeys(t, name+" comparison", sc["comparison"].(map[string]any), reflect.TypeFor[Comparison]())
		def, _ := ScenarioByName(name)
		targets := sc["targets"].([]any)
		if !def.Peers && len(targets) != len(def.Targets) {
			t.Errorf("%s: targets %v, want %v", name, targets, def.Targets)
		}
		cmp := sc["comparison"].(map[string]any)
		if figs := cmp["targets"].([]any); len(figs) != len(targets) {
			t.Errorf("%s: %d target figures for %d targets", name, len(figs), len(targets))
		}
		phases := sc["phases"].([]any)
		if len(phases) != len(def.Phases) {
			t.Errorf("%s: %d phases", name, len(phases))
		}
		for _, y := range phases {
			ph := y.(map[string]any)
			where := name + "/" + ph["name"].(string)
			requireKeys(t, where, ph, reflect.TypeFor[PhaseReport]())
			runs := ph["runs"].([]any)
			if len(runs) != len(targets) {
				t.Errorf("%s: %d runs for %d targets", where, len(runs), len(targets))
			}
			for _, z := range runs {
				run := z.(map[string]any)
				w := where + "/" + run["target"].(string)
				requireKeys(t, w, run, reflect.TypeFor[RunReport]())
				requireKeys(t, w+" latency", run["latency_us"].(map[string]any), reflect.TypeFor[load.Summary]())
				if run["ok"].(float64) == 0 {
					t.Errorf("%s: no correct answer: %v %v", w, run["statuses"], run["error_samples"])
				}
				if run["errors"].(float64) != 0 {
					t.Errorf("%s: errors %v %v", w, run["statuses"], run["error_samples"])
				}
				if def.Stream() {
					notNull(t, w, run, "ttfb_us")
				}
				if len(def.CountRoutes) > 0 {
					notNull(t, w, run, "upstream_calls", "upstream_calls_per_request")
				}
				if cpu {
					notNull(t, w, run, "sim_cpu", "client_cpu", "sim_peak_rss", "machine_cpu")
					requireKeys(t, w+" machine_cpu", run["machine_cpu"].(map[string]any), reflect.TypeFor[MachineCPU]())
					if run["target"] != TargetDirect {
						notNull(t, w, run, "hop_cpu", "hop_peak_rss")
					}
				}
				if core {
					notNull(t, w, run, "server_core_cpu")
					requireKeys(t, w+" server_core_cpu", run["server_core_cpu"].(map[string]any), reflect.TypeFor[CoreCPU]())
				} else if run["server_core_cpu"] != nil {
					t.Errorf("%s: a server core figure in a run not pinned: %v", w, run["server_core_cpu"])
				}
				if def.Keys == "burst" {
					notNull(t, w, run, "expected")
					if e := run["expected"].(map[string]any); e["met"] != true {
						t.Errorf("%s: burst expectation %v", w, e)
					}
				}
			}
			for _, z := range ph["summaries"].([]any) {
				requireKeys(t, where+" summary", z.(map[string]any), reflect.TypeFor[TargetSummary]())
			}
		}
	}
}

// quietLogs silences the in-process gateway's failover warnings unless -v.
func quietLogs(t *testing.T) {
	if testing.Verbose() {
		return
	}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
}

// inProcess starts the simulator, the proxy and a gateway node in this process (so the CPU
// figures are this whole process's) and returns their endpoints; all stop with the test.
func inProcess(t *testing.T) (context.Context, *nodetest.Env, Endpoints) {
	t.Setenv(SimCredentialEnv, SimCredential)
	quietLogs(t)
	env := nodetest.Start(t, CatalogTemplate(10), nodetest.Options{})
	up, _ := url.Parse(env.SimURL)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go proxy.Serve(ctx, ln, up)
	pid := os.Getpid()
	return ctx, env, Endpoints{SimURL: env.SimURL, SimPID: pid, ProxyURL: "http://" + ln.Addr().String(), ProxyPID: pid,
		GatewayURL: env.Node.URL, GatewayPID: pid, AdminURL: env.Node.AdminURL, AdminToken: nodetest.AdminToken}
}

// A tiny in-process run of every scenario through the same harness.
func TestSuiteInProcess(t *testing.T) {
	ctx, env, ep := inProcess(t)
	cfg := Config{Duration: 100 * time.Millisecond, Warmup: 20 * time.Millisecond, Reps: 1, Concurrency: 4,
		Accounts: 30, AccountWorkers: 4, BurstRPM: 10}
	if testing.Verbose() {
		cfg.Log = os.Stderr
	}
	t0 := time.Now()
	rep, err := Run(ctx, cfg, ep)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("suite ran in %v", time.Since(t0))
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	checkReport(t, b, ScenarioNames(), true, false)
	if rep.Setup.Accounts != 30 || rep.Setup.BurstAccounts != 2 || rep.Setup.HotAccounts != HotAccounts {
		t.Errorf("setup %+v", rep.Setup)
	}
	if env.Sim.Calls(RouteFailA) == 0 {
		t.Error("the failover scenario never reached its failing route")
	}
	for _, h := range rep.Headline {
		// The failing route rests once its error rate judges it, so a phase may see no retry at
		// all: at least one upstream call per request.
		if h.Scenario == "failover" && (h.UpstreamPerReq == nil || *h.UpstreamPerReq < 1) {
			t.Errorf("failover: upstream calls per request %v, want at least 1", h.UpstreamPerReq)
		}
		if h.Scenario == "chat-plain" && (h.GatewayAddedP50US == nil || h.FixedRateRPS == nil || h.CPURatio == nil || h.ThroughputRatio == nil) {
			t.Errorf("chat-plain headline incomplete: %+v", h)
		}
	}
	dir := t.TempDir()
	jp, mp, err := rep.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(mp)
	for _, want := range append(ScenarioNames(), "| scenario |", "Machine:", "saturated") {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if filepath.Ext(jp) != ".json" || !strings.HasPrefix(filepath.Base(jp), rep.StartedAt.Format("2006-01-02")) {
		t.Errorf("json path %s", jp)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
}

func TestRunTarget(t *testing.T) {
	t.Setenv(SimCredentialEnv, SimCredential)
	quietLogs(t)
	env := nodetest.Start(t, CatalogTemplate(10), nodetest.Options{Plan: PlanBench})
	rep, err := RunTarget(context.Background(), TargetConfig{URL: env.Node.URL + "/v1", Keys: []string{env.Key}, Scenario: "chat-stream",
		Config: Config{Duration: 200 * time.Millisecond, Rate: 50}})
	if err != nil {
		t.Fatal(err)
	}
	ph := rep.Scenarios[0].Phases[0]
	if ph.Mode != "open" || ph.OfferedRPS != 50 || len(ph.Runs) != 1 {
		t.Fatalf("%+v", ph)
	}
	run := ph.Runs[0]
	if run.Requests != 10 || run.OK != 10 || run.TTFB == nil || run.HopCPU != nil || run.UpstreamCalls != nil {
		t.Errorf("run %+v", run)
	}
	if _, err := RunTarget(context.Background(), TargetConfig{URL: "http://192.0.2.1/v1", Config: Config{Duration: time.Second}}); err == nil ||
		!strings.Contains(err.Error(), "loopback") {
		t.Errorf("a remote target was not refused: %v", err)
	}
}

// The whole thing as make bench runs it, shortened: the three binaries built, the suite
// started as separate processes through the CLI (pinned when there are two CPUs), the JSON
// report read back.
func TestSuiteProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the binaries")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// One go build for the three: their links run in parallel.
	cmd := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./cmd/modelgate", "./cmd/modelgate-sim", "./cmd/modelgate-bench")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := t.TempDir()
	args := []string{"--scenario", "chat-stream,burst-limit", "--duration", "200ms", "--warmup", "50ms", "--reps", "1",
		"--concurrency", "4", "--burst-rpm", "20", "--out", out, "--quiet",
		"--gateway-bin", filepath.Join(bin, "modelgate"), "--sim-bin", filepath.Join(bin, "modelgate-sim")}
	pinned := false
	if allowed, err := Allowed(); err == nil && len(allowed) >= 2 {
		args, pinned = append(args, "--pin"), true
	}
	cmd = exec.Command(filepath.Join(bin, "modelgate-bench"), args...)
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("modelgate-bench: %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(string(stdout), "| scenario |") || !strings.Contains(string(stdout), "wrote ") {
		t.Errorf("stdout:\n%s", stdout)
	}
	files, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(files) != 1 {
		t.Fatalf("reports: %v", files)
	}
	b, _ := os.ReadFile(files[0])
	checkReport(t, b, []string{"chat-stream", "burst-limit"}, true, pinned)
	var r Report
	json.Unmarshal(b, &r)
	if pinned && (r.Config.ClientCPUs == "" || r.Config.ServerCPUs == "" || r.Endpoints.CoreCPUs.String() != r.Config.ServerCPUs) {
		t.Errorf("pinned run recorded CPUs %q / %q, core CPUs %v", r.Config.ClientCPUs, r.Config.ServerCPUs, r.Endpoints.CoreCPUs)
	}
	if h := r.Headline[0]; pinned && (h.CPUBasis != BasisCore || h.CPURatio == nil || h.Ratios[0].CoreCPU == nil || h.Ratios[0].ProcessCPU == nil) {
		t.Errorf("pinned chat-stream headline: basis %q, ratios %+v", h.CPUBasis, h.Ratios)
	}
	if r.Endpoints.GatewayPID == 0 || r.Endpoints.GatewayPID == r.Endpoints.SimPID {
		t.Errorf("endpoints %+v", r.Endpoints)
	}
	if md, _ := filepath.Glob(filepath.Join(out, "*.md")); len(md) != 1 {
		t.Errorf("markdown: %v", md)
	}
}

// The saturated phase's connections: 32 unpinned, 64 with the servers pinned (the load
// generator then has a CPU of its own), and what is asked for either way.
func TestDefaultConcurrencyFollowsPinning(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		wantC int
	}{
		{"not pinned", Config{}, 32},
		{"pinned", Config{ClientCPUs: CPUSet{0}, ServerCPUs: CPUSet{1}}, PinnedConcurrency},
		{"asked for, pinned", Config{Concurrency: 16, ClientCPUs: CPUSet{0}, ServerCPUs: CPUSet{1}}, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Defaults()
			if tc.cfg.Concurrency != tc.wantC {
				t.Errorf("concurrency %d, want %d", tc.cfg.Concurrency, tc.wantC)
			}
		})
	}
}
