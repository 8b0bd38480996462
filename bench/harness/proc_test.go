package harness

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses: fields count from the last ')'.
	stat := "4242 (my (weird) cmd) S 1 4242 4242 0 -1 4194560 3795 0 0 0 1234 567 0 0 20 0 9 0 123456 1500000000 5000 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"
	c, err := ParseStat([]byte(stat), 100)
	if err != nil {
		t.Fatal(err)
	}
	if c.User != 12340*time.Millisecond || c.System != 5670*time.Millisecond || c.Total() != 18010*time.Millisecond {
		t.Errorf("got %+v", c)
	}
	c250, _ := ParseStat([]byte(stat), 250)
	if c250.User != 4936*time.Millisecond {
		t.Errorf("at 250 Hz utime = %v", c250.User)
	}
	d := c.Sub(CPUTime{User: time.Second, System: time.Second})
	if d.User != 11340*time.Millisecond || d.System != 4670*time.Millisecond {
		t.Errorf("sub %+v", d)
	}
	for _, bad := range []string{"", "1 (x S 1 2", "1 (x) S 1 2 3", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 12 13"} {
		if _, err := ParseStat([]byte(bad), 100); err == nil {
			t.Errorf("ParseStat(%q) accepted", bad)
		}
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\tmodelgate\nVmPeak:\t 1000 kB\nVmHWM:\t   51234 kB\nVmRSS:\t   40000 kB\n"
	if v, err := ParseStatusKB([]byte(status), "VmHWM"); err != nil || v != 51234 {
		t.Errorf("VmHWM = %d, %v", v, err)
	}
	if v, err := ParseStatusKB([]byte(status), "VmRSS"); err != nil || v != 40000 {
		t.Errorf("VmRSS = %d, %v", v, err)
	}
	if _, err := ParseStatusKB([]byte(status), "VmSwap"); err == nil {
		t.Error("missing field accepted")
	}
	if _, err := ParseStatusKB([]byte("VmHWM:\t12 MB\n"), "VmHWM"); err == nil {
		t.Error("unknown unit accepted")
	}
	if v, _ := ParseStatusKB([]byte("MemTotal:       24683620 kB\n"), "MemTotal"); v != 24683620 {
		t.Errorf("meminfo MemTotal = %d", v)
	}
}

func TestParseAuxv(t *testing.T) {
	var b []byte
	for _, kv := range [][2]uint64{{6, 4096}, {17, 250}, {0, 0}, {17, 999}} {
		b = binary.LittleEndian.AppendUint64(b, kv[0])
		b = binary.LittleEndian.AppendUint64(b, kv[1])
	}
	if v, ok := ParseAuxv(b, 17); !ok || v != 250 {
		t.Errorf("AT_CLKTCK = %d %v", v, ok)
	}
	if _, ok := ParseAuxv(b, 33); ok {
		t.Error("found an absent entry (past AT_NULL)")
	}
	if tk := ClockTicks(); tk <= 0 || tk > 10000 {
		t.Errorf("ClockTicks = %d", tk)
	}
}

func TestReadSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	pid := os.Getpid()
	c0, err := ReadCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel's own account (getrusage) shows 150 ms of CPU spent, however
	// loaded the machine is, then check /proc tells the same.
	used := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start, deadline := used(), time.Now().Add(30*time.Second)
	x := 0
	for used()-start < 150*time.Millisecond && time.Now().Before(deadline) {
		x++
	}
	c1, _ := ReadCPU(pid)
	if d := c1.Sub(c0).Total(); d < 100*time.Millisecond {
		t.Errorf("150 ms of CPU spent read as %v", d)
	}
	if err := ResetPeakRSS(pid); err != nil {
		t.Logf("clear_refs not writable here: %v", err)
	}
	if kb, err := ReadPeakRSS(pid); err != nil || kb <= 0 {
		t.Errorf("VmHWM %d %v", kb, err)
	}
	_ = x
}

