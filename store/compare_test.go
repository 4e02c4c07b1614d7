package store

import (
	"strings"
	"testing"
)

// Two runs of the same tasks listed in another order (two imports of
// one benchmark's runs, whose results list tasks as they finished) are
// one setup; another task or image is not. Seen before: "Setups
// differ", tasks/images A x y · B y x.
func TestCompareTaskOrderIsNoSetupDifference(t *testing.T) {
	entries := func(names ...string) []TaskEntry {
		var out []TaskEntry
		for _, n := range names {
			out = append(out, TaskEntry{Name: n, ImageID: "sha256:" + n})
		}
		return out
	}
	a := Manifest{Tasks: entries("fix-git", "hello-world", "build-pmars")}
	b := Manifest{Tasks: entries("build-pmars", "fix-git", "hello-world")}
	if d := SetupDiffs(a, b); len(d) != 0 {
		t.Errorf("the same tasks in another order: %q", d)
	}
	b.Tasks = entries("build-pmars", "fix-git", "sqlite-with-gcov")
	if d := SetupDiffs(a, b); len(d) != 1 || !strings.HasPrefix(d[0], "tasks/images") {
		t.Errorf("another task: %q, want the tasks named", d)
	}
}
