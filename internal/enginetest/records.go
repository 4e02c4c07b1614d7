package enginetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// KeepRecords cuts an experiment's trials.jsonl to its first keep
// records, as if the run had been stopped before the rest: what a resume
// is then asked to run. It returns how many the file held, and fails t
// when that is no more than keep.
func KeepRecords(t testing.TB, dir string, keep int) (held int) {
	t.Helper()
	path := filepath.Join(dir, "trials.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(data)), "\n")
	if len(lines) <= keep {
		t.Fatalf("%s holds %d records; nothing to cut to %d", path, len(lines), keep)
	}
	if err := os.WriteFile(path, []byte(strings.TrimSpace(strings.Join(lines[:keep], ""))+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return len(lines)
}
