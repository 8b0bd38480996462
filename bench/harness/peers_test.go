package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// bifrostKit is the Bifrost build kit's config.py and the binary make bench-peers builds,
// found through PEERS and BIFROST_DIR with the Makefile's defaults (relative to the
// repository root). Either is "" when it is not there.
func bifrostKit(t *testing.T) (script, bin string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	peers := os.Getenv("PEERS")
	if peers == "" {
		peers = filepath.Join(root, "..", "shared", "peers")
	} else if !filepath.IsAbs(peers) {
		peers = filepath.Join(root, peers)
	}
	dir := os.Getenv("BIFROST_DIR")
	if dir == "" {
		dir = filepath.Join(root, "bin", "peers", "bifrost")
	} else if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	script, bin = filepath.Join(peers, "bifrost", "config.py"), filepath.Join(dir, "bin", "bifrost-http")
	if _, err := os.Stat(script); err != nil {
		script = ""
	}
	if _, err := os.Stat(bin); err != nil {
		bin = ""
	}
	return script, bin
}

// Each Bifrost setup's command lines: config.py with its own app directory, the simulator's
// chat route as the OpenAI base URL and the simulator's model, --logging for the logging
// setup; bifrost-http on that directory and a loopback port.
func TestBifrostCommandLines(t *testing.T) {
	b := BifrostConfig{Bin: "/opt/bifrost-http", ConfigScript: "/kit/config.py"}
	for _, tc := range []struct {
		target string
		want   []string
		err    string
	}{
		{target: TargetBifrostLean, want: []string{"/kit/config.py", "/w/bifrost-lean", "http://127.0.0.1:9/r/chat", "sim-model"}},
		{target: TargetBifrostLogging, want: []string{"/kit/config.py", "/w/bifrost-lean", "http://127.0.0.1:9/r/chat", "sim-model", "--logging"}},
		{target: TargetGateway, err: `"gateway" is not a Bifrost target`},
	} {
		t.Run(tc.target, func(t *testing.T) {
			got, err := b.configArgs(tc.target, "/w/bifrost-lean", "http://127.0.0.1:9")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("got %q (%v), want %q", got, err, tc.want)
			}
		})
	}
	if got := strings.Join(b.serveArgs("/w/bifrost-lean"), " "); got != "-app-dir /w/bifrost-lean -host 127.0.0.1 -port {port}" {
		t.Errorf("serve args %q", got)
	}
}

// Check names what is missing before anything starts.
func TestBifrostCheckNamesWhatIsMissing(t *testing.T) {
	exists := filepath.Join(t.TempDir(), "present")
	if err := os.WriteFile(exists, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    BifrostConfig
		err  string
	}{
		{"no binary", BifrostConfig{ConfigScript: exists}, "no Bifrost binary (--bifrost-bin; make bench-peers builds it)"},
		{"no script", BifrostConfig{Bin: exists}, "no Bifrost config script"},
		{"binary absent", BifrostConfig{Bin: "/nonexistent/bifrost-http", ConfigScript: exists}, "/nonexistent/bifrost-http: no such file"},
		{"both there", BifrostConfig{Bin: exists, ConfigScript: exists}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.Check()
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The app directory config.py writes for each setup: one OpenAI provider on the simulator's
// chat route with no retries, the request log on only in the logging setup, in SQLite in
// that setup's own directory.
func TestBifrostConfigWritten(t *testing.T) {
	script, _ := bifrostKit(t)
	if script == "" {
		t.Skip("no Bifrost build kit (set PEERS to the directory holding bifrost/config.py)")
	}
	b := BifrostConfig{ConfigScript: script}
	for _, tc := range []struct {
		target  string
		logging bool
	}{{TargetBifrostLean, false}, {TargetBifrostLogging, true}} {
		t.Run(tc.target, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), tc.target)
			if err := b.writeConfig(context.Background(), tc.target, dir, "http://127.0.0.1:9"); err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				Client struct {
					EnableLogging bool `json:"enable_logging"`
				} `json:"client"`
				Providers map[string]struct {
					Network struct {
						BaseURL    string `json:"base_url"`
						MaxRetries int    `json:"max_retries"`
					} `json:"network_config"`
				} `json:"providers"`
				LogsStore *struct {
					Type   string `json:"type"`
					Config struct {
						Path string `json:"path"`
					} `json:"config"`
				} `json:"logs_store"`
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			openai, ok := c.Providers["openai"]
			if len(c.Providers) != 1 || !ok || openai.Network.BaseURL != "http://127.0.0.1:9/r/"+PeerRoute || openai.Network.MaxRetries != 0 {
				t.Errorf("providers %+v", c.Providers)
			}
			if c.Client.EnableLogging != tc.logging || (c.LogsStore != nil) != tc.logging {
				t.Errorf("logging %v, logs store %+v; want logging %v", c.Client.EnableLogging, c.LogsStore, tc.logging)
			}
			if tc.logging && (c.LogsStore.Type != "sqlite" || c.LogsStore.Config.Path != filepath.Join(dir, "logs.db")) {
				t.Errorf("logs store %+v", *c.LogsStore)
			}
		})
	}
}

