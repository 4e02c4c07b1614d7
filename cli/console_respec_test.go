package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// The console re-reads a task's file for its spec (calibrate --write while
// it is open); the pids limit stays the profile's. Read bare, a task
// directory's task.toml came back with headroom's hardened 1024, so the
// console ran --tasks-dir tasks under a pids limit `run` and `tasks show`
// did not (seen with examples/tasks/flaky-random-size).
func TestRespecKeepsTheProfilesPidsLimit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "flaky-random-size")
	if out, err := exec.Command("cp", "-r", "../examples/tasks/flaky-random-size", dir).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	if task.Resources.PidsLimit != 0 {
		t.Fatalf("loaded harbor task has pids limit %d, want none", task.Resources.PidsLimit)
	}
	var specs fileSpecs
	res, ok := specs.read(task)
	if !ok || res.PidsLimit != 0 {
		t.Errorf("respec of a harbor task: ok %v, pids limit %d, want none", ok, res.PidsLimit)
	}
	// --profile hardened on the same directory: 1024, kept on re-read.
	hard := task
	hard.SetProfile(model.ProfileHardened)
	if res, ok := specs.read(hard); !ok || res.PidsLimit != model.DefaultPidsLimit {
		t.Errorf("respec of a hardened task: ok %v, pids limit %d, want %d", ok, res.PidsLimit, model.DefaultPidsLimit)
	}
	// A headroom task file under --profile harbor: none, kept on re-read.
	file := filepath.Join(t.TempDir(), "own.toml")
	if err := os.WriteFile(file, []byte("name = \"own\"\n[environment]\nmemory = \"64MiB\"\n[[agents]]\nname = \"a\"\n[agents.workload]\nallocate = \"8MiB\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	own := model.Task{Source: file, Profile: model.ProfileHarbor, Resources: model.Resources{Defaulted: []string{"pids_limit"}}}
	if res, ok := specs.read(own); ok && res.PidsLimit != 0 {
		t.Errorf("respec of a headroom file under harbor: pids limit %d, want none", res.PidsLimit)
	}
}

// A task's file replaced by a FIFO (or a link to /dev/zero) after the
// console loaded it: the re-read at Enter refuses it as the loader does,
// at once. It had opened the FIFO on the console's goroutine and frozen
// the console until something wrote into it (the thirty-second
// attacker's 4).
func TestRespecReadsNoFIFO(t *testing.T) {
	dir := t.TempDir()
	for name, mk := range map[string]func(string) error{
		"fifo.toml": func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"zero.toml": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		p := filepath.Join(dir, name)
		if err := mk(p); err != nil {
			t.Fatal(err)
		}
		done := make(chan bool, 1)
		go func() {
			var specs fileSpecs
			_, ok := specs.read(model.Task{Source: p})
			done <- ok
		}()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("%s read as a task's spec", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: still reading after 10 s", name)
		}
	}
}
