package main

// The README test: every command of README.md's ```sh blocks, taken from
// the file itself, runs in order in one bash session in a fresh directory against
// `bin/modelgate demo` (built by the test, on a free port, its own ./data), and must give the
// outcome the README documents. Each command has its step in readmeSteps, in README order: a
// command the steps do not know, or a step no command matches, fails the test, so the README
// and this test change together.
//
// What the test changes in a command: the default address 127.0.0.1:8080 becomes the demo's
// and the admin API's default 127.0.0.1:9465 the demo's admin address (MODELGATE_ADDR and
// MODELGATE_ADMIN_ADDR are exported, as the README says to when a port is not the default),
// the serve command's addresses are free loopback ones, and
// the placeholders acct_…, key_…, sk-token-…, video_… and req_… become what the command before
// printed (the README says so). curl reports each answer's status through a curlrc
// (CURL_HOME), so the commands run exactly as written and the status is checked too.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/internal/testutil"
	"github.com/modelgate/modelgate/transport/node/nodetest"
)

// readmeStep is what one README command must do.
type readmeStep struct {
	start  string   // how the command starts in the README
	skip   string   // why the test does not run it; empty: it runs
	status int      // the HTTP status its curl reports; 0 for commands that are not curl
	want   []string // what its output holds
	// check looks further, e.g. at what the answer points to; background runs the command
	// with & (a server) and gives check its pid.
	check      func(t *testing.T, r *readmeRun, out string)
	background bool
}

// clusterSkip is why the README's cluster commands are not run here.
const clusterSkip = "e2e/clustertest runs real multi-process clusters through these commands"

