package harness

import (
	"context"
	"errors"
	"fmt"
	"github.com/modelgate/modelgate/internal/freeport"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Proc is a server process the harness started.
type Proc struct {
	Name string
	PID  int
	URL  string // http://127.0.0.1:port
	Log  string // its stdout and stderr
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// StartProc starts bin with args and extra environment, its output in logPath, pinned to
// cpus when cpus is not empty.
func StartProc(name, bin string, args, env []string, logPath string, cpus CPUSet) (*Proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig kills the child if the harness dies. It fires when the thread that forked
	// the child ends, so the fork happens on a locked thread that lives until the child does.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &Proc{Name: name, Log: logPath, cmd: cmd, done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		defer close(p.done)
		defer logf.Close()
		if len(cpus) > 0 {
			// A forked process inherits the forking thread's CPU mask, so every thread of
			// the child is pinned from its first instruction.
			if err := setAffinity(0, cpus); err != nil {
				started <- err
				return
			}
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		p.err = cmd.Wait()
	}()
	if err := <-started; err != nil {
		<-p.done
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	p.PID = cmd.Process.Pid
	return p, nil
}

// WaitReady polls url until it answers 200, the process exits, or timeout passes.
func (p *Proc) WaitReady(url string, timeout time.Duration) error {
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil}}
	deadline := time.Now().Add(timeout)
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before it was ready (%v); its log: %s\n%s", p.Name, p.err, p.Log, tail(p.Log, 2000))
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready at %s after %v (last error %v); its log: %s", p.Name, url, timeout, err, p.Log)
		}
	}
}

