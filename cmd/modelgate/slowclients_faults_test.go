//go:build faults

package main

// Slow and greedy clients against a real gateway process (bin/modelgate serve, built by the
// test as the kill test builds it) over real sockets (docs/running.md, "Slow and greedy
// clients"): a thousand connections that send headers and no body, fifty authenticated
// bodies stalled just short of 32 MiB, and one address's connections past its cap. The
// gateway's memory is read from /proc/<pid>/status.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const sgSimKeyEnv = "SLOWTEST_SIM_KEY"

// sgCatalog: one chat model on a simulator route that answers after 20 ms (so an ordinary
// call's latency is the upstream's, not the scheduler's noise), a plan without per-minute
// caps, and the phase's edge settings in place of {{EDGE}}.
const sgCatalog = `server:
  max_body_bytes: 33554432
  first_byte_timeout: 10s
  {{EDGE}}
models:
  - id: sg-chat
    kind: chat
    max_output_tokens: 100
    routes: [{id: sg-a, format: chat, base_url: "{{SIM}}/r/a/v1", upstream_model: sim-model, credential_env: ` + sgSimKeyEnv + `}]
plans:
  - {name: sg-open, window_requests: 100000000, window: 720h, allow_automated: true}
`

// TestFaultSlowAndGreedyClients runs the three attacks, each on a fresh gateway.
func TestFaultSlowAndGreedyClients(t *testing.T) {
	began := time.Now()
	gatewayBin, simBin := ktBuild(t)
	sgRaiseFileLimit(t, 4096)
	_, simBase := ktStart(t, "modelgate-sim", simBin, nil, regexp.MustCompile(`modelgate-sim listening.* base_url=(http://\S+)`), "--addr", "127.0.0.1:0")
	sim := &ktClient{t: t, base: simBase, http: &http.Client{Timeout: 10 * time.Second}}
	if status, raw, err := sim.do(http.MethodPut, "/_sim/routes/a", "", map[string]any{"first_byte_ms": 20}); err != nil || status != 200 {
		t.Fatalf("steer the simulator: %d %s %v", status, raw, err)
	}
	t.Run("headers and no body from 1000 connections", func(t *testing.T) { sgHeadersOnly(t, gatewayBin, simBase) })
	t.Run("50 bodies stalled short of 32 MiB", func(t *testing.T) { sgStalledBodies(t, gatewayBin, simBase) })
	t.Run("connections past their address's cap", func(t *testing.T) { sgConnCap(t, gatewayBin, simBase) })
	t.Logf("all three attacks in %v (the build included)", time.Since(began).Round(time.Second))
}

