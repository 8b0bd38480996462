package faultproxy

import (
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"
	"time"
)

const hangWait = 300 * time.Millisecond // how long a read waits before calling a link hung

func TestProxyAppliesTheFaultOfEachDirection(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Proxy)
		want outcome
		// what reached the echo server
		targetConns, targetBytes int64
		stats                    Stats
	}{
		{"pass", func(*Proxy) {}, gotEcho, 1, 4,
			Stats{Accepted: 1, Open: 1, Forwarded: [2]int64{4, 4}}},
		{"delay", func(p *Proxy) { p.Set(Delay(20 * time.Millisecond)) }, gotEcho, 1, 4,
			Stats{Accepted: 1, Open: 1, Forwarded: [2]int64{4, 4}}},
		{"drop", func(p *Proxy) { p.Set(Drop) }, cutOff, 0, 0,
			Stats{Accepted: 1}},
		{"one-way drop drops the connection", func(p *Proxy) { p.SetOneWay(TargetToClient, Drop) }, cutOff, 0, 0,
			Stats{Accepted: 1}},
		{"blackhole never dials the target", func(p *Proxy) { p.Set(Blackhole) }, timedOut, 0, 0,
			Stats{Accepted: 1, Open: 1, Discarded: [2]int64{4, 0}}},
		{"blackhole client→target", func(p *Proxy) { p.SetOneWay(ClientToTarget, Blackhole) }, timedOut, 1, 0,
			Stats{Accepted: 1, Open: 1, Discarded: [2]int64{4, 0}}},
		{"blackhole target→client", func(p *Proxy) { p.SetOneWay(TargetToClient, Blackhole) }, timedOut, 1, 4,
			Stats{Accepted: 1, Open: 1, Forwarded: [2]int64{4, 0}, Discarded: [2]int64{0, 4}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			echo := startEcho(t)
			p := startProxy(t, echo.addr())
			tc.set(p)
			wait := hangWait
			if tc.want == gotEcho {
				wait = 2 * time.Second // a slow machine is not a hung link
			}
			if got := pingOutcome(t, p.Addr(), wait); got != tc.want {
				t.Fatalf("read = %s, want %s", got, tc.want)
			}
			wantStats(t, p, tc.stats)
			if got := echo.accepted.Load(); got != tc.targetConns {
				t.Errorf("target accepted %d connections, want %d", got, tc.targetConns)
			}
			if got := echo.received.Load(); got != tc.targetBytes {
				t.Errorf("target received %d bytes, want %d", got, tc.targetBytes)
			}
		})
	}
}

func TestDropClosesOpenAndNewConnectionsUntilHealed(t *testing.T) {
	echo := startEcho(t)
	p := startProxy(t, echo.addr())
	open := dial(t, p.Addr())
	mustEcho(t, open, "ping", "before drop")

	p.Set(Drop)
	if got := readOutcome(t, open, "x", time.Second); got != cutOff {
		t.Fatalf("open connection under drop: %s, want %s", got, cutOff)
	}
	if got := pingOutcome(t, p.Addr(), time.Second); got != cutOff {
		t.Fatalf("new connection under drop: %s, want %s", got, cutOff)
	}

	p.Heal()
	healed := dial(t, p.Addr())
	mustEcho(t, healed, "pong", "after heal")
	wantStats(t, p, Stats{Accepted: 3, Open: 1, Forwarded: [2]int64{8, 8}})
	if got := echo.accepted.Load(); got != 2 {
		t.Errorf("target accepted %d connections, want 2 (the refused one never dialled)", got)
	}
}

func TestHealResetsLinksABlackholeBrokeAndResumesTheRest(t *testing.T) {
	echo := startEcho(t)
	p := startProxy(t, echo.addr())
	lossy := dial(t, p.Addr())
	mustEcho(t, lossy, "ping", "before blackhole")
	idle := dial(t, p.Addr())
	wantStats(t, p, Stats{Accepted: 2, Open: 2, Forwarded: [2]int64{4, 4}})

	p.Set(Blackhole)
	send(t, lossy, "lost")
	hung := dial(t, p.Addr())
	send(t, hung, "gone")
	for name, c := range map[string]net.Conn{"lossy": lossy, "hung": hung} {
		if got := readOutcome(t, c, "xxxx", hangWait); got != timedOut {
			t.Fatalf("%s under blackhole: %s, want %s", name, got, timedOut)
		}
	}
	wantStats(t, p, Stats{Accepted: 3, Open: 3, Forwarded: [2]int64{4, 4}, Discarded: [2]int64{8, 0}})

	p.Heal()
	for name, c := range map[string]net.Conn{"lossy": lossy, "hung": hung} {
		if got := readOutcome(t, c, "xxxx", time.Second); got != cutOff {
			t.Errorf("%s after heal: %s, want %s (reset, so its ends redial)", name, got, cutOff)
		}
	}
	fresh := dial(t, p.Addr())
	for name, c := range map[string]net.Conn{"idle": idle, "fresh": fresh} {
		mustEcho(t, c, "pong", name+" after heal")
	}
	wantStats(t, p, Stats{Accepted: 4, Open: 2, Forwarded: [2]int64{12, 12}, Discarded: [2]int64{8, 0}})
	if got, want := echo.received.Load(), int64(12); got != want {
		t.Errorf("target received %d bytes, want %d: nothing sent into the black hole arrives", got, want)
	}
}