var readmeSteps = []readmeStep{
	// Two commands
	{start: "export GOTOOLCHAIN=go1.27.3"},
	{start: "make run", skip: "the test starts bin/modelgate demo itself, as make run does", check: checkMakeRun},
	{start: "make test", skip: "the suite this test is part of"},
	// Try it
	{start: `KEY=$(python3 -c "import json;print(json.load(open('data/demo-credentials.json'))['api_key'])")`},
	{start: "curl -s http://127.0.0.1:8080/v1/chat/completions", status: 200, want: []string{`"object":"chat.completion"`, `"role":"assistant"`, `"model":"sim-chat"`}},
	{start: "curl -sN http://127.0.0.1:8080/v1/chat/completions", status: 200, want: []string{`"object":"chat.completion.chunk"`, "\ndata: [DONE]\n"}},
	{start: "curl -s http://127.0.0.1:8080/v1/images/generations", status: 200, want: []string{`"model":"sim-image"`}, check: checkImageServed},
	{start: "curl -s http://127.0.0.1:8080/v1/videos ", status: 200, want: []string{`"object":"video"`, `"status":"queued"`, `"seconds":"5"`}},
	{start: `curl -s "http://127.0.0.1:8080/v1/videos/video_…?model=sim-video"`, status: 200, want: []string{`"object":"video"`, `"model":"sim-video"`}},
	{start: "curl -s http://127.0.0.1:8080/v1/embeddings", status: 200, want: []string{`"object":"list"`, `"index":1`, `"model":"sim-embed"`}},
	{start: "curl -s http://127.0.0.1:8080/v1/models", status: 200, want: []string{`"id":"sim-chat"`, `"id":"sim-video"`}},
	// Connecting clients
	{start: "ANTHROPIC_BASE_URL=http://127.0.0.1:8080 ANTHROPIC_API_KEY=$KEY claude", skip: "needs Claude Code; make test-clients runs it so"},
	{start: "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8080 GEMINI_API_KEY=$KEY gemini", skip: "needs Gemini CLI; make test-clients runs it so"},
	{start: "OPENAI_BASE_URL=http://127.0.0.1:8080/v1 OPENAI_API_KEY=$KEY python3", skip: "needs the openai Python package (transport/sdktest runs the OpenAI Go SDK)"},
	// Operating it
	{start: "export MODELGATE_ADMIN_TOKEN=$(python3"},
	{start: "ACCOUNT=$(python3"},
	{start: "curl -s http://127.0.0.1:9465/admin/v1/accounts/$ACCOUNT", status: 200, want: []string{`"email":"demo@modelgate.local"`}},
	{start: "curl -s http://127.0.0.1:8080/admin/v1/accounts/$ACCOUNT", status: 404,
		want: []string{`"code":"admin_elsewhere"`, `"message":"the admin API is served on its own listener; see server.admin_addr"`}},
	{start: "bin/modelgate admin usage --account $ACCOUNT --from", want: []string{`"model": "sim-chat"`, `"model": "sim-embed"`}},
	{start: "bin/modelgate admin usage --account $ACCOUNT --model sim-chat --all", want: []string{`"model": "sim-chat"`, `"totals": {`}, check: checkOneModel},
	{start: "bin/modelgate admin accounts list ", want: []string{`"object": "list"`, `"email": "demo@modelgate.local"`}},
	{start: "bin/modelgate admin accounts list --email DEMO@modelgate.local", want: []string{`"email": "demo@modelgate.local"`, `"has_more": false`}},
	{start: "bin/modelgate admin accounts create --email dev@example.com --plan pro", want: []string{`"email": "dev@example.com"`, `"plan": "pro"`}},
	{start: "bin/modelgate admin keys create --account acct_… --name laptop --models sim-chat --zdr", want: []string{`"name": "laptop"`, `"zdr": true`, `"key": "sk-token-`, "\"models\": [\n    \"sim-chat\"\n  ]"}},
	{start: "bin/modelgate admin keys list --account acct_…", want: []string{`"name": "laptop"`, `"object": "list"`}},
	{start: "bin/modelgate admin keys revoke key_…", want: []string{`"name": "laptop"`, `"revoked_at": `}},
	{start: `curl -s http://127.0.0.1:8080/v1/models -H "Authorization: Bearer sk-token-…"`, status: 401, want: []string{`"code":"invalid_api_key"`, "revoked"}},
	{start: "bin/modelgate admin routes", want: []string{`"route": "sim-chat-a"`, `"available": true`}},
	// Plans, limits and credits
	{start: "bin/modelgate admin accounts create --email free@example.com", want: []string{`"plan": "free"`}},
	{start: "bin/modelgate admin keys create --account acct_… --name laptop  ", want: []string{`"key": "sk-token-`}},
	{start: "curl -s http://127.0.0.1:8080/v1/chat/completions -H \"Authorization: Bearer sk-token-…\"", status: 403,
		want: []string{`"type":"permission_error"`, `"code":"coding_agent_required"`, `"message":"coding agent required: this plan serves interactive coding clients, `}},
	{start: "bin/modelgate admin accounts credits acct_… --amount 25.00 --key topup-2026-11-22", want: []string{`"balance_usd": "25"`, `"added": true`}},
	{start: "bin/modelgate admin accounts quota acct_…", want: []string{`"plan": "free"`, `"balance_usd": "25"`}},
	{start: "bin/modelgate admin accounts plan acct_… --plan pro", want: []string{`"plan": "pro"`}},
	{start: "curl -s -X PATCH http://127.0.0.1:9465/admin/v1/keys/key_…", status: 200,
		want: []string{`"limits":{"budget":{"amount_usd":"12.5","period":"day"},"expires_at":"2099-12-31T00:00:00Z","rpm":60}`}},
	// Running for real
	{start: "bin/modelgate serve --config catalog.yaml", background: true, check: checkServing},
	{start: "kill -HUP <pid>", check: checkReloaded},
	// Run a cluster
	{start: "make cluster", skip: "starts a three-node demo cluster on fixed ports; cluster demo was run by hand, and " + clusterSkip},
	{start: "MODELGATE_ADMIN_TOKEN=<token> bin/modelgate cluster status", skip: clusterSkip},
	{start: "kill -9 $(cat data-cluster/node2.pid)", skip: clusterSkip},
	{start: "bin/modelgate cluster certs --out certs", skip: clusterSkip},
	{start: "bin/modelgate cluster init --data /var/lib/modelgate", skip: clusterSkip},
	{start: "MODELGATE_ADMIN_TOKEN=… bin/modelgate serve", skip: clusterSkip},
	{start: "bin/modelgate cluster join", skip: clusterSkip},
	{start: "bin/modelgate cluster promote 4", skip: clusterSkip},
	{start: "bin/modelgate cluster rebalance", skip: clusterSkip},
	{start: "bin/modelgate cluster drain 1", skip: clusterSkip},
	{start: "bin/modelgate cluster remove 4", skip: clusterSkip},
	// Endpoints
	{start: "curl -si http://127.0.0.1:8080/v1/chat/completions", status: 200, want: []string{"X-Modelgate-Cost: 0\r\n", "X-Request-Id: req_", `"model":"sim-chat"`}},
	{start: "curl -s http://127.0.0.1:8080/v1/generations/req_…", status: 200,
		want: []string{`"object":"generation"`, `"model":"sim-chat"`, `"status":200`, `"cost_usd":"0"`, `"output_tokens":16`}},
	{start: `curl -s http://127.0.0.1:8080/v1/key -H "x-api-key: $KEY"`, status: 200,
		want: []string{`"label":"demo"`, `"limit":null`, `"plan":"demo"`, `"credit_balance_usd":"0"`}},
	{start: "curl -s http://127.0.0.1:8080/v1/messages", status: 200, want: []string{`"type":"message"`, `"model":"sim-gemini"`}},
	{start: "curl -sN http://127.0.0.1:8080/v1/responses", status: 200, want: []string{"event: response.completed\n", `"model":"sim-messages"`}},
	{start: `curl -sN "http://127.0.0.1:8080/v1beta/models/sim-chat:streamGenerateContent?alt=sse"`, status: 200, want: []string{`data: {"candidates":`, `"modelVersion":"sim-chat"`}},
	// Auto models, fallback lists and route policies
	{start: "curl -si http://127.0.0.1:8080/v1/chat/completions", status: 200, want: []string{"X-Modelgate-Model: sim-chat\r\n", `"model":"sim-chat"`}},
	{start: "curl -s http://127.0.0.1:8080/v1/chat/completions", status: 200, want: []string{`"object":"chat.completion"`, `"model":"sim-messages"`}},
}

