package faultproxy

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// echoServer is the real TCP target behind a proxy: it echoes every byte and counts the
// connections and bytes that reached it.
type echoServer struct {
	ln       net.Listener
	accepted atomic.Int64
	received atomic.Int64

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startEcho(t *testing.T) *echoServer {
	t.Helper()
	s := newEcho(t)
	t.Cleanup(s.close)
	return s
}

// newEcho starts an echo server the caller closes.
func newEcho(t *testing.T) *echoServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln}
	s.wg.Add(1)
	go s.serve()
	return s
}

func (s *echoServer) addr() string { return s.ln.Addr().String() }

func (s *echoServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.accepted.Add(1)
		s.mu.Lock()
		s.conns = append(s.conns, c)
		s.mu.Unlock()
		s.wg.Add(1)
		go s.echo(c)
	}
}

func (s *echoServer) echo(c net.Conn) {
	defer s.wg.Done()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		s.received.Add(int64(n))
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				_ = c.(*net.TCPConn).CloseWrite()
			}
			return
		}
	}
}

func (s *echoServer) close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func startProxy(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// faultyLink is a connection through a proxy under the faults set puts, to an echo server.
func faultyLink(t *testing.T, set func(*Proxy)) (*echoServer, *Proxy, net.Conn) {
	t.Helper()
	echo := startEcho(t)
	p := startProxy(t, echo.addr())
	set(p)
	return echo, p, dial(t, p.Addr())
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func send(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := c.Write([]byte(s)); err != nil {
		t.Fatalf("write %q: %v", s, err)
	}
}

// readN reads exactly n bytes or fails with the read's error, waiting at most within.
func readN(c net.Conn, n int, within time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(within))
	defer func() { _ = c.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, n)
	_, err := io.ReadFull(c, buf)
	return string(buf), err
}

// outcome is how a read through a faulty link ended.
type outcome string

const (
	gotEcho  outcome = "echo"
	timedOut outcome = "timeout" // a hung link
	cutOff   outcome = "closed"  // EOF or reset: a dropped link
)

func readOutcome(t *testing.T, c net.Conn, want string, within time.Duration) outcome {
	t.Helper()
	got, err := readN(c, len(want), within)
	switch {
	case err == nil && got == want:
		return gotEcho
	case err == nil:
		t.Fatalf("read %q, want %q", got, want)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return timedOut
	}
	return cutOff
}

// mustEcho sends s on c and fails the test unless its echo comes back within a second.
func mustEcho(t *testing.T, c net.Conn, s, stage string) {
	t.Helper()
	send(t, c, s)
	if got := readOutcome(t, c, s, time.Second); got != gotEcho {
		t.Fatalf("%s: %s, want %s", stage, got, gotEcho)
	}
}

// pingOutcome dials addr, sends "ping" and reads the echo. A dropped link may already refuse
// the dial (the proxy's reset can beat the handshake's end) or the write: both are cutOff.
func pingOutcome(t *testing.T, addr string, within time.Duration) outcome {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return cutOff
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Write([]byte("ping")); err != nil {
		return cutOff
	}
	return readOutcome(t, c, "ping", within)
}

// eventually polls cond for up to two seconds; counters settle a moment after the bytes move.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if cond() {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return cond()
}

func wantStats(t *testing.T, p *Proxy, want Stats) {
	t.Helper()
	if !eventually(func() bool { return p.Stats() == want }) {
		t.Fatalf("stats = %+v, want %+v", p.Stats(), want)
	}
}
