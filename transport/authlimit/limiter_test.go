package authlimit

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelgate/modelgate/transport/metrics"
)

// step is one moment of a limiter's table: at offset from the start, fails failed checks from
// addr, then a check of whether addr is refused.
type step struct {
	at    time.Duration
	addr  string
	fails int
	wait  time.Duration // Wait's answer after the failures
}

// TestLimiterRefusesAnAddressPastItsFailures: the penalty starts with the failure that brings
// the last minute's estimate to the limit, refuses every attempt of that network (an IPv6 /64)
// until it ends, touches no other address, and counting starts afresh after it.
func TestLimiterRefusesAnAddressPastItsFailures(t *testing.T) {
	const a, b = "203.0.113.5", "198.51.100.9"
	cases := []struct {
		name  string
		limit int
		steps []step
	}{
		{"the 30th failure starts the penalty, the 29th does not", 30, []step{
			{0, a, 29, 0},
			{time.Second, a, 1, time.Minute},
			{2 * time.Second, a, 0, 59 * time.Second},
			{2 * time.Second, b, 0, 0},
		}},
		{"failures during the penalty neither count nor extend it", 3, []step{
			{0, a, 3, time.Minute},
			{30 * time.Second, a, 50, 30 * time.Second},
			{time.Minute, a, 0, 0},
			{time.Minute, a, 2, 0},
			{time.Minute + time.Second, a, 1, time.Minute},
		}},
		{"the previous minute counts in the share of it the last 60 s still cover", 30, []step{
			{0, a, 20, 0},
			// At 70 s: the previous minute (0–60 s) weighs 50/60, 16.67 failures; 13 more make
			// 29.67, the 14th 30.67.
			{70 * time.Second, a, 13, 0},
			{70 * time.Second, a, 1, time.Minute},
		}},
		{"a minute apart, two bursts under the limit do not add up", 30, []step{
			{0, a, 29, 0},
			{2 * time.Minute, a, 29, 0},
		}},
		{"the same burst at the minute's edge does", 30, []step{
			{0, a, 1, 0},
			{59 * time.Second, a, 28, 0},
			// At 61 s the previous minute (29) weighs 59/60: 28.52 left, the 2nd failure reaches 30.
			{61 * time.Second, a, 1, 0},
			{61 * time.Second, a, 1, time.Minute},
		}},
		{"an IPv6 /64 is one client", 2, []step{
			{0, "2001:db8:1:2::1", 1, 0},
			{0, "2001:db8:1:2::ffff", 1, time.Minute},
			{0, "2001:db8:1:2:abcd::9", 0, time.Minute},
			{0, "2001:db8:1:3::1", 0, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
			now := start
			l := New(func() Settings { return Settings{PerMinute: c.limit, Penalty: time.Minute} }, nil)
			l.now = func() time.Time { return now }
			for i, s := range c.steps {
				now = start.Add(s.at)
				r := from(s.addr)
				for range s.fails {
					l.Failed(r, APIKey)
				}
				if got := l.Wait(r, APIKey); got != s.wait {
					t.Fatalf("step %d (%v, %s): wait %v, want %v", i, s.at, s.addr, got, s.wait)
				}
			}
		})
	}
}

// TestLimiterSettingsAreReadAtEachCheck: a reload's new limit and penalty apply to the next
// failure; zero settings (a catalog built in code) are the catalog's defaults, 30 and 1m.
func TestLimiterSettingsAreReadAtEachCheck(t *testing.T) {
	set := Settings{}
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	l := New(func() Settings { return set }, nil)
	l.now = func() time.Time { return now }
	r := from("203.0.113.5")
	for range 29 {
		l.Failed(r, APIKey)
	}
	if w := l.Wait(r, APIKey); w != 0 {
		t.Fatalf("29 failures under the default 30: wait %v", w)
	}
	l.Failed(r, APIKey)
	if w := l.Wait(r, APIKey); w != time.Minute {
		t.Fatalf("30 failures under the default 30: wait %v, want 1m", w)
	}
	other := from("203.0.113.6")
	set = Settings{PerMinute: 2, Penalty: 5 * time.Minute}
	l.Failed(other, Session)
	l.Failed(other, Session)
	if w := l.Wait(other, Session); w != 5*time.Minute {
		t.Fatalf("after the reload: wait %v, want 5m", w)
	}
}

// TestLimiterCountsFailuresAndRefusalsByKind: modelgate_auth_failures_total and
// modelgate_auth_refusals_total, by kind; a nil Limiter refuses and counts nothing.
func TestLimiterCountsFailuresAndRefusalsByKind(t *testing.T) {
	m := metrics.New()
	l := New(func() Settings { return Settings{PerMinute: 2, Penalty: time.Minute} }, m)
	r := from("203.0.113.5")
	l.Failed(r, AdminToken)
	l.Failed(r, Session)
	l.Wait(r, APIKey)
	l.Wait(r, APIKey)
	l.Wait(r, Password)
	want := `modelgate_auth_failures_total{kind="admin_token"} 1
modelgate_auth_failures_total{kind="session"} 1
modelgate_auth_refusals_total{kind="api_key"} 2
modelgate_auth_refusals_total{kind="password"} 1
`
	if got := counters(t, m, "modelgate_auth_failures_total", "modelgate_auth_refusals_total"); got != want {
		t.Fatalf("counters\n%s\nwant\n%s", got, want)
	}
	var none *Limiter
	none.Failed(r, APIKey)
	if w := none.Wait(r, APIKey); w != 0 {
		t.Fatalf("a nil Limiter refused: %v", w)
	}
}

// TestLimiterMemoryIsBounded: past maxClients the idle clients go first, then others down
// to nine tenths of the cap; a client being refused is kept while others can go.
func TestLimiterMemoryIsBounded(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	l := New(func() Settings { return Settings{PerMinute: 1, Penalty: time.Hour} }, nil)
	l.now = func() time.Time { return now }
	refused := from("198.51.100.1")
	l.Failed(refused, APIKey)
	for i := range maxClients - 1 {
		l.fail(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32))
	}
	if n := l.tracked(); n != maxClients {
		t.Fatalf("%d clients tracked, want %d", n, maxClients)
	}
	now = now.Add(90 * time.Minute) // every penalty over, no failure since: all idle
	l.Failed(from("198.51.100.2"), APIKey)
	if n := l.tracked(); n != 1 {
		t.Fatalf("after the idle ones went: %d clients tracked, want 1 (the new one)", n)
	}

	l = New(func() Settings { return Settings{PerMinute: 1000, Penalty: time.Hour} }, nil)
	l.now = func() time.Time { return now }
	l.fail(netip.MustParsePrefix("198.51.100.1/32"))
	l.penalize(l.clients[netip.MustParsePrefix("198.51.100.1/32")], now.Add(time.Hour))
	for i := range maxClients - 1 {
		l.fail(netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32))
	}
	l.Failed(from("198.51.100.2"), APIKey) // none idle: down to nine tenths, the refused one kept
	if n := l.tracked(); n != maxClients*9/10+1 {
		t.Fatalf("%d clients tracked, want %d", n, maxClients*9/10+1)
	}
	if w := l.Wait(refused, APIKey); w != time.Hour {
		t.Fatalf("the refused client was dropped: wait %v", w)
	}
}

