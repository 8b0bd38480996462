// Package clients runs real coding CLIs, installed from npm at pinned versions
// (package.json, package-lock.json), headless against the demo gateway: every CLI × the demo's
// chat model of each upstream format, and cloudCells, each cell a prompt, a streamed answer, a tool call the CLI
// executes, its result sent back, and a final text. `make test-clients` runs it.
package clients

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The demo catalog's chat models, one per upstream wire format, and its auto model (every CLI
// runs on each).
var models = []string{"sim-chat", "sim-messages", "sim-gemini", "sim-responses", "auto"}

// cloudCells run a coding agent over a cloud route of the demo: Claude Code's messages
// through Claude on AWS Bedrock (InvokeModel, SigV4, the event-stream framing), Gemini CLI's
// requests through Gemini on Vertex AI (OAuth2 tokens from a service-account file).
var cloudCells = []struct{ client, model string }{
	{"claude", "sim-bedrock-claude"},
	{"gemini", "sim-vertex-gemini"},
}

// plan is the demo plan without allow_automated: each cell proves its CLI is admitted as an
// interactive coding client. Every cell has its own account, so burst limits never mix.
const plan = "pro"

// marker is what the `sample` command prints. The simulator calls the CLI's shell tool with
// the plainest arguments, {"command":"sample"}; the harness puts an executable `sample` on
// the CLI's PATH, so the marker in the CLI's output proves the tool ran, and in a later
// request that its result went back to the model.
const marker = "modelgate-sample-tool-ran"

// finalPrefix starts every text answer of the simulator.
const finalPrefix = "Simulated reply from "

// prompt asks for one shell call; the simulator calls the first tool whatever the words.
const prompt = "Run the shell command `sample` and tell me what it printed."

const cellTimeout = 150 * time.Second

// transcript is what a CLI's machine-readable output says happened.
type transcript struct {
	toolCalls  []string // tool names, in order
	toolOutput string   // the tool results the CLI reported, joined
	final      string   // the last assistant text
	errors     []string // errors the CLI reported
}

// client is one CLI: how to run it in a cell, and how to read what it printed.
type client struct {
	name    string
	command func(c *cell) (args, env []string) // writes its config into the cell's HOME
	parse   func(stdout []byte) transcript
}

// cell is one client × model run.
type cell struct {
	client         *client
	model          string
	home, work     string // throwaway HOME and working directory
	baseURL        string // the recorder in front of the gateway, no path
	key            string
	node, binDir   string // node_modules/.bin of the suite, and the cell's own bin (sample)
	elapsed        time.Duration
	exitErr        error
	stdout, stderr []byte
	rec            *recorder
	problems       []string
	xfail          bool // failed for the reason expected-failures.txt gives
}

func TestRealClients(t *testing.T) {
	bin := envOr("MODELGATE_BIN", "../bin/modelgate")
	nodeBin, _ := filepath.Abs("node_modules/.bin")
	if _, err := os.Stat(filepath.Join(nodeBin, "claude")); err != nil {
		t.Fatalf("the CLIs are not installed (%v): run `npm ci` in clients/ (make test-clients does)", err)
	}
	root, err := os.MkdirTemp(os.Getenv("CLIENTS_WORKDIR"), "modelgate-clients-") // outside any git repository
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	gw := startGateway(t, bin, mkdir(t, root, "data"))
	expected := readExpectedFailures(t, "expected-failures.txt")

	type pair struct {
		cl *client
		m  string
	}
	var pairs []pair
	for _, cl := range allClients {
		for _, m := range models {
			pairs = append(pairs, pair{cl, m})
		}
		for _, cc := range cloudCells {
			if cc.client == cl.name {
				pairs = append(pairs, pair{cl, cc.model})
			}
		}
	}
	var cells []*cell
	for _, p := range pairs {
		if !selected(p.cl.name, p.m) {
			continue
		}
		name := p.cl.name + "-" + p.m
		c := &cell{client: p.cl, model: p.m, node: nodeBin,
			home: mkdir(t, root, name, "home"), work: mkdir(t, root, name, "work"), binDir: mkdir(t, root, name, "bin")}
		c.key = gw.newKey(t, name+"@clients.test", plan)
		c.rec = startRecorder(t, gw.url, marker)
		c.baseURL = c.rec.url
		cells = append(cells, c)
	}
	if len(cells) > 0 {
		refusesAutomated(t, gw.url, cells[0].key)
	}
	start := time.Now()
	runAll(cells, parallelism())
	wall := time.Since(start)

	for _, c := range cells {
		c.rec.settle(5 * time.Second)
		c.check()
		key := c.client.name + " " + c.model
		exp, listed := expected[key]
		// An expected failure must fail for its stated reason, or it is a failure like any other.
		xfail := listed && strings.Contains(strings.Join(c.problems, "\n")+c.rec.summary(), exp.match)
		reason := exp.reason
		c.xfail = xfail && len(c.problems) > 0
		switch {
		case len(c.problems) > 0 && xfail:
			t.Logf("%s: fails as expected (%s):\n%s\n%s", key, reason, strings.Join(c.problems, "\n"), c.rec.summary())
		case len(c.problems) > 0 && os.Getenv("CLIENTS_DEBUG") != "":
			t.Errorf("%s FAILED:\n  %s\n%s\n  stdout: %s\n  stderr: %s", key, strings.Join(c.problems, "\n  "), c.rec.summary(), c.stdout, c.stderr)
		case len(c.problems) > 0:
			t.Errorf("%s FAILED:\n  %s\n%s\n  stderr: %s", key, strings.Join(c.problems, "\n  "), c.rec.summary(), cut(string(c.stderr), 3000))
		case listed:
			t.Errorf("%s passes but expected-failures.txt lists it (%s): remove that line", key, reason)
		}
	}
	fmt.Print(matrix(cells, expected, wall))
	checkAgents(t, cells)
}

