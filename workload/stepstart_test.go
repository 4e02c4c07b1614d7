package workload

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Each step starts in the container's working directory by its path, as
// the engine's exec does: one that was removed and made again is the new
// one (before, every later step ran in the removed directory the driver
// held: "getcwd: cannot access parent directories"), and one that is gone
// ends the step 126, as the engine's exec cannot start it.
func TestStepStartsInTheWorkDirByItsPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	defer func(was string) { workDir = was }(workDir)
	workDir = dir
	run := func(script string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runCommand(Command{Argv: []string{"/bin/sh", "-c", script}}, nil, nil, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, _ := run(`pwd; echo first > mark`); code != 0 || strings.TrimSpace(out) != dir {
		t.Fatalf("first step: exit %d in %q, want 0 in %s", code, out, dir)
	}
	// The step's own act, as the attacker's: the directory removed and
	// made again (here from the test, the driver never having left it).
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "answer.txt"), []byte("42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := run(`cat answer.txt`); code != 0 || strings.TrimSpace(out) != "42" {
		t.Errorf("a step after its directory was made again: exit %d, %q (%q); want 0, 42 (read in the new one)", code, out, errs)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := run(`echo ran`); code != 126 || !strings.Contains(errs, "chdir to cwd") {
		t.Errorf("a step whose directory is gone: exit %d, %q; want 126 and the engine's words", code, errs)
	}
}

// Each step leads a session and process group of its own, as an exec's
// process does: a step's `kill 0` reaches only its own.
func TestStepLeadsItsOwnProcessGroup(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := runCommand(Command{Argv: []string{"/bin/sh", "-c", `read -r line < /proc/self/stat; set -- ${line##*) }; echo "$3 $4 $$"`}}, nil, nil, &stdout, &stderr)
	f := strings.Fields(stdout.String())
	if code != 0 || len(f) != 3 {
		t.Fatalf("exit %d, %q (%q)", code, stdout.String(), stderr.String())
	}
	// /proc/self/stat of the shell's read: the subshell-free builtin, so
	// the shell's own pgrp and session.
	if f[0] != f[2] || f[1] != f[2] {
		t.Errorf("the step's process group %s and session %s, want its own pid %s for both", f[0], f[1], f[2])
	}
}
