package cli

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/store"
)

// Two runs of the same tasks listed in another order (two imports of
// one benchmark's runs, whose results list tasks as they finished) are
// one setup; another task or image is not. Seen before: "Setups
// differ", tasks/images A x y · B y x.
func TestCompareTaskOrderIsNoSetupDifference(t *testing.T) {
	entries := func(names ...string) []store.TaskEntry {
		var out []store.TaskEntry
		for _, n := range names {
			out = append(out, store.TaskEntry{Name: n, ImageID: "sha256:" + n})
		}
		return out
	}
	a := store.Manifest{Tasks: entries("fix-git", "hello-world", "build-pmars")}
	b := store.Manifest{Tasks: entries("build-pmars", "fix-git", "hello-world")}
	if d := manifestDiffs(a, b); len(d) != 0 {
		t.Errorf("the same tasks in another order: %q", d)
	}
	b.Tasks = entries("build-pmars", "fix-git", "sqlite-with-gcov")
	if d := manifestDiffs(a, b); len(d) != 1 || !strings.HasPrefix(d[0], "tasks/images") {
		t.Errorf("another task: %q, want the tasks named", d)
	}
}
