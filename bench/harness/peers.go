package harness

// Peer targets: another gateway measured beside ours in the same run, on the same
// simulator route, pinned with the other servers. Bifrost is the one: built only when asked
// (make bench-peers) from its build kit, in two setups, each in its own app directory.

import (
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"go/version"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The peer targets, in the order every repetition visits them (after gateway).
const (
	TargetBifrostLean    = "bifrost-lean"    // Bifrost with no request log: what its speed claims use
	TargetBifrostLogging = "bifrost-logging" // Bifrost with its SQLite request log: the job our request log does
)

// PeerTargets are the targets Launch starts only when given a peer binary.
var PeerTargets = []string{TargetBifrostLean, TargetBifrostLogging}

// KnownTargets are every target a run may measure, in interleaving order.
func KnownTargets() []string { return slices.Concat(AllTargets, PeerTargets) }

// PeerRoute is the simulator route a peer forwards to: a peer has one upstream, so only the
// scenarios on this route (Scenario.Peers) measure it.
const PeerRoute = RouteChat

// Peer is another gateway, running.
type Peer struct {
	Name string `json:"name"` // its target name
	URL  string `json:"url"`
	PID  int    `json:"pid"`
	// ModelPrefix goes before the upstream model in what its clients ask for ("openai/").
	ModelPrefix string `json:"model_prefix"`
	// Build is the binary's Go version and module versions, from its build info.
	Build string `json:"build"`
}

// BifrostConfig is how to start Bifrost: its binary (bifrost-http) and the build kit's
// config.py, which writes an app directory for one OpenAI-format upstream.
type BifrostConfig struct {
	Bin          string
	ConfigScript string
}

// bifrostModelPrefix names the provider config.py configures.
const bifrostModelPrefix = "openai/"

// configArgs is config.py's command line for one setup: its app directory, the
// simulator's route as the OpenAI base URL (Bifrost appends /v1/chat/completions), and the
// simulator's model.
func (b BifrostConfig) configArgs(target, appDir, simURL string) ([]string, error) {
	args := []string{b.ConfigScript, appDir, simURL + "/r/" + PeerRoute, simModel}
	switch target {
	case TargetBifrostLean:
	case TargetBifrostLogging:
		args = append(args, "--logging")
	default:
		return nil, fmt.Errorf("%q is not a Bifrost target (%s)", target, strings.Join(PeerTargets, ", "))
	}
	return args, nil
}

// serveArgs is bifrost-http's command line; "{port}" is replaced by Launch.
func (b BifrostConfig) serveArgs(appDir string) []string {
	return []string{"-app-dir", appDir, "-host", "127.0.0.1", "-port", "{port}"}
}

// bifrostHealth is the path Bifrost answers 200 on once it serves.
const bifrostHealth = "/health"

// Check says what is missing to start Bifrost.
func (b BifrostConfig) Check() error {
	if b.Bin == "" {
		return errors.New("no Bifrost binary (--bifrost-bin; make bench-peers builds it)")
	}
	var errs []error
	for _, f := range []string{b.Bin, b.ConfigScript} {
		if f == "" {
			errs = append(errs, errors.New("no Bifrost config script (--bifrost-config: config.py of the Bifrost build kit)"))
			continue
		}
		if _, err := os.Stat(f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeConfig runs config.py for one setup into appDir.
func (b BifrostConfig) writeConfig(ctx context.Context, target, appDir, simURL string) error {
	args, err := b.configArgs(target, appDir, simURL)
	if err != nil {
		return err
	}
	if out, err := exec.CommandContext(ctx, "python3", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// startPeers starts each named peer setup in its own app directory under workDir.
func (b BifrostConfig) startPeers(ctx context.Context, names []string, workDir, simURL string, start startFunc) ([]Peer, error) {
	if err := b.Check(); err != nil {
		return nil, err
	}
	bin, err := filepath.Abs(b.Bin)
	if err != nil {
		return nil, err
	}
	build := binaryBuild(bin)
	var peers []Peer
	for _, name := range names {
		appDir := filepath.Join(workDir, name)
		if err := b.writeConfig(ctx, name, appDir, simURL); err != nil {
			return nil, err
		}
		p, err := start(name, bin, b.serveArgs(appDir), nil, bifrostHealth)
		if err != nil {
			return nil, err
		}
		peers = append(peers, Peer{Name: name, URL: p.URL, PID: p.PID, ModelPrefix: bifrostModelPrefix, Build: build})
	}
	return peers, nil
}

// binaryBuild is a Go binary's toolchain and main module with the versions of its
// maximhq modules ("" when it carries no build info).
func binaryBuild(bin string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return ""
	}
	parts := []string{bi.GoVersion, bi.Main.Path + " " + bi.Main.Version}
	for _, d := range bi.Deps {
		if strings.HasPrefix(d.Path, "github.com/maximhq/bifrost/core") {
			parts = append(parts, d.Path+" "+d.Version)
		}
	}
	// Bifrost's JSON library (sonic 1.15) compiles its fast path only below Go 1.27.
	if version.Compare(bi.GoVersion, "go1.27") >= 0 {
		parts = append(parts, "built with Go 1.27 or later: its JSON library runs in its slower compatibility mode")
	}
	return strings.Join(parts, ", ")
}