// sgHeadersOnly: 1000 connections each send a key and Content-Length: 1000, and no body.
// Each is answered 408 and closed within body_timeout + 1 s; the gateway's memory grows by
// less than 64 MiB; ordinary calls meanwhile keep a p99 under 3× their p99 before.
func sgHeadersOnly(t *testing.T, bin, sim string) {
	const conns, bodyTimeout = 1000, 4 * time.Second
	g := sgStart(t, bin, sim, "body_timeout: 4s\n  max_conns_per_ip: 2000")
	g.latencies(t, 20, time.Time{}) // warm
	baseline := g.latencies(t, 150, time.Time{})
	mem := g.watchMemory(t)
	type outcome struct {
		status string
		closed time.Duration // from the headers sent to the connection's end
		err    error
	}
	outcomes := make([]outcome, conns)
	var wg, all sync.WaitGroup
	var first time.Time
	var mu sync.Mutex
	all.Add(conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", g.addr)
			if err != nil {
				outcomes[i].err = err
				all.Done()
				return
			}
			defer c.Close()
			sent := time.Now()
			mu.Lock()
			if first.IsZero() {
				first = sent
			}
			mu.Unlock()
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n", g.key)
			all.Done()
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(c)
			line, err := br.ReadString('\n')
			if err == nil {
				_, err = io.Copy(io.Discard, br) // to the connection's end
			}
			outcomes[i] = outcome{status: strings.TrimSpace(line), closed: time.Since(sent), err: err}
		}()
	}
	// Ordinary calls while the thousand wait (all sent), until half a second before the
	// first one's deadline.
	all.Wait()
	during := g.latencies(t, 40, first.Add(bodyTimeout-500*time.Millisecond))
	wg.Wait()
	growth := mem.stop()
	worst := time.Duration(0)
	for i, o := range outcomes {
		if o.err != nil || o.status != "HTTP/1.1 408 Request Timeout" {
			t.Fatalf("connection %d: %q, %v; want 408 and the connection closed", i, o.status, o.err)
		}
		worst = max(worst, o.closed)
	}
	if worst > bodyTimeout+time.Second {
		t.Errorf("the last connection closed %v after its headers, want within %v", worst, bodyTimeout+time.Second)
	}
	if growth >= 64<<20 {
		t.Errorf("the gateway's memory grew by %d MiB, want under 64", growth>>20)
	}
	p99Before, p99During := sgP99(baseline), sgP99(during)
	if p99During >= 3*p99Before {
		t.Errorf("ordinary calls' p99 %v during the attack (%d calls), want under 3× %v before", p99During, len(during), p99Before)
	}
	t.Logf("%d header-only connections: all 408 and closed, the last %v after its headers (body_timeout %v); memory +%.1f MiB; ordinary calls p99 %v before (%d), %v during (%d)",
		conns, worst.Round(time.Millisecond), bodyTimeout, float64(growth)/(1<<20), p99Before.Round(time.Millisecond), len(baseline),
		p99During.Round(time.Millisecond), len(during))
}

// sgStalledBodies: 50 authenticated bodies announced at 32 MiB each stop 4 KiB short. The
// bytes in flight (capped at 256 MiB) hold at most eight; the rest are refused 503 with
// Retry-After as their bodies arrive, the held ones get 408 at body_timeout, and the
// gateway's memory grows by less than the cap and 64 MiB.
func sgStalledBodies(t *testing.T, bin, sim string) {
	const (
		conns  = 50
		limit  = 256 << 20
		length = 32 << 20
		sent   = length - 4<<10
		slack  = 64 << 20
	)
	g := sgStart(t, bin, sim, "body_timeout: 10s\n  max_body_bytes_in_flight: 268435456")
	mem := g.watchMemory(t)
	type outcome struct {
		status, retryAfter string
		err                error
	}
	outcomes := make([]outcome, conns)
	var wg sync.WaitGroup
	piece := []byte(strings.Repeat("a", 64<<10))
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", g.addr)
			if err != nil {
				outcomes[i].err = err
				return
			}
			defer c.Close()
			fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", g.key, length)
			go func() { // the body, until it is all but sent or the gateway stops reading
				for left := sent; left > 0; left -= len(piece) {
					if _, err := c.Write(piece[:min(left, len(piece))]); err != nil {
						return
					}
				}
			}()
			c.SetReadDeadline(time.Now().Add(60 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				outcomes[i].err = err
				return
			}
			resp.Body.Close()
			outcomes[i] = outcome{status: resp.Status, retryAfter: resp.Header.Get("Retry-After")}
		}()
	}
	wg.Wait()
	growth := mem.stop()
	count := map[string]int{}
	for i, o := range outcomes {
		switch {
		case o.err != nil:
			t.Fatalf("connection %d: %v", i, o.err)
		case o.status == "503 Service Unavailable" && o.retryAfter == "1", o.status == "408 Request Timeout" && o.retryAfter == "":
			count[o.status]++
		default:
			t.Fatalf("connection %d: %s, Retry-After %q; want 503 with Retry-After: 1, or 408", i, o.status, o.retryAfter)
		}
	}
	if held := count["408 Request Timeout"]; held > limit/length || held+count["503 Service Unavailable"] != conns {
		t.Errorf("%v: want at most %d bodies held to their timeout, the rest refused", count, limit/length)
	}
	if growth >= limit+slack {
		t.Errorf("the gateway's memory grew by %d MiB, want under the cap (%d MiB) + %d MiB", growth>>20, limit>>20, slack>>20)
	}
	t.Logf("%d bodies of %d bytes stalled: %d held until body_timeout (408), %d refused 503 with Retry-After; memory +%.1f MiB (cap %d MiB)",
		conns, sent, count["408 Request Timeout"], count["503 Service Unavailable"], float64(growth)/(1<<20), limit>>20)
}

