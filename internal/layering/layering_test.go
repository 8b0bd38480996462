package layering

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/modelgate/modelgate/"

// rule is one direction the imports must keep: what packages reaches, directly or through
// any other package, must stay inside allowed (when set) and outside denied.
type rule struct {
	name     string
	packages string   // a go list pattern, from the module root
	tests    bool     // the packages' tests are held to it too
	allowed  []string // module-relative path prefixes; nil: any but denied
	denied   []string // module-relative path prefixes
}

// TestImportsKeepTheirDirection: codec is the bottom layer and reaches no other part of the
// module but the id generator below it (the catalog converts what codec/reasoning needs into
// reasoning.Model); the actors know no cluster, and the cluster no transport; a video task
// reaches its upstream only through video.Upstream, which transport/upstream implements and
// transport/node wires (docs/architecture.md, "Layers").
func TestImportsKeepTheirDirection(t *testing.T) {
	rules := []rule{
		// internal/randid, the one id generator, is below codec: it reaches nothing of the module.
		{name: "codec knows only codec and the id generator", packages: "./codec/...", tests: true, allowed: []string{"codec", "internal/randid"}},
		{name: "the id generator knows nothing of the module", packages: "./internal/randid", tests: true, allowed: []string{"internal/randid"}},
		// Actor placement (actors/placement) is the actors' own; the cluster's engine and
		// shards sit above them.
		{name: "actors know no cluster", packages: "./actors/...", tests: true, denied: []string{"cluster"}},
		// The cluster (engine, shards, membership) sits below the HTTP front end, which wires
		// it in (transport/node); the multi-process harness that runs whole nodes is e2e's.
		// The metadata shard's tests serve the real admin API over it, so only the packages
		// themselves are held to it.
		{name: "cluster imports no transport", packages: "./cluster/...", denied: []string{"transport", "e2e"}},
		// Its tests drive the real client against a fake job API over loopback, so only the
		// package itself is held to it.
		{name: "video tasks know no upstream client", packages: "./actors/video", denied: []string{"transport/upstream"}},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			graph := importGraph(t, r.packages, r.tests)
			if len(graph) == 0 {
				t.Fatalf("go list found no packages for %s", r.packages)
			}
			for _, edge := range r.breaches(graph) {
				t.Error(edge)
			}
		})
	}
}

// breaches lists each import by which the packages first step out of bounds: an importer
// still inside, the package it imports outside.
func (r rule) breaches(graph map[string][]string) []string {
	var out []string
	for from, imports := range graph {
		if !r.inBounds(from) {
			continue
		}
		for _, to := range imports {
			if !r.inBounds(to) {
				out = append(out, from+" imports "+to)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (r rule) inBounds(pkg string) bool {
	under := func(prefixes []string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return pkg == p || strings.HasPrefix(pkg, p+"/") })
	}
	return (r.allowed == nil || under(r.allowed)) && !under(r.denied)
}

// importGraph is go list's view of the packages and everything they reach: each of the
// module's packages (module-relative, test variants folded into their package) with the
// module packages it imports.
func importGraph(t *testing.T, pattern string, tests bool) map[string][]string {
	t.Helper()
	args := []string{"list", "-deps", "-tags", "faults", "-f", "{{.ImportPath}}\t{{join .Imports \"\\t\"}}"}
	if tests {
		args = append(args, "-test")
	}
	cmd := exec.Command("go", append(args, pattern)...)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", pattern, err, stderr.Bytes())
	}
	graph := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimRight(line, "\n"), "\t")
		from, ok := ours(fields[0])
		if !ok {
			continue
		}
		if _, seen := graph[from]; !seen {
			graph[from] = nil
		}
		for _, imp := range fields[1:] {
			if to, ok := ours(imp); ok && to != from {
				graph[from] = append(graph[from], to)
			}
		}
	}
	return graph
}

// ours is a module package's path relative to the module, without go list's test-variant
// suffixes ("codec/chat [codec/chat.test]", "codec/chat.test", "codec/chat_test").
func ours(path string) (string, bool) {
	path, _, _ = strings.Cut(path, " ")
	if !strings.HasPrefix(path, module) {
		return "", false
	}
	path = strings.TrimPrefix(path, module)
	path = strings.TrimSuffix(path, ".test")
	path = strings.TrimSuffix(path, "_test")
	return path, true
}