// runAll runs the cells, n at a time.
func runAll(cells []*cell, n int) {
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, c := range cells {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			c.run()
		}()
	}
	wg.Wait()
}

// run executes the CLI once, headless, with a throwaway HOME and the sample command on PATH.
func (c *cell) run() {
	sample := "#!/bin/sh\necho " + marker + "\n"
	_ = os.WriteFile(filepath.Join(c.binDir, "sample"), []byte(sample), 0o755)
	_ = os.WriteFile(filepath.Join(c.work, "sample"), []byte(marker+"\n"), 0o644)
	// Login shells (Codex runs bash -lc) reset PATH from /etc/profile, then read this.
	profile := "export PATH=\"" + c.binDir + ":$PATH\"\n"
	_ = os.WriteFile(filepath.Join(c.home, ".bash_profile"), []byte(profile), 0o644)
	args, env := c.client.command(c)
	ctx, cancel := context.WithTimeout(context.Background(), cellTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.node, args[0]), args[1:]...)
	cmd.Dir = c.work
	cmd.Env = append(baseEnv(c), env...)
	cmd.Stdin = nil // headless: no terminal, stdin is /dev/null
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	// Its own process group, ended as a whole: a CLI's helpers (shells, language servers,
	// background agents) must not outlive the cell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	c.exitErr = cmd.Run()
	c.elapsed = time.Since(start)
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	c.stdout, c.stderr = []byte(out.String()), []byte(errb.String())
	if ctx.Err() != nil {
		c.exitErr = fmt.Errorf("timed out after %s", cellTimeout)
	}
}

