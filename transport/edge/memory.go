package edge

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/modelgate/modelgate/internal/memlimit"
)

// The default cap on body bytes in flight (server.max_body_bytes_in_flight: 0) is an eighth
// of the memory the process may use: a body is decoded, converted and encoded again while it
// is served, so the bytes it holds are a fraction of the memory it costs, and the Go heap
// grows to twice what is live before it collects. Never under 64 MiB (two bodies of the
// default 32 MiB limit) nor over 4 GiB; never under max_body_bytes either (Guard).
const (
	memoryShare   = 8
	minBodyBudget = 64 << 20
	maxBodyBudget = 4 << 30
)

// Memory is what the process may use, and where that figure comes from: the smallest of
// GOMEMLIMIT (when the operator set it: the gateway's own default is a soft target for the
// heap, lifted when the heap outgrows it, not a bound on the process), the cgroup's memory
// limit (v2 or v1, when it has one) and the machine's physical memory. ok is false when none
// could be read.
func Memory() (bytes int64, source string, ok bool) {
	bytes = math.MaxInt64
	consider := func(n int64, from string) {
		if n > 0 && n < bytes {
			bytes, source = n, from
		}
	}
	if limit := debug.SetMemoryLimit(-1); limit < math.MaxInt64 && memlimit.FromEnvironment() {
		consider(limit, "GOMEMLIMIT")
	}
	consider(cgroupLimit("/proc/self/cgroup", "/sys/fs/cgroup"))
	consider(physicalMemory("/proc/meminfo"), "physical memory")
	return bytes, source, bytes < math.MaxInt64
}

// DefaultBodyBudget is the default cap for a process that may use memory bytes.
func DefaultBodyBudget(memory int64) int64 {
	return min(max(memory/memoryShare, minBodyBudget), maxBodyBudget)
}

// cgroupLimit reads the memory limit of the process's cgroup: v2's memory.max in its own
// directory, else v1's memory.limit_in_bytes (a figure near 2^63 there means none).
func cgroupLimit(self, root string) (int64, string) {
	path := ""
	if b, err := os.ReadFile(self); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "0::"); ok {
				path = rest
			}
		}
	}
	for _, f := range []string{filepath.Join(root, path, "memory.max"), filepath.Join(root, "memory.max"),
		filepath.Join(root, "memory", "memory.limit_in_bytes")} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || n <= 0 || n >= 1<<62 { // "max", or v1's "unlimited"
			return 0, ""
		}
		return n, "cgroup memory limit"
	}
	return 0, ""
}

// physicalMemory is MemTotal of /proc/meminfo in bytes (0 when unreadable).
func physicalMemory(meminfo string) int64 {
	f, err := os.Open(meminfo)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