// TestReadmeCommandsWorkAsWritten: see the top of this file.
func TestReadmeCommandsWorkAsWritten(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's commands need %s: %v", tool, err)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	commands := readmeCommands(string(readme))
	r := startReadmeRun(t, root)
	r.checkCredentialsShape(t, string(readme))

	for i, cmd := range commands {
		if i >= len(readmeSteps) {
			t.Fatalf("README command %d has no step in readmeSteps: %s", i+1, cmd)
		}
		step := readmeSteps[i]
		if !strings.HasPrefix(cmd, step.start) {
			t.Fatalf("README command %d is\n  %s\nbut its step starts\n  %s", i+1, cmd, step.start)
		}
		if step.skip != "" {
			t.Logf("README command %d not run (%s): %s", i+1, step.skip, cmd)
			if step.check != nil { // checked without running it
				step.check(t, r, "")
			}
			continue
		}
		out := r.run(t, i+1, cmd, step)
		for _, w := range step.want {
			if !strings.Contains(out, w) {
				t.Fatalf("README command %d\n  %s\nanswered\n%s\nwithout %q", i+1, cmd, out, w)
			}
		}
		if step.check != nil {
			step.check(t, r, out)
		}
	}
	if len(commands) < len(readmeSteps) {
		t.Fatalf("readmeSteps has %d steps for %d README commands; step %d (%s) matches none", len(readmeSteps), len(commands),
			len(commands)+1, readmeSteps[len(commands)].start)
	}
}

// checkOneModel requires a usage selected by model to hold no other model's calls.
func checkOneModel(t *testing.T, _ *readmeRun, out string) {
	if strings.Contains(out, `"model": "sim-embed"`) || strings.Contains(out, `"next_cursor"`) {
		t.Fatalf("usage of sim-chat, every page as one, holds another model or a cursor:\n%s", out)
	}
}

