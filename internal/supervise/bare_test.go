package supervise

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// notSupervised are the parts of the tree whose goroutines are not the gateway's: the
// upstream simulator, the bench, the fault proxy and the test tools (packages named *test),
// none of which runs in a serving node, and bin/, where builds go (make bench-peers puts
// Bifrost's sources there).
func notSupervised(dir string) bool {
	switch dir {
	case "simulator", "bench", "clients", "cluster/faultproxy", "internal/supervise", "node_modules", "bin":
		return true
	}
	return strings.HasSuffix(filepath.Base(dir), "test")
}

// TestEveryGoroutineIsSupervised: outside tests and the parts above, a go statement is
// net/http's Serve (which recovers its handlers' panics itself) or nothing, and no Go method
// but supervise's is called (sync.WaitGroup.Go, errgroup): background work starts with Go,
// GoOwing or Loop, so a panic in it cannot end the process.
func TestEveryGoroutineIsSupervised(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var bare []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || notSupervised(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			text := func() []byte { return src[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset] }
			switch n := n.(type) {
			case *ast.GoStmt:
				if !bytes.Contains(text(), []byte(".Serve(")) {
					bare = append(bare, fset.Position(n.Pos()).String()+": "+string(text()))
				}
			case *ast.CallExpr: // a WaitGroup's or an errgroup's Go starts a goroutine too
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Go" {
					if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "supervise" {
						bare = append(bare, fset.Position(n.Pos()).String()+": "+strings.SplitN(string(text()), "\n", 2)[0])
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bare {
		t.Errorf("a goroutine nothing supervises: %s", b)
	}
}
