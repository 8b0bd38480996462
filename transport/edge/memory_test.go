package edge

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// The default in-flight cap: an eighth of the memory, within its bounds.
func TestDefaultBodyBudget(t *testing.T) {
	for _, c := range []struct {
		memory, want int64
	}{
		{256 << 20, 64 << 20},
		{1 << 30, 128 << 20},
		{2 << 30, 256 << 20},
		{16 << 30, 2 << 30},
		{64 << 30, 4 << 30},
	} {
		if got := DefaultBodyBudget(c.memory); got != c.want {
			t.Errorf("memory %d: %d, want %d", c.memory, got, c.want)
		}
	}
}

// The cgroup's limit: v2 in the process's own cgroup, v2 at the root, v1; "max" and v1's
// unlimited figure are none.
func TestCgroupLimit(t *testing.T) {
	for _, c := range []struct {
		name   string
		self   string
		files  map[string]string
		want   int64
		source string
	}{
		{"v2, the process's cgroup", "0::/system.slice/gw.service\n", map[string]string{"system.slice/gw.service/memory.max": "536870912\n"}, 512 << 20, "cgroup memory limit"},
		{"v2 at the root", "0::/\n", map[string]string{"memory.max": "1073741824\n"}, 1 << 30, "cgroup memory limit"},
		{"v2 without a limit", "0::/\n", map[string]string{"memory.max": "max\n"}, 0, ""},
		{"v1", "12:memory:/docker/x\n", map[string]string{"memory/memory.limit_in_bytes": "268435456\n"}, 256 << 20, "cgroup memory limit"},
		{"v1 without a limit", "12:memory:/\n", map[string]string{"memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, ""},
		{"no cgroup files", "", nil, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			self := filepath.Join(dir, "cgroup")
			os.WriteFile(self, []byte(c.self), 0o600)
			root := filepath.Join(dir, "fs")
			for name, content := range c.files {
				path := filepath.Join(root, name)
				os.MkdirAll(filepath.Dir(path), 0o700)
				os.WriteFile(path, []byte(content), 0o600)
			}
			if got, source := cgroupLimit(self, root); got != c.want || source != c.source {
				t.Errorf("%d from %q, want %d from %q", got, source, c.want, c.source)
			}
		})
	}
}

func TestPhysicalMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(path, []byte("MemTotal:       24684596 kB\nMemFree:         1 kB\n"), 0o600)
	if got, want := physicalMemory(path), int64(24684596)<<10; got != want {
		t.Errorf("%d, want %d", got, want)
	}
	if got := physicalMemory(filepath.Join(t.TempDir(), "none")); got != 0 {
		t.Errorf("unreadable: %d, want 0", got)
	}
}

// Go's memory limit counts as the process's memory only when the operator set it
// (GOMEMLIMIT): the gateway's own default is a soft target for the heap.
func TestMemoryTakesGoLimitOnlyFromTheEnvironment(t *testing.T) {
	const limit = 3 << 20 // below any cgroup or machine here
	before := debug.SetMemoryLimit(limit)
	defer debug.SetMemoryLimit(before)
	for _, c := range []struct {
		env    string
		fromGo bool // the figure is Go's limit
	}{
		{env: ""}, // the cgroup's or the machine's memory
		{env: "3MiB", fromGo: true},
	} {
		t.Setenv("GOMEMLIMIT", c.env)
		bytes, source, _ := Memory()
		if got := source == "GOMEMLIMIT" && bytes == limit; got != c.fromGo {
			t.Errorf("GOMEMLIMIT=%q: %d from %q; Go's limit taken %v, want %v", c.env, bytes, source, got, c.fromGo)
		}
	}
}
