package session

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/runner"
)

// Every removal of a leftover is logged, a line each, with the owner
// check that found its headroom gone.
func TestReapLogKeepsTheEvidence(t *testing.T) {
	root := t.TempDir()
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	o := runner.OwnedResource{Kind: "container", Name: "headroom-e-t0001", Experiment: "e", Trial: "t0001", State: "running", Owner: "vm:42:777",
		OwnerCheck: runner.OwnerStatus{Evidence: "pid 42: kill(42, 0) answered no such process", At: at}, Removed: at.Add(time.Second)}
	if err := AppendReapLog(root, []runner.OwnedResource{o}); err != nil {
		t.Fatal(err)
	}
	if err := AppendReapLog(root, []runner.OwnedResource{o}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, ReapLog))
	if err != nil {
		t.Fatal(err)
	}
	want := "2026-12-01T09:30:01.000000Z removed leftover container headroom-e-t0001 (experiment e, trial t0001, state running) of headroom vm:42:777, gone: pid 42: kill(42, 0) answered no such process (checked 2026-12-01T09:30:00.000000Z)\n"
	if string(data) != want+want {
		t.Errorf("reaper.log:\n%s\nwant twice:\n%s", data, want)
	}
	if strings.Count(string(data), "\n") != 2 {
		t.Errorf("not one line per removal")
	}
}