// sgConnCap: with max_conns_per_ip 16, sixteen connections are served; the seventeenth
// request is answered 429 with Retry-After in the chat envelope and its connection closed;
// with twice the cap open, a new connection is closed at accept without an answer; once
// they close, the address is served again. The metrics count both refusals.
func sgConnCap(t *testing.T, bin, sim string) {
	const capacity = 16
	g := sgStart(t, bin, sim, "max_conns_per_ip: 16")
	// From an address of its own: the test's other clients (127.0.0.1) hold connections too.
	from := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := from.Dial("tcp", g.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	try := func(c net.Conn, br *bufio.Reader) (*http.Response, string, error) {
		body := `{"model":"sg-chat","messages":[{"role":"user","content":"hi"}]}`
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", g.key, len(body), body)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return nil, "", err
		}
		raw, err := io.ReadAll(resp.Body)
		return resp, string(raw), err
	}
	call := func(c net.Conn, br *bufio.Reader) (*http.Response, string) {
		resp, raw, err := try(c, br)
		if err != nil {
			t.Fatal(err)
		}
		return resp, raw
	}
	var open []net.Conn
	for i := range capacity {
		c, br := dial()
		if resp, raw := call(c, br); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("connection %d of %d: %d %s, closed %v", i+1, capacity, resp.StatusCode, raw, resp.Close)
		}
		open = append(open, c)
	}
	c, br := dial()
	resp, raw := call(c, br)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || !resp.Close ||
		!strings.Contains(raw, `"code":"too_many_connections"`) || !strings.Contains(raw, `"type":"rate_limit_error"`) {
		t.Fatalf("connection %d: %d, Retry-After %q, closed %v, %s; want 429 too_many_connections, Retry-After 1, closed",
			capacity+1, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Close, raw)
	}
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after the 429: %d bytes, %v; want the connection closed", n, err)
	}
	for range capacity { // silent, over the cap, counted: twice the cap open
		c, _ := dial()
		open = append(open, c)
	}
	// Once the silent ones are accepted and counted, a new connection is closed at accept
	// (one accepted before that is let go and tried again). The probe waits long enough for
	// a busy gateway to get to it: one that gave up too soon and was closed after would be
	// counted and tried again, a second refusal in the count.
	ktWaitFor(t, "a connection at twice the cap closed at accept", func() bool {
		c, br := dial()
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := br.Read(make([]byte, 1))
		return n == 0 && err == io.EOF
	})
	for reason, want := range map[string]float64{"conns_per_ip": 1, "conns_per_ip_closed": 1} {
		if got := sgMetric(t, g.metrics, `modelgate_edge_refusals_total{reason="`+reason+`"}`); got != want {
			t.Errorf("modelgate_edge_refusals_total{reason=%q} %v, want %v", reason, got, want)
		}
	}
	for _, c := range open {
		c.Close()
	}
	ktWaitFor(t, "the address served again", func() bool {
		c, br := dial()
		defer c.Close()
		resp, _, err := try(c, br)
		return err == nil && resp.StatusCode == 200
	})
	t.Logf("max_conns_per_ip %d: %d served, the next 429 with Retry-After and closed, at %d open a new one closed at accept",
		capacity, capacity, 2*capacity)
}

// sgGateway is one gateway process of the test, with an account's key.
type sgGateway struct {
	proc          *ktProc
	addr, metrics string
	key           string
	c             *ktClient
}

