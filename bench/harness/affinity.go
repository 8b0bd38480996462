package harness

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// CPUSet is a set of CPU numbers, written "0", "1-3" or "0,2-3".
type CPUSet []int

// ParseCPUSet reads a CPU list such as "0,2-3".
func ParseCPUSet(s string) (CPUSet, error) {
	var out CPUSet
	seen := map[int]bool{}
	for part := range strings.SplitSeq(strings.TrimSpace(s), ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange && err == nil {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b >= maskWords*64 {
			return nil, fmt.Errorf("cpu list %q: bad element %q", s, part)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("cpu list %q is empty", s)
	}
	sort.Ints(out)
	return out, nil
}

func (c CPUSet) String() string {
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

const maskWords = 16 // 1024 CPUs, the kernel's default cpumask size

func (c CPUSet) mask() [maskWords]uint64 {
	var m [maskWords]uint64
	for _, cpu := range c {
		m[cpu/64] |= 1 << (cpu % 64)
	}
	return m
}

// setAffinity pins one thread (tid 0: the calling thread).
func setAffinity(tid int, c CPUSet) error {
	m := c.mask()
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, uintptr(tid), unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m[0])))
	if errno != 0 {
		return fmt.Errorf("sched_setaffinity(%d, %s): %w", tid, c, errno)
	}
	return nil
}

// Allowed returns the CPUs this process may run on (sched_getaffinity).
func Allowed() (CPUSet, error) {
	var m [maskWords]uint64
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0, unsafe.Sizeof(m), uintptr(unsafe.Pointer(&m[0])))
	if errno != 0 {
		return nil, fmt.Errorf("sched_getaffinity: %w", errno)
	}
	var out CPUSet
	for i := range maskWords * 64 {
		if m[i/64]&(1<<(i%64)) != 0 {
			out = append(out, i)
		}
	}
	return out, nil
}

// PinSelf pins every thread of this process to c. Threads the Go runtime starts later are
// cloned from pinned threads and inherit the mask; the walk is repeated so a thread created
// during the first one is caught.
func PinSelf(c CPUSet) error {
	for range 3 {
		entries, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, e := range entries {
			tid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if err := setAffinity(tid, c); err != nil && !errors.Is(err, syscall.ESRCH) {
				return err
			}
		}
	}
	return nil
}

// ReadAffinity is the Cpus_allowed_list of pid's main thread.
func ReadAffinity(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no Cpus_allowed_list for pid %d", pid)
}
