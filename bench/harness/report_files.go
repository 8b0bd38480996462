package harness

// Where a report comes from and goes: the machine and commit it describes, and its JSON and
// Markdown files.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ReadMachine describes this machine.
func ReadMachine() Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), ClockTicks: ClockTicks()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(strings.NewReader(string(b)))
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, err := ParseStatusKB(b, "MemTotal"); err == nil {
			m.MemTotalMB = kb / 1024
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

func readGit() GitInfo {
	var g GitInfo
	if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		g.Commit = strings.TrimSpace(string(out))
		if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
			g.Dirty = len(strings.TrimSpace(string(st))) > 0
		}
	}
	return g
}

// ReadReport reads a JSON report written by WriteFiles.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if r.Schema < 1 || r.Schema > SchemaVersion {
		return nil, fmt.Errorf("%s: report schema %d, this build reads 1 to %d", path, r.Schema, SchemaVersion)
	}
	// An older report's comparisons are derived again from its phases, which it has: the
	// fields it lacks (the server core's CPU) stay null.
	if r.Schema < SchemaVersion {
		for i := range r.Scenarios {
			r.Scenarios[i].Comparison = compare(r.Scenarios[i])
			r.Headline[i] = r.Scenarios[i].Comparison
		}
	}
	return &r, nil
}

// WriteFiles writes <dir>/<stamp>.json and <dir>/<stamp>.md (through .tmp files renamed
// into place) and returns their paths. The stamp is the start time, UTC.
func (r *Report) WriteFiles(dir string) (jsonPath, mdPath string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	stamp := r.StartedAt.Format("2006-01-02T150405Z")
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", "", err
	}
	jsonPath, mdPath = filepath.Join(dir, stamp+".json"), filepath.Join(dir, stamp+".md")
	for path, data := range map[string][]byte{jsonPath: append(b, '\n'), mdPath: []byte(r.Markdown())} {
		if err := os.WriteFile(path+".tmp", data, 0o644); err != nil {
			return "", "", err
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			return "", "", err
		}
	}
	return jsonPath, mdPath, nil
}