// readmeCommands returns the commands of the ```sh blocks, in order: comment and blank lines
// dropped, a line ending in a backslash joined with the next as bash reads it.
func readmeCommands(readme string) []string {
	var cmds []string
	inBlock, cont := false, ""
	for _, line := range strings.Split(readme, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !inBlock:
			inBlock = trimmed == "```sh"
		case trimmed == "```":
			inBlock = false
		case cont == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")):
		case strings.HasSuffix(line, "\\"):
			cont += line + "\n"
		default:
			cmds = append(cmds, cont+line)
			cont = ""
		}
	}
	return cmds
}

// readmeRun is the bash session and the demo it talks to.
type readmeRun struct {
	dir, root  string
	addr       string              // the demo's listen address
	adminAddr  string              // the demo's admin listener
	serveAddr  string              // the addresses the README's serve command gets
	serveAdmin string              // (its --admin-addr)
	demoStdout *nodetest.LogBuffer // what `bin/modelgate demo` printed
	stdin      io.Writer           // bash's
	done       chan string         // bash's "__readme_done" lines
	found      map[string]string   // placeholder → what a command printed last
	servePID   string              // the README's serve command's process, and its log
	serveLog   string
	bgProcs    []int
}

var placeholders = []struct {
	text string
	re   *regexp.Regexp
}{
	{"acct_…", regexp.MustCompile(`"id":\s*"(acct_[0-9A-Za-z]{20})"`)},
	{"key_…", regexp.MustCompile(`"id":\s*"(key_[0-9A-Za-z]{20})"`)},
	{"sk-token-…", regexp.MustCompile(`"key":\s*"(sk-token-[0-9A-Za-z]{48})"`)},
	{"video_…", regexp.MustCompile(`"id":\s*"(video_[0-9A-Za-z]+)"`)},
	{"req_…", regexp.MustCompile(`(?i)\nX-Request-Id: (req_[0-9a-f]{24})\r?\n`)},
}

var curlStatusRe = regexp.MustCompile(`\n__curl_status (\d{3})\n$`)

// startReadmeRun builds bin/modelgate into a fresh directory, starts the demo there and a
// bash session beside it.
func startReadmeRun(t *testing.T, root string) *readmeRun {
	dir := t.TempDir()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	// Built as this test was (raceBuild): under make test, with the race detector, so it only
	// links what go vet -race and the tests compiled already.
	build := exec.Command(goBin, append(append([]string{"build"}, raceBuild...), "-o", filepath.Join(dir, "bin", "modelgate"), "./cmd/modelgate")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	r := &readmeRun{dir: dir, root: root, addr: testutil.FreeAddr(t), adminAddr: testutil.FreeAddr(t), serveAddr: testutil.FreeAddr(t),
		serveAdmin: testutil.FreeAddr(t), found: map[string]string{}}
	curlHome := filepath.Join(dir, ".readme")
	os.MkdirAll(curlHome, 0o700)
	os.WriteFile(filepath.Join(curlHome, ".curlrc"), []byte("write-out = \"\\n__curl_status %{http_code}\\n\"\n"), 0o600)
	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MODELGATE_") && !strings.HasPrefix(kv, "CURL_HOME=") {
			environ = append(environ, kv)
		}
	}
	// demoSimEnv: the credentials the demo catalog's routes name, for the serve step.
	environ = append(environ, "MODELGATE_ADDR="+r.addr, "MODELGATE_ADMIN_ADDR="+r.adminAddr, "CURL_HOME="+curlHome)
	environ = append(environ, demoSimEnv()...)

	demo := exec.Command(filepath.Join(dir, "bin", "modelgate"), "demo")
	demo.Dir, demo.Env = dir, environ
	r.demoStdout = &nodetest.LogBuffer{}
	demoLog := &nodetest.LogBuffer{}
	demo.Stdout, demo.Stderr = r.demoStdout, demoLog
	r.startProc(t, demo, "bin/modelgate demo", demoLog)
	testutil.WaitFor(t, "the demo to print its credentials", func() bool { return strings.Contains(r.demoStdout.String(), "\n  admin token: ") })
	// The operator's catalog of the README's serve command: the demo's, on the same simulator.
	if cat, err := os.ReadFile(filepath.Join(dir, "data", "demo-catalog.yaml")); err != nil || os.WriteFile(filepath.Join(dir, "catalog.yaml"), cat, 0o600) != nil {
		t.Fatalf("catalog.yaml: %v", err)
	}

	bash := exec.Command("bash", "--noprofile", "--norc")
	bash.Dir, bash.Env = dir, environ
	stdin, err := bash.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := bash.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	bashLog := &nodetest.LogBuffer{}
	bash.Stderr = bashLog
	r.stdin, r.done = stdin, make(chan string, 1)
	r.startProc(t, bash, "bash", bashLog)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "__readme_done ") {
				r.done <- sc.Text()
			}
		}
	}()
	t.Cleanup(func() {
		stdin.Close()
		for _, pid := range r.bgProcs {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return r
}

// startProc starts a process that is killed when the test ends, its output shown on failure.
func (r *readmeRun) startProc(t *testing.T, cmd *exec.Cmd, name string, log *nodetest.LogBuffer) {
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if t.Failed() {
			t.Logf("%s output:\n%s", name, log.String())
		}
	})
}

