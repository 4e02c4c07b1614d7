package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --out headroom cannot write under is said first, before the engine
// is asked for anything (it was said only after every task image had
// been built).
func TestBadOutIsReportedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "run", "--tasks", "builtin/bn-fit-modify", "--ratios", "1", "--repeats", "1", "--out", filepath.Join(file, "experiments"))
	if r.code != 2 || !strings.Contains(r.stderr, "--out "+filepath.Join(file, "experiments")) {
		t.Errorf("exit %d, want 2 naming --out:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr+r.stdout, "image") {
		t.Errorf("images were prepared before --out was checked:\n%s", r.stderr)
	}
	// A good one is made and left empty.
	good := filepath.Join(dir, "out")
	headroom(t, "run", "--tasks", "builtin/bn-fit-modify", "--ratios", "1", "--repeats", "0", "--out", good)
	if left, err := os.ReadDir(good); err != nil || len(left) != 0 {
		t.Errorf("the check left %v behind (%v)", left, err)
	}
}