// TestRefuse: 429, Retry-After in whole seconds rounded up, the code and message in the
// surface's envelope.
func TestRefuse(t *testing.T) {
	for _, c := range []struct {
		wait  time.Duration
		after string
	}{{time.Minute, "60"}, {59*time.Second + time.Millisecond, "60"}, {time.Millisecond, "1"}} {
		w := httptest.NewRecorder()
		var got string
		Refuse(w, c.wait, func(w http.ResponseWriter, status int, typ, code, param, msg string) {
			w.WriteHeader(status)
			got = fmt.Sprintf("%s %s %q %s", typ, code, param, msg)
		})
		want := `rate_limit_error too_many_auth_failures "" too many failed authentication attempts from this address; try again in ` + c.after + " seconds"
		if w.Code != 429 || w.Header().Get("Retry-After") != c.after || got != want {
			t.Errorf("%v: %d %q %s", c.wait, w.Code, w.Header().Get("Retry-After"), got)
		}
	}
}

func from(addr string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = netip.AddrPortFrom(netip.MustParseAddr(addr), 40000).String()
	return r
}

// counters lists the named counters' series as name{label="value"} count, one a line.
func counters(t *testing.T, m *metrics.Metrics, names ...string) string {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, f := range families {
		if !slices.Contains(names, f.GetName()) {
			continue
		}
		for _, s := range f.GetMetric() {
			var labels []string
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			fmt.Fprintf(&b, "%s{%s} %v\n", f.GetName(), strings.Join(labels, ","), s.GetCounter().GetValue())
		}
	}
	return b.String()
}
