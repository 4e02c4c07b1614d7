package docker

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// Every container headroom removes goes with its anonymous volumes: an
// image's VOLUME left a 20 MB unlabelled volume behind each trial, which
// `headroom clean` cannot find (it proves nothing of an unlabelled
// volume). Each ContainerRemove in this package must pass removeOptions.
func TestContainersAreRemovedWithTheirVolumes(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "ContainerRemove" || len(call.Args) != 3 {
				return true
			}
			calls++
			if id, ok := call.Args[2].(*ast.Ident); !ok || id.Name != "removeOptions" {
				t.Errorf("%s: ContainerRemove without removeOptions (RemoveVolumes: true): the container's anonymous volumes (an image's VOLUME) would be left on the engine, unlabelled; pass removeOptions", fset.Position(call.Pos()))
			}
			return true
		})
	}
	if calls == 0 {
		t.Fatal("no ContainerRemove call found in runner/docker: this test reads the package's own files, run it from its directory")
	}
}
