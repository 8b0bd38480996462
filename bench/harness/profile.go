package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// ProfileReport is where a scenario's gateway CPU profile was kept and its top functions
// (`go tool pprof -top`, flat and cumulative share of the samples).
type ProfileReport struct {
	File string   `json:"file"`
	Top  []string `json:"top"`
}

type profileResult struct {
	file string
	top  []string
	err  error
}

// profileTopLines is how many functions of a profile the report keeps.
const profileTopLines = 20

// profile fetches the gateway's CPU profile over the next d (whole seconds, at least one:
// what /debug/pprof/profile takes) into ProfileDir/<scenario>.cpu.pprof and reads its top.
func (s *suite) profile(ctx context.Context, scenario string, d time.Duration) profileResult {
	secs := max(1, int(d/time.Second))
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", s.ep.GatewayDebugURL, secs), nil)
	if err != nil {
		return profileResult{err: err}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return profileResult{err: err}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return profileResult{err: fmt.Errorf("GET /debug/pprof/profile: %s", resp.Status)}
	}
	if err := os.MkdirAll(s.cfg.ProfileDir, 0o755); err != nil {
		return profileResult{err: err}
	}
	file := filepath.Join(s.cfg.ProfileDir, scenario+".cpu.pprof")
	f, err := os.Create(file)
	if err != nil {
		return profileResult{err: err}
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return profileResult{err: err}
	}
	if err := f.Close(); err != nil {
		return profileResult{err: err}
	}
	top, err := pprofTop(ctx, file)
	return profileResult{file: file, top: top, err: err}
}

// pprofTop is `go tool pprof -top` of a profile, from its header line on.
func pprofTop(ctx context.Context, file string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", profileTopLines), file).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof: %w", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for i, l := range lines {
		if strings.Contains(l, "flat%") {
			return lines[i:], nil
		}
	}
	return lines, nil
}
