package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task whose memory spec is more than this host has passed validate
// as ok, and run then refused it: validate says so, as a note.
func TestValidateSaysASpecThisHostCannotRun(t *testing.T) {
	dir := t.TempDir()
	task := "[task]\nname = \"v/big\"\n[environment]\nimage = \"builtin\"\nmemory = \"100T\"\n[verifier]\nworkload = { duration_ms = 10 }\n[[agents]]\nname = \"a\"\n  [[agents.steps]]\n  name = \"s\"\n  workload = { duration_ms = 10 }\n"
	if err := os.WriteFile(filepath.Join(dir, "big.toml"), []byte(task), 0o644); err != nil {
		t.Fatal(err)
	}
	r := headroom(t, "tasks", "validate", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "note: its memory spec, 100TiB, is more than this machine's") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
