//go:build hostile

package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/headroom-eval/headroom/internal/enginetest"
)

// TestMain gives the rows a temporary directory of the suite's own (so
// every --out of theirs, t.TempDir's, lies under it), removes the suite's
// one build of headroom (hostileBin) once every row has run, and fails
// the suite when a row left a container, volume or network of its runs
// on the engine (enginetest.Leftovers: a row whose cleanup took the kept
// containers and not their log volumes left six, found by the
// twenty-third attacker), removing them.
func TestMain(m *testing.M) {
	root, err := os.MkdirTemp("", "headroom-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", root)
	code := m.Run()
	if sharedBin.dir != "" {
		os.RemoveAll(sharedBin.dir)
	}
	if left := enginetest.Leftovers(root); len(left) > 0 {
		fmt.Fprintf(os.Stderr, "the hostile rows left %d object(s) of their runs on the engine (removed now):\n", len(left))
		for _, l := range left {
			fmt.Fprintln(os.Stderr, "  "+l)
		}
		enginetest.RemoveLeftovers(left)
		code = 1
	}
	os.RemoveAll(root)
	os.Exit(code)
}