// run runs one command in the session and returns its output, the curl status line removed;
// the command must exit 0 and write nothing on stderr.
func (r *readmeRun) run(t *testing.T, n int, cmd string, step readmeStep) string {
	t.Helper()
	shown := cmd
	for _, p := range placeholders {
		if strings.Contains(cmd, p.text) {
			v := r.found[p.text]
			if v == "" {
				t.Fatalf("README command %d uses %s before any command printed one: %s", n, p.text, cmd)
			}
			cmd = strings.ReplaceAll(cmd, p.text, v)
		}
	}
	cmd = strings.NewReplacer("127.0.0.1:8080", r.addr, "127.0.0.1:9465", r.adminAddr, "0.0.0.0:8080", r.serveAddr, "10.0.0.1:9465", r.serveAdmin,
		"/var/lib/modelgate", "serve-data",
		"<pid>", r.servePID).Replace(cmd)
	outFile, errFile := filepath.Join(r.dir, ".readme", fmt.Sprint(n, ".out")), filepath.Join(r.dir, ".readme", fmt.Sprint(n, ".err"))
	// Braces keep the session's variables; stdin is not the script's; exec makes $! the
	// server's own pid.
	script := fmt.Sprintf("{ %s\n} </dev/null >%q 2>%q\necho \"__readme_done $?\"\n", cmd, outFile, errFile)
	if step.background {
		script = fmt.Sprintf("{ exec %s\n} </dev/null >%q 2>%q &\necho \"__readme_done $!\"\n", cmd, outFile, errFile)
	}
	if _, err := io.WriteString(r.stdin, script); err != nil {
		t.Fatal(err)
	}
	var result string
	select {
	case result = <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("README command %d did not finish in 30 s: %s", n, shown)
	}
	result = strings.TrimPrefix(result, "__readme_done ")
	if step.background {
		t.Logf("README command %d, in the background: %s", n, shown)
		var pid int
		fmt.Sscan(result, &pid)
		r.servePID, r.serveLog, r.bgProcs = result, errFile, append(r.bgProcs, pid)
		return ""
	}
	out, _ := os.ReadFile(outFile)
	errOut, _ := os.ReadFile(errFile)
	t.Logf("README command %d: %s", n, shown)
	if result != "0" || len(errOut) > 0 {
		t.Fatalf("README command %d\n  %s\nexited %s; stdout:\n%s\nstderr:\n%s", n, shown, result, out, errOut)
	}
	s := string(out)
	if m := curlStatusRe.FindStringSubmatch(s); m != nil || step.status != 0 {
		if m == nil || m[1] != fmt.Sprint(step.status) {
			t.Fatalf("README command %d\n  %s\nanswered %v, want HTTP %d:\n%s", n, shown, m, step.status, s)
		}
		s = s[:len(s)-len(m[0])]
	}
	for _, p := range placeholders {
		if m := p.re.FindAllStringSubmatch(s, -1); m != nil {
			r.found[p.text] = m[len(m)-1][1]
		}
	}
	return s
}

