package clustertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)

// proc is a node's process; its output is kept for failure reports and watched for the
// line saying it serves.
type proc struct {
	name    string
	cmd     *exec.Cmd
	logs    *logBuf
	done    chan struct{} // closed when Wait returned
	waitErr error         // Wait's error, after done
}

func startProc(bin, name string, env []string, args ...string) (*proc, error) {
	return startCmd(exec.Command(bin, args...), name, env)
}

// startCmd starts cmd as a node's process (`ip netns exec` execs the node in place, so
// signals reach the node itself).
func startCmd(cmd *exec.Cmd, name string, env []string) (*proc, error) {
	p := &proc{name: name, cmd: cmd, logs: &logBuf{serving: make(chan struct{})}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.logs
	p.cmd.Stderr = p.logs
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) waitServing(d time.Duration) error {
	select {
	case <-p.logs.serving:
		return nil
	case <-p.done:
		return fmt.Errorf("%s exited before serving (%v):\n%s", p.name, p.waitErr, p.logs.tail())
	case <-time.After(d):
		return fmt.Errorf("%s did not serve within %s:\n%s", p.name, d, p.logs.tail())
	}
}

func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

func (p *proc) signal(s syscall.Signal) {
	if p.running() {
		p.cmd.Process.Signal(s)
	}
}

// kill sends SIGKILL (a stopped process dies too) and waits until it is gone.
func (p *proc) kill() {
	if !p.running() {
		return
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// logBuf keeps a process's output (up to 4 MiB) and closes serving at the line
// `modelgate serving`.
type logBuf struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	serving chan struct{}
	seen    bool
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.Len() < 4<<20 {
		l.buf.Write(p)
	}
	if !l.seen && strings.Contains(l.buf.String(), `"msg":"modelgate serving"`) {
		l.seen = true
		close(l.serving)
	}
	return len(p), nil
}

// LogDirEnv names a directory where each node process's whole log (its first 4 MiB) is
// written when it ends, for reading what a fault run did (the tail alone is printed on a
// failure).
const LogDirEnv = "CLUSTERTEST_LOG_DIR"

// keep writes the log to LogDirEnv's directory, when set, as node<id>-<unix ns>.log.
func (l *logBuf) keep(id uint64) {
	dir := os.Getenv(LogDirEnv)
	if dir == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("node%d-%d.log", id, time.Now().UnixNano())), l.buf.Bytes(), 0o600)
}

// count is how many times s occurs in the output kept.
func (l *logBuf) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

func (l *logBuf) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.buf.String()
	if len(s) > 6000 {
		s = "…" + s[len(s)-6000:]
	}
	return s
}
