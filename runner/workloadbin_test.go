package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/runner"
)

// A console built by `make build` or `go install ./...` has the program
// beside it; one built by `go build .` alone gets it built once from its
// source tree and found again without building.
func TestWorkloadBinary(t *testing.T) {
	// A cache of its own for the program; Go's build cache stays where it was.
	if os.Getenv("GOCACHE") == "" {
		if d, err := os.UserCacheDir(); err == nil {
			t.Setenv("GOCACHE", filepath.Join(d, "go-build"))
		}
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	made := t.TempDir()
	exe := filepath.Join(made, "headroom")
	beside := filepath.Join(made, runner.WorkloadProgram)
	for _, f := range []string{exe, beside} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, how, err := runner.WorkloadBinary(exe, false, nil); err != nil || got != beside || how != runner.WorkloadBeside {
		t.Fatalf("beside: %q %q %v, want %q", got, how, err, beside)
	}

	alone := filepath.Join(t.TempDir(), "headroom")
	if err := os.WriteFile(alone, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, how, err := runner.WorkloadBinary(alone, false, nil); err != nil || got != "" || how != runner.WorkloadBuilt {
		t.Fatalf("not built yet, looked up only: %q %q %v, want \"\" and %q", got, how, err, runner.WorkloadBuilt)
	}
	var heard []string
	built, how, err := runner.WorkloadBinary(alone, true, func(l string) { heard = append(heard, l) })
	if err != nil || how != runner.WorkloadBuilt {
		t.Fatalf("build: %q %q %v", built, how, err)
	}
	if len(heard) != 1 || !strings.Contains(heard[0], "building hr-workload") {
		t.Errorf("progress %q, want one line saying it builds", heard)
	}
	st, err := os.Stat(built)
	if err != nil || st.Size() > 15<<20 {
		t.Fatalf("built program %s: %v, %d bytes (want ≤ 15 MiB)", built, err, st.Size())
	}
	again, _, err := runner.WorkloadBinary(alone, false, func(l string) { t.Errorf("built again: %s", l) })
	if err != nil || again != built {
		t.Errorf("second look-up %q %v, want %q without a build", again, err, built)
	}
	// A rebuilt console (another size or time) gets its program rebuilt.
	if err := os.WriteFile(alone, []byte("#!/bin/sh\n# rebuilt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _, err := runner.WorkloadBinary(alone, false, nil); err != nil || got != "" {
		t.Errorf("after the console changed: %q %v, want it to need a build", got, err)
	}
}