// checkMakeRun: `make run` is what the test runs itself: bin/modelgate demo, with ./data.
func checkMakeRun(t *testing.T, r *readmeRun, _ string) {
	mk, err := os.ReadFile(filepath.Join(r.root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^run: build\n\tMODELGATE_DATA=\$\$\{MODELGATE_DATA:-\$\(DATA\)\} .*\$\(BIN\)/modelgate demo$`).Match(mk) ||
		!strings.Contains(string(mk), "\nDATA     ?= ./data\n") {
		t.Fatalf("make run no longer runs $(BIN)/modelgate demo on ./data, as this test does")
	}
}

// checkCredentialsShape: demo-credentials.json has the fields the README shows, and the
// demo printed its account.
func (r *readmeRun) checkCredentialsShape(t *testing.T, readme string) {
	m := regexp.MustCompile("(?s)```json\n(\\{\"api_key\".*?)\n```").FindStringSubmatch(readme)
	if m == nil {
		t.Fatal("the README no longer shows demo-credentials.json")
	}
	var shown, saved map[string]any
	b, _ := os.ReadFile(filepath.Join(r.dir, "data", "demo-credentials.json"))
	if err := json.Unmarshal([]byte(m[1]), &shown); err != nil {
		t.Fatalf("the README's demo-credentials.json: %v", err)
	}
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	var a, c []string
	for k := range shown {
		a = append(a, k)
	}
	for k := range saved {
		c = append(c, k)
	}
	slices.Sort(a)
	slices.Sort(c)
	if !slices.Equal(a, c) {
		t.Fatalf("the README shows demo-credentials.json with %v, the demo writes %v", a, c)
	}
	if acct, _ := saved["account_id"].(string); !strings.Contains(r.demoStdout.String(), "\n  account:     "+acct+"\n") || acct == "" {
		t.Fatalf("the demo did not print its account %q:\n%s", acct, r.demoStdout.String())
	}
}

// checkImageServed: the image's url is served by the gateway.
func checkImageServed(t *testing.T, r *readmeRun, out string) {
	var img struct {
		Data []struct {
			URL string `json:"url"`
		} `json:"data"`
	}
	if json.Unmarshal([]byte(out), &img) != nil || len(img.Data) != 1 || !strings.HasPrefix(img.Data[0].URL, "http://"+r.addr+"/assets/gen/") {
		t.Fatalf("image answer %s", out)
	}
	resp, err := http.Get(img.Data[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") {
		t.Fatalf("GET %s: %d %s", img.Data[0].URL, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}

// checkServing: the README's serve command serves the operator's catalog (the test puts the
// demo's there) on the address it names, and its admin API on the other (asking for the
// token), never on the first.
func checkServing(t *testing.T, r *readmeRun, _ string) {
	testutil.WaitFor(t, "serve to answer /healthz on "+r.serveAddr, func() bool {
		resp, err := http.Get("http://" + r.serveAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == 200
	})
	for _, c := range []struct {
		addr   string
		status int
		code   string
	}{{r.serveAdmin, 401, `"code":"invalid_admin_token"`}, {r.serveAddr, 404, `"code":"admin_elsewhere"`}} {
		resp, err := http.Get("http://" + c.addr + "/admin/v1/routes")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(raw), c.code) {
			t.Fatalf("GET http://%s/admin/v1/routes: %d %s, want %d %s", c.addr, resp.StatusCode, raw, c.status, c.code)
		}
	}
}

// checkReloaded: SIGHUP made serve reload its catalog.
func checkReloaded(t *testing.T, r *readmeRun, _ string) {
	testutil.WaitFor(t, "serve to log its catalog reload", func() bool {
		b, _ := os.ReadFile(r.serveLog)
		return strings.Contains(string(b), `"msg":"catalog reloaded"`)
	})
}