func TestParseCPUSet(t *testing.T) {
	for in, want := range map[string]string{"0": "0", "1-3": "1,2,3", "3,0-1, 1": "0,1,3"} {
		c, err := ParseCPUSet(in)
		if err != nil || c.String() != want {
			t.Errorf("ParseCPUSet(%q) = %v, %v; want %s", in, c, err, want)
		}
	}
	for _, bad := range []string{"", "a", "3-1", "-1", "0-5000"} {
		if _, err := ParseCPUSet(bad); err == nil {
			t.Errorf("ParseCPUSet(%q) accepted", bad)
		}
	}
}

// A child started pinned runs on the given CPU only, from its first instruction.
func TestStartProcPinned(t *testing.T) {
	allowed, err := Allowed()
	if err != nil {
		t.Skip(err)
	}
	if len(allowed) < 2 {
		t.Skip("needs 2 CPUs")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep binary")
	}
	last := CPUSet{allowed[len(allowed)-1]}
	p, err := StartProc("sleep", sleep, []string{"5"}, nil, t.TempDir()+"/sleep.log", last)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	got, err := ReadAffinity(p.PID)
	if err != nil || got != last.String() {
		t.Errorf("child affinity %q (%v), want %s", got, err, last)
	}
	// Of this process's threads, only the one that forked the child (locked to it, and kept
	// until the child exits) has the child's mask.
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	pinned := 0
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "Cpus_allowed_list:\t"+last.String()+"\n") {
			pinned++
		}
	}
	if pinned > 1 || len(tasks) == 0 {
		t.Errorf("%d of this process's %d threads are pinned to %s", pinned, len(tasks), last)
	}
	if err := p.Stop(); err != nil || !p.Exited() {
		t.Errorf("stop: %v", err)
	}
	if !strings.Contains(p.Log, "sleep.log") {
		t.Errorf("log path %q", p.Log)
	}
}

func TestParseProcStat(t *testing.T) {
	stat := "cpu  100 5 50 1000 20 3 2 7 0 0\ncpu0 50 2 25 500 10 1 1 3 0 0\nintr 1 2 3\n"
	c, err := ParseProcStat([]byte(stat), 100)
	if err != nil {
		t.Fatal(err)
	}
	if c.Busy != 1600*time.Millisecond || c.Idle != 10200*time.Millisecond || c.Steal != 70*time.Millisecond {
		t.Errorf("%+v", c)
	}
	if _, err := ParseProcStat([]byte("cpu0 1 2 3\n"), 100); err == nil {
		t.Error("accepted a per-CPU line")
	}
	if _, err := ReadStat(nil); err != nil && runtime.GOOS == "linux" {
		t.Error(err)
	}
}