func TestDelayHoldsEachChunkAtLeastItsDelay(t *testing.T) {
	const d = 60 * time.Millisecond
	cases := []struct {
		name   string
		set    func(*Proxy)
		minRTT time.Duration
	}{
		{"both ways", func(p *Proxy) { p.Set(Delay(d)) }, 2 * d},
		{"client→target", func(p *Proxy) { p.SetOneWay(ClientToTarget, Delay(d)) }, d},
		{"target→client", func(p *Proxy) { p.SetOneWay(TargetToClient, Delay(d)) }, d},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, c := faultyLink(t, tc.set)
			for i := range 3 {
				start := time.Now()
				send(t, c, "ping")
				if got := readOutcome(t, c, "ping", 2*time.Second); got != gotEcho {
					t.Fatalf("ping %d: %s", i, got)
				}
				if rtt := time.Since(start); rtt < tc.minRTT {
					t.Errorf("ping %d round trip %s, want ≥ %s", i, rtt, tc.minRTT)
				}
			}
		})
	}
}

func TestDelayKeepsTheOrderOfAThousandChunks(t *testing.T) {
	const chunks = 1000
	echo := startEcho(t)
	p := startProxy(t, echo.addr())
	p.Set(Delay(20 * time.Millisecond))
	c := dial(t, p.Addr())

	written := make(chan error, 1)
	go func() {
		var b [4]byte
		for i := range uint32(chunks) {
			binary.BigEndian.PutUint32(b[:], i)
			if _, err := c.Write(b[:]); err != nil {
				written <- err
				return
			}
		}
		written <- c.(*net.TCPConn).CloseWrite()
	}()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	if len(got) != 4*chunks {
		t.Fatalf("read %d bytes, want %d", len(got), 4*chunks)
	}
	for i := range uint32(chunks) {
		if n := binary.BigEndian.Uint32(got[4*i:]); n != i {
			t.Fatalf("chunk %d carries %d: order lost", i, n)
		}
	}
	// Both halves closed in turn, so the link is gone: the end of stream was delayed and
	// forwarded like the bytes.
	wantStats(t, p, Stats{Accepted: 1, Forwarded: [2]int64{4 * chunks, 4 * chunks}})
}

func TestCountersAreExactAcrossChunkSizes(t *testing.T) {
	echo := startEcho(t)
	p := startProxy(t, echo.addr())
	c := dial(t, p.Addr())
	sizes := []int{1, 1000, 100_000}
	total := 0
	for _, n := range sizes {
		payload := make([]byte, n)
		for i := range payload {
			payload[i] = byte(i)
		}
		go func() { _, _ = c.Write(payload) }()
		got, err := readN(c, n, 2*time.Second)
		if err != nil || got != string(payload) {
			t.Fatalf("%d bytes: echo differs (err %v)", n, err)
		}
		total += n
	}
	wantStats(t, p, Stats{Accepted: 1, Open: 1, Forwarded: [2]int64{int64(total), int64(total)}})
	_ = c.Close()
	wantStats(t, p, Stats{Accepted: 1, Open: 0, Forwarded: [2]int64{int64(total), int64(total)}})
}

func TestCloseEndsEveryConnectionWithoutLeakingGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		echo := newEcho(t)
		defer echo.close()
		p, err := New(echo.addr())
		if err != nil {
			t.Fatal(err)
		}
		var conns []net.Conn
		open := func() net.Conn {
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			return c
		}
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		passing := open()
		mustEcho(t, passing, "ping", "pass")
		// Each kind of link the proxy holds: delayed (chunks queued, their writer waiting),
		// one-way black-holed (forwarding back, discarding forth) and hung (never dialled).
		stages := []struct {
			fault func()
			write string
		}{
			{func() { p.Set(Delay(time.Hour)) }, "late"},
			{func() { p.SetOneWay(ClientToTarget, Blackhole) }, "half"},
			{func() { p.Set(Blackhole) }, "hung"},
		}
		for i, st := range stages {
			st.fault()
			send(t, open(), st.write)
			if !eventually(func() bool { return p.Stats().Open == int64(i+2) }) {
				t.Fatalf("%s: open = %d, want %d", st.write, p.Stats().Open, i+2)
			}
		}

		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if got := p.Stats().Open; got != 0 {
			t.Errorf("open after close = %d", got)
		}
		for i, c := range conns {
			if got := readOutcome(t, c, "x", time.Second); got != cutOff {
				t.Errorf("connection %d after close: %s, want %s", i, got, cutOff)
			}
		}
		if _, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
			t.Error("the listener still accepts after Close")
		}
	}()
	if !eventually(func() bool { return runtime.NumGoroutine() <= before }) {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
	}
}

func TestFaultNamesAndZeroDelay(t *testing.T) {
	cases := []struct {
		f    Fault
		want string
	}{
		{Pass, "pass"}, {Drop, "drop"}, {Blackhole, "blackhole"},
		{Delay(250 * time.Millisecond), "delay(250ms)"}, {Delay(0), "pass"},
	}
	for _, tc := range cases {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	if Delay(0) != Pass {
		t.Error("Delay(0) != Pass")
	}
}

func TestBlackholeLosesTheEndOfStreamToo(t *testing.T) {
	cases := []struct {
		name string
		set  func(*Proxy)
		want outcome // of reading after the client's half-close
	}{
		// The echo server answers an end of stream with its own, which reaches the client.
		{"pass forwards the half-close", func(*Proxy) {}, cutOff},
		{"blackhole client→target swallows it", func(p *Proxy) { p.SetOneWay(ClientToTarget, Blackhole) }, timedOut},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			echo, _, c := faultyLink(t, tc.set)
			if !eventually(func() bool { return echo.accepted.Load() == 1 }) {
				t.Fatal("the target never saw the connection")
			}
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if got := readOutcome(t, c, "x", hangWait); got != tc.want {
				t.Fatalf("read after half-close: %s, want %s", got, tc.want)
			}
		})
	}
}
