package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelgate/modelgate/bench/load"
	"github.com/modelgate/modelgate/internal/freeport"
)

// The memory figures (modelgate-bench rss): the gateway's resident set, read
// from /proc, in two setups. Demo: `modelgate demo` (its own simulator) on a fresh data
// directory, warmed up with calls of four kinds, then idle. Accounts: `modelgate serve` with
// the bench catalog, accounts created through the admin API (one key each), every one called,
// then idle. The figures are reported, never asserted: they depend on the machine.

// RSSConfig is one memory measurement.
type RSSConfig struct {
	GatewayBin, SimBin string
	WorkDir            string // data directories and logs
	Demo               bool   // measure the demo; else serve with Accounts accounts
	Accounts           int    // serve: accounts, one key each
	Calls              int    // demo: the warm-up's calls; serve: calls per account
	Concurrency        int    // calls in flight
	Idle               time.Duration
	Env                []string // extra environment of the gateway (GOGC, GOMEMLIMIT, ...)
	Log                io.Writer
}

// RSSSample is the gateway's memory at one point, in KiB (/proc/<pid>/status).
type RSSSample struct {
	Point string
	RSS   int64 // VmRSS
	Anon  int64 // RssAnon: heap, stacks, Pebble's memtables and block cache
	File  int64 // RssFile: the binary's pages mapped in
	Peak  int64 // VmHWM since start
}

func (s RSSSample) String() string {
	return fmt.Sprintf("%-34s VmRSS %6.1f MiB  (anon %6.1f, file %5.1f)  peak %6.1f MiB",
		s.Point, mb(s.RSS), mb(s.Anon), mb(s.File), mb(s.Peak))
}

func mb(kib int64) float64 { return float64(kib) / 1024 }

// ReadRSS reads pid's memory now.
func ReadRSS(pid int, point string) (RSSSample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return RSSSample{}, err
	}
	s := RSSSample{Point: point}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"VmRSS", &s.RSS}, {"RssAnon", &s.Anon}, {"RssFile", &s.File}, {"VmHWM", &s.Peak}} {
		if *f.v, err = ParseStatusKB(b, f.name); err != nil {
			return RSSSample{}, err
		}
	}
	return s, nil
}

// MeasureRSS starts the gateway as cfg says, loads it, and samples its memory after start,
// after the calls and after the idle wait.
func MeasureRSS(ctx context.Context, cfg RSSConfig) ([]RSSSample, error) {
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	cfg.Concurrency = max(cfg.Concurrency, 1)
	for _, b := range []*string{&cfg.GatewayBin, &cfg.SimBin} {
		abs, err := filepath.Abs(*b)
		if err != nil {
			return nil, err
		}
		*b = abs
	}
	var procs []*Proc
	defer func() {
		for i := len(procs) - 1; i >= 0; i-- {
			procs[i].Stop()
		}
	}()
	start := func(name, bin string, args, env []string) (*Proc, error) {
		addr, err := freeport.Addr()
		if err != nil {
			return nil, err
		}
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "{addr}", addr)
		}
		p, err := StartProc(name, bin, args, env, filepath.Join(cfg.WorkDir, name+".log"), nil)
		if err != nil {
			return nil, err
		}
		procs = append(procs, p)
		p.URL = "http://" + addr
		return p, p.WaitReady(p.URL+"/healthz", 30*time.Second)
	}
	var samples []RSSSample
	sample := func(pid int, point string) error {
		s, err := ReadRSS(pid, point)
		if err == nil {
			samples = append(samples, s)
			fmt.Fprintln(cfg.Log, s)
		}
		return err
	}
	data := filepath.Join(cfg.WorkDir, "data")
	adminAddr, err := freeport.Addr() // never the default admin address, which a second gateway may hold
	if err != nil {
		return nil, err
	}
	env := append([]string{"MODELGATE_METRICS_ADDR=off", "MODELGATE_ADMIN_ADDR=" + adminAddr, "MODELGATE_LOG_LEVEL=warn"}, cfg.Env...)
	args := []string{"demo", "--data", data, "--addr", "{addr}"}
	if !cfg.Demo {
		sim, err := start("simulator", cfg.SimBin, []string{"--addr", "{addr}"}, nil)
		if err != nil {
			return nil, err
		}
		catPath := filepath.Join(cfg.WorkDir, "catalog.yaml")
		if err := os.WriteFile(catPath, []byte(Catalog(sim.URL, DefaultBurstRPM)), 0o600); err != nil {
			return nil, err
		}
		env = append(env, "MODELGATE_ADMIN_TOKEN="+AdminToken, SimCredentialEnv+"="+SimCredential)
		args = []string{"serve", "--config", catPath, "--data", data, "--addr", "{addr}"}
	}
	gw, err := start("gateway", cfg.GatewayBin, args, env)
	if err != nil {
		return nil, err
	}
	if err := sample(gw.PID, "started"); err != nil {
		return nil, err
	}
	var reqs []load.HTTPRequest
	if cfg.Demo {
		key, err := demoKey(data)
		if err != nil {
			return nil, err
		}
		reqs = demoRequests(gw.URL, key)
	} else {
		fmt.Fprintf(cfg.Log, "creating %d accounts...\n", cfg.Accounts)
		keys, err := CreateAccounts(ctx, "http://"+adminAddr, AdminToken, PlanBench, "rss", cfg.Accounts, 16, nil)
		if err != nil {
			return nil, err
		}
		if err := sample(gw.PID, fmt.Sprintf("%d accounts created", cfg.Accounts)); err != nil {
			return nil, err
		}
		reqs = []load.HTTPRequest{{URL: gw.URL + "/v1/chat/completions", Keys: keys, KeyHeader: "Authorization",
			Body: []byte(strings.ReplaceAll(chatBody, "{{MODEL}}", "bench-chat"))}}
		cfg.Calls *= len(keys)
	}
	if err := callAll(ctx, reqs, cfg.Calls, cfg.Concurrency); err != nil {
		return nil, err
	}
	if err := sample(gw.PID, fmt.Sprintf("after %d calls", cfg.Calls)); err != nil {
		return nil, err
	}
	select {
	case <-time.After(cfg.Idle):
	case <-ctx.Done():
		return samples, ctx.Err()
	}
	err = sample(gw.PID, fmt.Sprintf("idle %v later", cfg.Idle))
	if gc := lastGCTrace(gw.Log); gc != "" { // GODEBUG=gctrace=1 in cfg.Env: the Go heap's own figures
		fmt.Fprintln(cfg.Log, "last GC:", gc)
	}
	return samples, err
}