func sgStart(t *testing.T, bin, sim, edge string) *sgGateway {
	t.Helper()
	dir := t.TempDir()
	cat := strings.NewReplacer("{{SIM}}", sim, "{{EDGE}}", edge).Replace(sgCatalog)
	if err := os.WriteFile(dir+"/catalog.yaml", []byte(cat), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MODELGATE_ADMIN_TOKEN=" + ktAdminToken, sgSimKeyEnv + "=sim-secret", "MODELGATE_LOG_LEVEL=info"}
	re := regexp.MustCompile(`"msg":"modelgate serving".*"url":"(http://[^"]+)","admin":"(http://[^"]+)","metrics":"(http://[^"]+)"`)
	p, urls := ktStart(t, "modelgate serve", bin, env, re, "serve", "--config", dir+"/catalog.yaml", "--data", dir+"/data",
		"--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")
	parts := strings.Fields(urls) // the public, admin and metrics URLs
	base, admin, metrics := parts[0], parts[1], parts[2]
	g := &sgGateway{proc: p, addr: strings.TrimPrefix(base, "http://"), metrics: metrics,
		c: &ktClient{t: t, base: base, adminBase: admin, http: &http.Client{Timeout: 10 * time.Second}}}
	g.c.waitHealthy()
	var acct struct{ ID string }
	g.c.admin(http.MethodPost, "/accounts", map[string]string{"email": "slow@test.local", "plan": "sg-open"}, 201, &acct)
	var key struct {
		Secret string `json:"key"`
	}
	g.c.admin(http.MethodPost, "/accounts/"+acct.ID+"/keys", map[string]string{"name": "slow"}, 201, &key)
	g.key = key.Secret
	return g
}

// latencies makes n ordinary calls one after another (and more until until, when set) and
// returns their latencies.
func (g *sgGateway) latencies(t *testing.T, n int, until time.Time) []time.Duration {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	var out []time.Duration
	for len(out) < n || time.Now().Before(until) {
		began := time.Now()
		req, _ := http.NewRequest(http.MethodPost, "http://"+g.addr+"/v1/chat/completions",
			strings.NewReader(`{"model":"sg-chat","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer "+g.key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("an ordinary call: %v", err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("an ordinary call: %d", resp.StatusCode)
		}
		out = append(out, time.Since(began))
	}
	return out
}

// sgMemory follows a process's resident memory from now: its growth is the highest it
// reached (polled, or VmHWM once it passed the peak before) less what it held at the start.
type sgMemory struct {
	t                 *testing.T
	pid               int
	start, startPeak  int64
	highest           int64
	stopped, finished chan struct{}
}

func (g *sgGateway) watchMemory(t *testing.T) *sgMemory {
	m := &sgMemory{t: t, pid: g.proc.cmd.Process.Pid, stopped: make(chan struct{}), finished: make(chan struct{})}
	m.start, m.startPeak = sgStatus(t, m.pid)
	m.highest = m.start
	go func() {
		defer close(m.finished)
		for {
			select {
			case <-m.stopped:
				return
			case <-time.After(20 * time.Millisecond):
			}
			rss, _ := sgStatus(t, m.pid)
			m.highest = max(m.highest, rss)
		}
	}()
	return m
}

func (m *sgMemory) stop() int64 {
	close(m.stopped)
	<-m.finished
	rss, peak := sgStatus(m.t, m.pid)
	highest := max(m.highest, rss)
	if peak > m.startPeak {
		highest = max(highest, peak)
	}
	return highest - m.start
}

// sgStatus reads VmRSS and VmHWM of /proc/<pid>/status, in bytes.
func sgStatus(t *testing.T, pid int) (rss, hwm int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb << 10
		case "VmHWM:":
			hwm = kb << 10
		}
	}
	return rss, hwm
}

// sgP99 is the 99th percentile of ds.
func sgP99(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*99/100)]
}

// sgMetric reads one sample of the gateway's metrics (0 when absent).
func sgMetric(t *testing.T, url, sample string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return 0
}

// sgRaiseFileLimit lifts the soft limit on open files to at least n (the gateway, started
// after, inherits it): a thousand connections are two thousand descriptors on one machine.
func sgRaiseFileLimit(t *testing.T, n uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		t.Skipf("the hard limit on open files is %d, under the %d the test needs", lim.Max, n)
	}
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
}