// Both Bifrost setups as suite targets beside the gateway and the proxy, on real processes:
// every plain and streamed answer complete (Bifrost ends its streams with data: [DONE]),
// one upstream call per request on the simulator's chat route, the ratios against each.
// Skipped unless make bench-peers has built Bifrost.
func TestBifrostTargetsInTheSuite(t *testing.T) {
	script, bin := bifrostKit(t)
	if script == "" || bin == "" {
		t.Skip("Bifrost is not built (make bench-peers PEERS=... builds it into bin/peers/bifrost)")
	}
	if testing.Short() {
		t.Skip("starts two Bifrost processes")
	}
	ctx, env, ep := inProcess(t)
	work := t.TempDir()
	l := &Launched{}
	defer l.Stop()
	peers, err := BifrostConfig{Bin: bin, ConfigScript: script}.startPeers(ctx, PeerTargets, work, env.SimURL, l.starter(work, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		if p.PID == 0 || !strings.Contains(p.Build, "github.com/maximhq/bifrost/core v") {
			t.Errorf("peer %+v", p)
		}
	}
	ep.Peers = peers
	cfg := Config{Scenarios: []string{"chat-plain", "chat-stream"}, Duration: 200 * time.Millisecond, Warmup: 50 * time.Millisecond, Reps: 1,
		Concurrency: 4, Rate: 40, Targets: []string{TargetProxy, TargetGateway, TargetBifrostLean, TargetBifrostLogging}}
	rep, err := Run(ctx, cfg, ep)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rep)
	checkReport(t, b, cfg.Scenarios, true, false)
	for _, sc := range rep.Scenarios {
		if strings.Join(sc.Targets, ",") != strings.Join(cfg.Targets, ",") {
			t.Errorf("%s: targets %v", sc.Name, sc.Targets)
		}
		for _, ph := range sc.Phases {
			for _, run := range ph.Runs {
				if run.UpstreamCallsPerRequest == nil || *run.UpstreamCallsPerRequest != 1 {
					t.Errorf("%s/%s/%s: upstream calls per request %v", sc.Name, ph.Name, run.Target, run.UpstreamCallsPerRequest)
				}
			}
		}
		var against []string
		for _, r := range sc.Comparison.Ratios {
			// Not pinned: the CPU ratio is the processes' (nil when a 0.2 s run's CPU is under
			// one clock tick).
			if r.Throughput == nil || r.CPU != r.ProcessCPU || r.CoreCPU != nil {
				t.Errorf("%s: ratio %+v", sc.Name, r)
			}
			against = append(against, r.Against)
		}
		if strings.Join(against, ",") != "proxy,bifrost-lean,bifrost-logging" {
			t.Errorf("%s: ratios against %v", sc.Name, against)
		}
	}
}