// readFixture reads a /proc/stat taken before and after a run from testdata.
func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The server CPUs' time is the sum of their own lines, and every CPU of the set must have
// one: CPU 2 of the fixture is offline (no line), so a set with it is refused rather than
// summed short.
func TestParseProcStatCPUsSumsTheServerCPUs(t *testing.T) {
	before, after := readFixture(t, "proc-stat-before.txt"), readFixture(t, "proc-stat-after.txt")
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		cpus                        string
		busy, idle, steal, occupied time.Duration
		err                         string
	}{
		{cpus: "1", busy: ms(10300), idle: ms(400), steal: ms(200), occupied: ms(10500)},
		{cpus: "0,3", busy: ms(400), idle: ms(4500), occupied: ms(400)},
		{cpus: "0-1,3", busy: ms(10700), idle: ms(4900), steal: ms(200), occupied: ms(10900)},
		{cpus: "2", err: "no line for cpu2"},
		{cpus: "1-2", err: "no line for cpu2"},
		{cpus: "1,5,2", err: "no line for cpu2, cpu5"},
	} {
		t.Run(tc.cpus, func(t *testing.T) {
			set, err := ParseCPUSet(tc.cpus)
			if err != nil {
				t.Fatal(err)
			}
			c0, err0 := ParseProcStatCPUs(before, 100, set)
			c1, err1 := ParseProcStatCPUs(after, 100, set)
			if tc.err != "" {
				if err0 == nil || err1 == nil || !strings.Contains(err0.Error(), tc.err) {
					t.Fatalf("errors %v, %v; want %q", err0, err1, tc.err)
				}
				return
			}
			if err0 != nil || err1 != nil {
				t.Fatal(err0, err1)
			}
			d := c1.Sub(c0)
			if d.Busy != tc.busy || d.Idle != tc.idle || d.Steal != tc.steal || d.Occupied() != tc.occupied {
				t.Errorf("got busy %v idle %v steal %v occupied %v; want %v %v %v %v", d.Busy, d.Idle, d.Steal, d.Occupied(), tc.busy, tc.idle, tc.steal, tc.occupied)
			}
		})
	}
	// Over every CPU there is, the per-CPU sum is the aggregate line.
	all, _ := ParseCPUSet("0,1,3")
	m0, _ := ParseProcStat(before, 100)
	m1, _ := ParseProcStat(after, 100)
	s0, _ := ParseProcStatCPUs(before, 100, all)
	s1, _ := ParseProcStatCPUs(after, 100, all)
	if m1.Sub(m0) != s1.Sub(s0) {
		t.Errorf("aggregate %+v, per-CPU sum %+v", m1.Sub(m0), s1.Sub(s0))
	}
}

func TestParseProcStatCPUsRefusesBadLines(t *testing.T) {
	one := CPUSet{1}
	for _, tc := range []struct{ name, stat, err string }{
		{"no CPU asked", "cpu1 1 2 3 4 5 6 7 8\n", "no CPU to read"},
		{"short line", "cpu  1 2 3 4 5 6 7 8\ncpu1 1 2 3\n", "cpu1 line has 3 fields"},
		{"not a number", "cpu1 1 2 x 4 5 6 7 8\n", "cpu1 field 3"},
		{"a prefix is not the CPU", "cpu10 1 2 3 4 5 6 7 8\n", "no line for cpu1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := one
			if tc.name == "no CPU asked" {
				set = nil
			}
			_, err := ParseProcStatCPUs([]byte(tc.stat), 100, set)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
		})
	}
}

// The report's server core figures: the CPUs' busy time with steal per request, and what
// of it our server processes' own CPU time does not hold.
func TestCoreReportPerRequest(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, tc := range []struct {
		name      string
		d         SystemCPU
		servers   time.Duration
		requests  int64
		durationS float64
		want      CoreCPU
	}{
		{name: "kernel work beyond the processes", d: SystemCPU{Busy: ms(10300), Steal: ms(200)}, servers: ms(9000), requests: 10000, durationS: 10.9,
			want: CoreCPU{CPUs: "1", BusySeconds: 10.5, StealSeconds: 0.2, BusyCores: 0.96, USPerRequest: 1050, ServersSeconds: 9, OutsideServersUSPerRequest: 150}},
		{name: "processes read a tick more than the core", d: SystemCPU{Busy: ms(500)}, servers: ms(510), requests: 1000, durationS: 1,
			want: CoreCPU{CPUs: "1", BusySeconds: 0.5, BusyCores: 0.5, USPerRequest: 500, ServersSeconds: 0.51}},
		{name: "no request", d: SystemCPU{Busy: ms(30)}, servers: ms(20), durationS: 1.5,
			want: CoreCPU{CPUs: "1", BusySeconds: 0.03, BusyCores: 0.02, ServersSeconds: 0.02}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := coreReport(CPUSet{1}, tc.d, tc.servers, tc.requests, tc.durationS); *got != tc.want {
				t.Errorf("got %+v\nwant %+v", *got, tc.want)
			}
		})
	}
}
