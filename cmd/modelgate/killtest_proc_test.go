package main

// The real processes of the kill -9 tests: the gateway binary (modelgate serve) and the
// standalone simulator (modelgate-sim), built by the test, and an HTTP client for them.

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelgate/modelgate/codec/money"
)

// ktProc is a child process whose stderr is kept (for failure reports) and scanned for the
// address it listens on.
type ktProc struct {
	name string
	cmd  *exec.Cmd
	logs *ktLog
	done chan struct{} // closed when Wait returned
	err  error         // Wait's error, after done
}

// ktLog collects a child's stderr and reports the first match of a pattern (its submatches,
// space-separated).
type ktLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	line  []byte
	re    *regexp.Regexp
	found chan string
	sent  bool
}

func (l *ktLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() < 4<<20 {
		l.buf.Write(p)
	}
	for _, b := range p {
		if b != '\n' {
			l.line = append(l.line, b)
			continue
		}
		if !l.sent {
			if m := l.re.FindSubmatch(l.line); m != nil {
				l.sent = true
				l.found <- string(bytes.Join(m[1:], []byte(" ")))
			}
		}
		l.line = l.line[:0]
	}
	return len(p), nil
}

func (l *ktLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if len(s) > 4000 {
		s = "…" + s[len(s)-4000:]
	}
	return s
}

// ktStart starts bin with args and waits until its stderr shows the addresses (the
// submatches of addrRe, space-separated).
func ktStart(t *testing.T, name, bin string, env []string, addrRe *regexp.Regexp, args ...string) (*ktProc, string) {
	t.Helper()
	p := &ktProc{name: name, cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.logs = &ktLog{re: addrRe, found: make(chan string, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.logs
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.logs.tail())
		}
	})
	select {
	case addr := <-p.logs.found:
		return p, addr
	case <-p.done:
		t.Fatalf("%s exited before listening (%v):\n%s", name, p.err, p.logs.tail())
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not report its address in 15 s:\n%s", name, p.logs.tail())
	}
	return nil, ""
}

// kill sends SIGKILL (if still running) and waits for the process to be gone.
func (p *ktProc) kill() {
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

func ktModuleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}

// ktBuild builds modelgate and modelgate-sim into a temporary directory, as this test was
// built (raceBuild: with the race detector under make test, so it links what was compiled;
// buildTags: with the fault points under make test-faults).
func ktBuild(t *testing.T) (gateway, sim string) {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out := t.TempDir()
	args := append(append(append([]string{"build"}, raceBuild...), buildTags...), "-o", out+string(filepath.Separator), "./cmd/modelgate", "./cmd/modelgate-sim")
	cmd := exec.Command(goBin, args...)
	cmd.Dir = ktModuleRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return filepath.Join(out, "modelgate"), filepath.Join(out, "modelgate-sim")
}

// ktClient talks to one running gateway: its public port at base, its admin listener at
// adminBase.
type ktClient struct {
	t         *testing.T
	base      string
	adminBase string
	http      *http.Client
}

// do sends a JSON request to the public port; it returns the status and body, or the
// transport error.
func (c *ktClient) do(method, path, bearer string, body any) (int, []byte, error) {
	return c.send(c.base, method, path, bearer, body)
}

// doAdmin is do to the admin listener.
func (c *ktClient) doAdmin(method, path, bearer string, body any) (int, []byte, error) {
	return c.send(c.adminBase, method, path, bearer, body)
}

func (c *ktClient) send(base, method, path, bearer string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, raw, err
	}
	return resp.StatusCode, raw, nil
}

// admin sends an admin request that must answer want, and decodes the answer into out.
func (c *ktClient) admin(method, path string, body any, want int, out any) {
	c.t.Helper()
	status, raw, err := c.doAdmin(method, "/admin/v1"+path, ktAdminToken, body)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		c.t.Fatalf("%s %s: %d %s, want %d", method, path, status, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: %v in %s", method, path, err, raw)
		}
	}
}

func (c *ktClient) waitHealthy() {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, err := c.do(http.MethodGet, "/healthz", "", nil)
		if err == nil && status == 200 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("/healthz: %d %v", status, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ktAmount parses an exact decimal USD amount, negative ones included.
func ktAmount(t *testing.T, s string) money.Amount {
	t.Helper()
	neg := strings.HasPrefix(s, "-")
	a, err := money.Parse(strings.TrimPrefix(s, "-"))
	if err != nil {
		t.Fatalf("amount %q: %v", s, err)
	}
	if neg {
		return -a
	}
	return a
}

// ktWaitFor polls cond every 10 ms for up to 10 s.
func ktWaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
