package harness

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPUTime is a process's user and system CPU time, all threads included, read from
// /proc/<pid>/stat (utime and stime, in clock ticks).
type CPUTime struct {
	User, System time.Duration
}

// Total is user plus system time.
func (c CPUTime) Total() time.Duration { return c.User + c.System }

// Sub is the CPU used between two readings.
func (c CPUTime) Sub(o CPUTime) CPUTime {
	return CPUTime{User: c.User - o.User, System: c.System - o.System}
}

// ParseStat reads utime and stime (fields 14 and 15) from the text of /proc/<pid>/stat.
// The command name (field 2) is in parentheses and may itself contain spaces and
// parentheses, so fields are counted from the last ')'.
func ParseStat(stat []byte, ticksPerSecond int64) (CPUTime, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return CPUTime{}, errors.New("proc stat: no ')' after the command name")
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state), so field n is fields[n-3].
	if len(fields) < 13 {
		return CPUTime{}, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(fields))
	}
	utime, err1 := strconv.ParseInt(fields[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(fields[15-3], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return CPUTime{}, fmt.Errorf("proc stat: utime/stime: %w", err)
	}
	tick := time.Second / time.Duration(ticksPerSecond)
	return CPUTime{User: time.Duration(utime) * tick, System: time.Duration(stime) * tick}, nil
}

// ReadCPU reads pid's CPU time.
func ReadCPU(pid int) (CPUTime, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return CPUTime{}, err
	}
	return ParseStat(b, ClockTicks())
}

// ParseStatusKB returns a "Name:   1234 kB" field of /proc/<pid>/status in KiB.
func ParseStatusKB(status []byte, name string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name+":")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 1 {
			break
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc status %s: %w", name, err)
		}
		if len(f) > 1 && f[1] != "kB" {
			return 0, fmt.Errorf("proc status %s: unit %q", name, f[1])
		}
		return v, nil
	}
	return 0, fmt.Errorf("proc status: no %s line", name)
}

// ReadPeakRSS reads pid's peak resident set size (VmHWM) in KiB.
func ReadPeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return ParseStatusKB(b, "VmHWM")
}

// ResetPeakRSS makes VmHWM start again from the current RSS (writing 5 to
// /proc/<pid>/clear_refs, Linux 4.0+), so the next ReadPeakRSS is the peak of one run.
// It fails without permission (another user's process), and the peak is then cumulative.
func ResetPeakRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

var (
	ticksOnce sync.Once
	ticks     int64
)

// ClockTicks is the kernel's USER_HZ (sysconf(_SC_CLK_TCK)): from AT_CLKTCK in
// /proc/self/auxv, else 100 (the value on every mainstream Linux architecture).
func ClockTicks() int64 {
	ticksOnce.Do(func() {
		ticks = 100
		if b, err := os.ReadFile("/proc/self/auxv"); err == nil {
			if v, ok := ParseAuxv(b, atClkTck); ok && v > 0 {
				ticks = int64(v)
			}
		}
	})
	return ticks
}

const atClkTck = 17

// ParseAuxv finds entry typ in a 64-bit little-endian auxiliary vector.
func ParseAuxv(b []byte, typ uint64) (uint64, bool) {
	for len(b) >= 16 {
		k, v := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
		if k == 0 {
			break
		}
		if k == typ {
			return v, true
		}
		b = b[16:]
	}
	return 0, false
}

// SystemCPU is CPU time from /proc/stat: Busy is user+nice+system+irq+softirq (guest time
// is inside user), Steal is time the hypervisor gave to other guests, Idle is idle+iowait.
type SystemCPU struct {
	Busy, Idle, Steal time.Duration
}

// Occupied is Busy plus Steal: the time the CPUs were not free for idle work, which is
// what a pinned server core costs whoever pays for it.
func (c SystemCPU) Occupied() time.Duration { return c.Busy + c.Steal }

// Sub is the CPU time between two readings.
func (c SystemCPU) Sub(o SystemCPU) SystemCPU {
	return SystemCPU{Busy: c.Busy - o.Busy, Idle: c.Idle - o.Idle, Steal: c.Steal - o.Steal}
}

// ParseProcStat reads the aggregate "cpu" line of /proc/stat (the first): the whole machine.
func ParseProcStat(b []byte, ticksPerSecond int64) (SystemCPU, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) == 0 || f[0] != "cpu" {
		return SystemCPU{}, fmt.Errorf("proc stat: first line %q is not the aggregate cpu line", line)
	}
	return parseCPUFields(f, ticksPerSecond)
}

// ParseProcStatCPUs sums the per-CPU lines ("cpu0", "cpu1", ...) of cpus. Every CPU of the
// set must have its line: an offline CPU has none, and a sum without it would be short.
func ParseProcStatCPUs(b []byte, ticksPerSecond int64, cpus CPUSet) (SystemCPU, error) {
	if len(cpus) == 0 {
		return SystemCPU{}, errors.New("proc stat: no CPU to read")
	}
	want := map[string]bool{}
	for _, c := range cpus {
		want["cpu"+strconv.Itoa(c)] = true
	}
	var sum SystemCPU
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !want[f[0]] {
			continue
		}
		c, err := parseCPUFields(f, ticksPerSecond)
		if err != nil {
			return SystemCPU{}, err
		}
		delete(want, f[0])
		sum.Busy, sum.Idle, sum.Steal = sum.Busy+c.Busy, sum.Idle+c.Idle, sum.Steal+c.Steal
	}
	if len(want) > 0 {
		return SystemCPU{}, fmt.Errorf("proc stat: no line for %s (offline or absent)", strings.Join(slices.Sorted(maps.Keys(want)), ", "))
	}
	return sum, nil
}

// parseCPUFields reads one cpu line: its name, then user nice system idle iowait irq
// softirq steal (in ticks; later fields, guest time, are inside user already).
func parseCPUFields(f []string, ticksPerSecond int64) (SystemCPU, error) {
	if len(f) < 9 {
		return SystemCPU{}, fmt.Errorf("proc stat: %s line has %d fields, want at least 8 counters", f[0], len(f)-1)
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return SystemCPU{}, fmt.Errorf("proc stat: %s field %d: %w", f[0], i+1, err)
		}
		v[i] = n
	}
	tick := time.Second / time.Duration(ticksPerSecond)
	d := func(n int64) time.Duration { return time.Duration(n) * tick }
	return SystemCPU{Busy: d(v[0] + v[1] + v[2] + v[5] + v[6]), Idle: d(v[3] + v[4]), Steal: d(v[7])}, nil
}

// StatReading is one read of /proc/stat: the whole machine, and the server CPUs' sum when
// the servers are pinned (Server is then set).
type StatReading struct {
	Machine SystemCPU
	Server  *SystemCPU
}

// ReadStat reads /proc/stat once, summing serverCPUs' lines too when there are any.
func ReadStat(serverCPUs CPUSet) (StatReading, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return StatReading{}, err
	}
	var r StatReading
	if r.Machine, err = ParseProcStat(b, ClockTicks()); err != nil {
		return r, err
	}
	if len(serverCPUs) > 0 {
		s, err := ParseProcStatCPUs(b, ClockTicks(), serverCPUs)
		if err != nil {
			return r, err
		}
		r.Server = &s
	}
	return r, nil
}