// Stop sends SIGTERM and waits up to 15 s before killing.
func (p *Proc) Stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop on SIGTERM within 15 s; killed", p.Name)
	}
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func tail(path string, n int) string {
	b, _ := os.ReadFile(path)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// LaunchConfig says which binaries to run and where.
type LaunchConfig struct {
	GatewayBin string // modelgate
	SimBin     string // modelgate-sim
	// ProxyCmd runs the floor proxy; "{addr}" and "{upstream}" in it are replaced. Default:
	// the bench binary itself: [BenchBin, "proxy", "--addr", "{addr}", "--upstream", "{upstream}"].
	BenchBin   string
	WorkDir    string // catalogs, data and logs
	ServerCPUs CPUSet // pin the servers here (nil: not pinned)
	BurstRPM   int    // the burst plan's limit
	LogLevel   string // the gateway's MODELGATE_LOG_LEVEL (default info)
	Profile    bool   // serve the started gateway's Go profiles (MODELGATE_PPROF) for the suite's --profile
	// Given servers: a simulator at SimURL, or a gateway at GatewayURL (serving the bench
	// catalog, Catalog(SimURL, BurstRPM), with its admin API at AdminURL and AdminToken), is
	// used instead of started. Their PIDs, if known, let the suite read their CPU and memory.
	SimURL, GatewayURL, AdminURL, AdminToken string
	SimPID, GatewayPID                       int
	// Peers are the peer targets to start (PeerTargets), with Bifrost.
	Peers   []string
	Bifrost BifrostConfig
}

// Launched is the simulator, the floor proxy and the gateway, running.
type Launched struct {
	Endpoints
	Procs []*Proc
}

// Stop stops every process, gateway first.
func (l *Launched) Stop() error {
	var errs []error
	for i := len(l.Procs) - 1; i >= 0; i-- {
		errs = append(errs, l.Procs[i].Stop())
	}
	return errors.Join(errs...)
}

// AdminToken is the gateway's admin token in launched runs (loopback only, a throwaway data
// directory).
const AdminToken = "mg-admin-bench-MDJOu8Flp2UNENNswO6XqEGdjSLsTN85"

// SimCredential is what the gateway sends the simulator (which accepts any credential).
const SimCredential = "sim-bench-credential"

// Launch starts the simulator, then the proxy and the gateway in front of it, as separate
// processes, and waits until each answers /healthz. A simulator or gateway given in cfg is
// used instead of started; the proxy is always the harness's own.
func Launch(ctx context.Context, cfg LaunchConfig) (l *Launched, err error) {
	l = &Launched{}
	defer func() {
		if err != nil {
			l.Stop()
		}
	}()
	if cfg.BenchBin == "" {
		if cfg.BenchBin, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	bins := []*string{&cfg.BenchBin}
	if cfg.SimURL == "" {
		bins = append(bins, &cfg.SimBin)
	}
	if cfg.GatewayURL == "" {
		bins = append(bins, &cfg.GatewayBin)
	}
	for _, b := range bins {
		if *b, err = filepath.Abs(*b); err != nil {
			return nil, err
		}
		if _, err = os.Stat(*b); err != nil {
			return nil, fmt.Errorf("%w (make bench builds the binaries)", err)
		}
	}
	start := l.starter(cfg.WorkDir, cfg.ServerCPUs)
	l.SimURL, l.SimPID = strings.TrimSuffix(cfg.SimURL, "/"), cfg.SimPID
	if l.SimURL == "" {
		sim, err := start("simulator", cfg.SimBin, []string{"--addr", "{addr}"}, nil, "/healthz")
		if err != nil {
			return nil, err
		}
		l.SimURL, l.SimPID = sim.URL, sim.PID
	}
	px, err := start("proxy", cfg.BenchBin, []string{"proxy", "--addr", "{addr}", "--upstream", l.SimURL}, nil, "/healthz")
	if err != nil {
		return nil, err
	}
	l.ProxyURL, l.ProxyPID = px.URL, px.PID
	if len(cfg.Peers) > 0 {
		if l.Peers, err = cfg.Bifrost.startPeers(ctx, cfg.Peers, cfg.WorkDir, l.SimURL, start); err != nil {
			return nil, err
		}
	}
	// Every server is on ServerCPUs only when the harness started each one.
	if len(cfg.ServerCPUs) > 0 && cfg.SimURL == "" && cfg.GatewayURL == "" {
		l.CoreCPUs = cfg.ServerCPUs
	}
	if cfg.GatewayURL != "" {
		l.GatewayURL, l.GatewayPID, l.AdminToken = strings.TrimSuffix(cfg.GatewayURL, "/"), cfg.GatewayPID, cfg.AdminToken
		l.AdminURL = strings.TrimSuffix(cfg.AdminURL, "/")
		return l, nil
	}

	catPath := filepath.Join(cfg.WorkDir, "catalog.yaml")
	if err := os.WriteFile(catPath, []byte(Catalog(l.SimURL, cfg.BurstRPM)), 0o600); err != nil {
		return nil, err
	}
	level := cfg.LogLevel
	if level == "" {
		level = "info"
	}
	adminAddr, err := freeport.Addr() // never the default admin address, which a second gateway may hold
	if err != nil {
		return nil, err
	}
	env := []string{"MODELGATE_ADMIN_TOKEN=" + AdminToken, "MODELGATE_ADMIN_ADDR=" + adminAddr, SimCredentialEnv + "=" + SimCredential,
		"MODELGATE_LOG_LEVEL=" + level}
	if cfg.Profile {
		// Its own metrics address (not the default a second gateway may hold) serves the profiles.
		debug, err := freeport.Addr()
		if err != nil {
			return nil, err
		}
		env = append(env, "MODELGATE_METRICS_ADDR="+debug, "MODELGATE_PPROF=on")
		l.GatewayDebugURL = "http://" + debug
	}
	gw, err := start("gateway", cfg.GatewayBin,
		[]string{"serve", "--config", catPath, "--data", filepath.Join(cfg.WorkDir, "data"), "--addr", "{addr}"}, env, "/healthz")
	if err != nil {
		return nil, err
	}
	l.GatewayURL, l.GatewayPID, l.AdminURL, l.AdminToken = gw.URL, gw.PID, "http://"+adminAddr, AdminToken
	return l, ctx.Err()
}

// startFunc starts a server process on a free loopback port ("{addr}" and "{port}" in its
// arguments are replaced) and waits until health answers 200.
type startFunc func(name, bin string, args, env []string, health string) (*Proc, error)

// starter starts servers into l, each with its log <name>.log in workDir, pinned to cpus
// when there are any; l.Stop stops them.
func (l *Launched) starter(workDir string, cpus CPUSet) startFunc {
	return func(name, bin string, args, env []string, health string) (*Proc, error) {
		addr, err := freeport.Addr()
		if err != nil {
			return nil, err
		}
		_, port, _ := strings.Cut(addr, ":")
		for i := range args {
			args[i] = strings.NewReplacer("{addr}", addr, "{port}", port).Replace(args[i])
		}
		p, err := StartProc(name, bin, args, env, filepath.Join(workDir, name+".log"), cpus)
		if err != nil {
			return nil, err
		}
		l.Procs = append(l.Procs, p)
		p.URL = "http://" + addr
		return p, p.WaitReady(p.URL+health, 60*time.Second) // Bifrost migrates its SQLite stores first
	}
}

// Endpoints are the three servers a suite measures, started by Launch or by someone else
// (a PID of 0 means its CPU and memory are not read).
type Endpoints struct {
	SimURL     string `json:"sim_url"`
	SimPID     int    `json:"sim_pid"`
	ProxyURL   string `json:"proxy_url"`
	ProxyPID   int    `json:"proxy_pid"`
	GatewayURL string `json:"gateway_url"`
	GatewayPID int    `json:"gateway_pid"`
	AdminURL   string `json:"-"` // the gateway's admin listener
	AdminToken string `json:"-"`
	// GatewayDebugURL serves the gateway's /debug/pprof/ (a launched gateway with Profile).
	GatewayDebugURL string `json:"-"`
	// Peers are the other gateways measured beside ours (peers.go).
	Peers []Peer `json:"peers"`
	// CoreCPUs are the CPUs every server process runs on, pinned there by Launch: their
	// whole busy time is the servers' cost with the kernel's share (nil: not pinned).
	CoreCPUs CPUSet `json:"core_cpus"`
}

// serverPIDs are the known server processes, and the hop's.
func (e Endpoints) serverPIDs(hop int) []int {
	pids := []int{e.SimPID, e.ProxyPID, e.GatewayPID, hop}
	for _, p := range e.Peers {
		pids = append(pids, p.PID)
	}
	return pids
}

func itoa(i int) string { return strconv.Itoa(i) }
