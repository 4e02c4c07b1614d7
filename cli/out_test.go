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
	// A good one is checked, and a run refused after the check leaves no
	// directory behind (nor one of its parents it had to make).
	good := filepath.Join(dir, "made", "out")
	if r := headroom(t, "run", "--tasks", "builtin/bn-fit-modify", "--ratios", "1", "--repeats", "0", "--out", good); r.code != 2 {
		t.Fatalf("--repeats 0: exit %d, want a refusal", r.code)
	}
	if _, err := os.Stat(filepath.Join(dir, "made")); err == nil {
		t.Errorf("the refused run left %s behind", filepath.Join(dir, "made"))
	}
}
