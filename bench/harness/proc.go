package harness

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
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

// SystemCPU is the whole machine's CPU time from the first line of /proc/stat: Busy is
// user+nice+system+irq+softirq (guest time is inside user), Steal is time the hypervisor
// gave to other guests, Idle is idle+iowait.
type SystemCPU struct {
	Busy, Idle, Steal time.Duration
}

// ParseProcStat reads the aggregate "cpu" line of /proc/stat.
func ParseProcStat(b []byte, ticksPerSecond int64) (SystemCPU, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return SystemCPU{}, fmt.Errorf("proc stat: first line %q is not the aggregate cpu line", line)
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(f[i+1], 10, 64)
		if err != nil {
			return SystemCPU{}, fmt.Errorf("proc stat: cpu field %d: %w", i+1, err)
		}
		v[i] = n
	}
	tick := time.Second / time.Duration(ticksPerSecond)
	d := func(n int64) time.Duration { return time.Duration(n) * tick }
	// user nice system idle iowait irq softirq steal
	return SystemCPU{Busy: d(v[0] + v[1] + v[2] + v[5] + v[6]), Idle: d(v[3] + v[4]), Steal: d(v[7])}, nil
}

// ReadSystemCPU reads /proc/stat.
func ReadSystemCPU() (SystemCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return SystemCPU{}, err
	}
	return ParseProcStat(b, ClockTicks())
}