// baseEnv is a minimal environment: no credentials or settings of the machine leak in.
func baseEnv(c *cell) []string {
	return []string{
		"HOME=" + c.home, "USER=clients", "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "CI=1",
		"PATH=" + c.binDir + ":" + c.node + ":" + filepath.Dir(nodePath()) + ":/usr/local/bin:/usr/bin:/bin",
		"XDG_CONFIG_HOME=" + filepath.Join(c.home, ".config"), "XDG_DATA_HOME=" + filepath.Join(c.home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(c.home, ".cache"), "XDG_STATE_HOME=" + filepath.Join(c.home, ".local", "state"),
		"TMPDIR=" + mkdirQuiet(c.home, "tmp"),
	}
}

// check records what the cell failed to show.
func (c *cell) check() {
	fail := func(format string, a ...any) { c.problems = append(c.problems, fmt.Sprintf(format, a...)) }
	if c.exitErr != nil {
		fail("exit: %v", c.exitErr)
	}
	tr := c.client.parse(c.stdout)
	for _, e := range tr.errors {
		fail("the CLI reported an error: %s", cut(e, 600))
	}
	if len(tr.toolCalls) == 0 {
		fail("no tool call reported")
	}
	if !strings.Contains(tr.toolOutput, marker) {
		fail("the tool's output does not show %q (tool output %q)", marker, cut(tr.toolOutput, 300))
	}
	if !strings.HasPrefix(strings.TrimSpace(tr.final), finalPrefix) {
		fail("final text %q does not start with %q", cut(tr.final, 200), finalPrefix)
	}
	calls := c.rec.modelCalls()
	back, streamed := false, false
	for _, ex := range calls {
		back = back || ex.hasMarker
		streamed = streamed || ex.stream
		if ex.status >= 400 {
			fail("gateway answered %d to %s %s", ex.status, ex.method, ex.path)
		}
	}
	if !back {
		fail("no request carried the tool's result back to the model (%d model calls)", len(calls))
	}
	if len(calls) > 0 && !streamed {
		fail("no model call was streamed")
	}
}

// matrix is the clients × models table.
func matrix(cells []*cell, expected map[string]expectedFailure, wall time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nreal clients × demo models (pass/fail, seconds); wall %.0f s, %d at a time\n\n", wall.Seconds(), parallelism())
	columns := append([]string{}, models...)
	for _, cc := range cloudCells {
		columns = append(columns, cc.model)
	}
	fmt.Fprintf(&b, "| client | %s |\n|---|%s\n", strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
	byClient := map[string]map[string]*cell{}
	for _, c := range cells {
		if byClient[c.client.name] == nil {
			byClient[c.client.name] = map[string]*cell{}
		}
		byClient[c.client.name][c.model] = c
	}
	pass, failN, xfails := 0, 0, 0
	reasons := map[string]bool{}
	for _, cl := range allClients {
		row := byClient[cl.name]
		if row == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s |", cl.name)
		for _, m := range columns {
			c := row[m]
			switch {
			case c == nil:
				b.WriteString(" — |")
			case len(c.problems) == 0:
				pass++
				fmt.Fprintf(&b, " pass %.0f s |", c.elapsed.Seconds())
			default:
				failN++
				tag := "FAIL"
				if c.xfail {
					xfails++
					tag = "FAIL*"
					reasons[expected[cl.name+" "+m].reason] = true
				}
				fmt.Fprintf(&b, " %s %.0f s |", tag, c.elapsed.Seconds())
			}
		}
		b.WriteString("\n")
	}
	for _, r := range sortedKeys(reasons) {
		fmt.Fprintf(&b, "\nFAIL* expected (clients/expected-failures.txt): %s", r)
	}
	fmt.Fprintf(&b, "\n\ncells: %d pass, %d fail (%d of them expected)\n", pass, failN, xfails)
	return b.String()
}

// expectedFailure is a cell that fails today because of work in flight elsewhere.
type expectedFailure struct {
	reason string // who fixes it
	match  string // text the failure must show (an error message), so another failure is not hidden
}

// readExpectedFailures reads "client model: reason | text the failure shows" lines. Such cells
// are reported as failures but do not fail the run while they fail with that text; a listed
// cell that passes fails the run, so the list never outlives its reason.
func readExpectedFailures(t *testing.T, path string) map[string]expectedFailure {
	out := map[string]expectedFailure{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, ok := strings.Cut(line, ":")
		reason, match, ok2 := strings.Cut(rest, "|")
		if !ok || !ok2 || strings.TrimSpace(match) == "" {
			t.Fatalf("%s: %q is not \"client model: reason | text the failure shows\"", path, line)
		}
		out[strings.Join(strings.Fields(key), " ")] = expectedFailure{strings.TrimSpace(reason), strings.TrimSpace(match)}
	}
	return out
}

// selected applies CLIENTS_ONLY ("codex,claude" or "codex/sim-chat") to the matrix.
func selected(client, model string) bool {
	only := os.Getenv("CLIENTS_ONLY")
	if only == "" {
		return true
	}
	for _, f := range strings.Split(only, ",") {
		cl, m, _ := strings.Cut(strings.TrimSpace(f), "/")
		if cl == client && (m == "" || m == model) {
			return true
		}
	}
	return false
}

func parallelism() int {
	if n, err := strconv.Atoi(os.Getenv("CLIENTS_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return max(1, runtime.NumCPU())
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func mustAbs(p string) string {
	abs, _ := filepath.Abs(p)
	_ = os.MkdirAll(abs, 0o755)
	return abs
}

func mkdir(t *testing.T, parts ...string) string {
	t.Helper()
	p := filepath.Join(parts...)
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func mkdirQuiet(parts ...string) string {
	p := filepath.Join(parts...)
	_ = os.MkdirAll(p, 0o755)
	return p
}

// nodePath is the node binary the CLIs' scripts run under.
func nodePath() string {
	if p, err := exec.LookPath("node"); err == nil {
		return p
	}
	return "/usr/bin/node"
}

// jsonLines decodes each line of out that is a JSON object; other lines are skipped.
func jsonLines(out []byte) []map[string]any {
	var objs []map[string]any
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			objs = append(objs, m)
		}
	}
	return objs
}

// sortedKeys is for stable output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