// lastGCTrace is the last gctrace line in the log at path ("" without one).
func lastGCTrace(path string) string {
	b, _ := os.ReadFile(path)
	last := ""
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.HasPrefix(line, "gc ") {
			last = line
		}
	}
	return last
}

// callAll makes n calls, request i being reqs[i%len(reqs)] with its i-th key, conc at a time;
// a call that does not answer 200 in full is an error.
func callAll(ctx context.Context, reqs []load.HTTPRequest, n, conc int) error {
	client := load.NewClient(conc)
	var next atomic.Int64
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				r := reqs[i%int64(len(reqs))]
				h := load.HTTP{Client: client, Req: r}
				o := h.Exchange(ctx, i/int64(len(reqs)))
				if o.Err != nil || o.Status != 200 {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("call %d to %s: status %d, %v", i, r.URL, o.Status, o.Err)
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return first
}

// demoKey is the demo account's API key, from the credentials the demo saves once it serves.
func demoKey(data string) (string, error) {
	path := filepath.Join(data, "demo-credentials.json")
	b, err := os.ReadFile(path)
	for wait := 0; os.IsNotExist(err) && wait < 100; wait++ {
		time.Sleep(100 * time.Millisecond)
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", err
	}
	var c struct {
		APIKey string `json:"api_key"`
	}
	if err := json.Unmarshal(b, &c); err != nil || c.APIKey == "" {
		return "", fmt.Errorf("demo credentials without an api_key: %v", err)
	}
	return c.APIKey, nil
}

// demoRequests are the demo warm-up's four kinds of call: chat whole and streamed, a
// messages stream converted to a chat route, a responses call.
func demoRequests(base, key string) []load.HTTPRequest {
	keys := []string{key}
	return []load.HTTPRequest{
		{URL: base + "/v1/chat/completions", Keys: keys, Body: []byte(strings.ReplaceAll(chatBody, "{{MODEL}}", "sim-chat"))},
		{URL: base + "/v1/chat/completions", Keys: keys, StreamEnd: "data: [DONE]", Body: []byte(strings.ReplaceAll(chatStreamBody, "{{MODEL}}", "sim-chat"))},
		{URL: base + "/v1/messages", Keys: keys, KeyHeader: "x-api-key", StreamEnd: "event: message_stop",
			Header: map[string][]string{"Anthropic-Version": {"2023-06-01"}}, Body: []byte(strings.ReplaceAll(messagesStreamBody, "{{MODEL}}", "sim-chat"))},
		{URL: base + "/v1/responses", Keys: keys, StreamEnd: "event: response.completed", Body: []byte(strings.ReplaceAll(responsesStreamBody, "{{MODEL}}", "sim-responses"))},
	}
}
