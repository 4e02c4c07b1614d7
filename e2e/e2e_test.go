// Package e2e drives the real headroom binary in a real terminal (tmux)
// against the real Docker engine, as a user would.
package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

func need(t *testing.T, what string, check *exec.Cmd) {
	t.Helper()
	enginetest.Need(t, what, check.Run)
}

type term struct {
	t       *testing.T
	session string
}

func (tm term) keys(keys ...string) {
	tm.t.Helper()
	for _, k := range keys {
		if out, err := exec.Command("tmux", "send-keys", "-t", tm.session, k).CombinedOutput(); err != nil {
			tm.t.Fatalf("send-keys %q: %v %s", k, err, out)
		}
	}
}

func (tm term) screen() string {
	out, _ := exec.Command("tmux", "capture-pane", "-p", "-t", tm.session).Output()
	return string(out)
}

// waitUntil polls the screen until ok says yes, or fails at the deadline.
func (tm term) waitUntil(d time.Duration, what string, ok func(screen string) bool) string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := tm.screen()
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("screen never showed %s within %s:\n%s", what, d, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitFor polls the screen until every want appears, or fails at the deadline.
func (tm term) waitFor(d time.Duration, want ...string) string {
	tm.t.Helper()
	deadline := time.Now().Add(d)
	for {
		s := tm.screen()
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("screen never showed %q within %s:\n%s", want, d, s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// buildHeadroom builds the static binary into a fresh directory.
func buildHeadroom(t *testing.T) (dir, bin string) {
	t.Helper()
	dir = t.TempDir()
	bin, err := enginetest.BuildHeadroom(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, bin
}

// startConsole builds headroom and runs `headroom ARGS --out DIR` in a
// tmux session of w×h; it returns the terminal and the experiments root.
func startConsole(t *testing.T, name string, w, h int, args ...string) (term, string) {
	t.Helper()
	return startConsoleEnv(t, name, w, h, "", append(args, "--theme", "plain")...)
}

// startConsoleEnv is startConsole with environment assignments (as a
// shell writes them, "NO_COLOR=1") and no theme flag.
func startConsoleEnv(t *testing.T, name string, w, h int, env string, args ...string) (term, string) {
	t.Helper()
	need(t, "tmux", exec.Command("tmux", "-V"))
	need(t, "docker engine", exec.Command("docker", "info"))
	dir, bin := buildHeadroom(t)
	out := filepath.Join(dir, "experiments")
	session := fmt.Sprintf("headroom-e2e-%s-%d", name, os.Getpid())
	shell := fmt.Sprintf("%s %s %s --out %s; echo headroom exited $?; sleep 600", env, bin, strings.Join(args, " "), out)
	if o, err := exec.Command("tmux", "new-session", "-d", "-s", session, "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), shell).CombinedOutput(); err != nil {
		t.Fatalf("tmux: %v %s", err, o)
	}
	t.Cleanup(func() { exec.Command("tmux", "kill-session", "-t", session).Run() })
	return term{t, session}, out
}

// onlyExperiment is the one experiment under root and its containers
// still on the engine.
func onlyExperiment(t *testing.T, root string) (string, int) {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 1 {
		t.Fatalf("experiments: %v %v", entries, err)
	}
	return filepath.Join(root, entries[0].Name()), len(experimentList(t, entries[0].Name(), false))
}

// experimentList lists the containers on the engine labelled with
// experiment id: all of them, or only the running ones.
func experimentList(t *testing.T, id string, running bool) []container.Summary {
	t.Helper()
	cli, err := docker.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	f := filters.NewArgs(filters.Arg("label", runner.LabelExperiment+"="+id))
	if running {
		f.Add("status", "running")
	}
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: !running, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestConsoleInTmuxOOMThenMatrixThenQuit(t *testing.T) {
	// One repeat from the flag: fewer keys, fewer chances for a loaded
	// machine to make the test about typing.
	tm, out := startConsole(t, "oom", 120, 40, "--repeats", "1")
	// The console opens on the showcase chosen: bn-fit-modify · heavy
	// and · lean, the first two rows. Keep heavy (lean off); ratios: keep
	// 1x and uncapped (3x off).
	tm.waitFor(time.Minute, "Tasks · 2 of", "builtin/bn-fit-modify", "repeats 1")
	tm.keys("Down", "Space")
	tm.waitFor(10*time.Second, "Tasks · 1 of")
	tm.keys("Tab", "Right", "Right", "Right", "Space")
	tm.waitFor(10*time.Second, "[ ]3x", "2 trials")
	tm.keys("Enter")
	banner := tm.waitFor(time.Minute, "OOM KILLED in install")
	t.Logf("live view with the OOM banner:\n%s", banner)
	tm.keys("3")
	matrix := tm.waitFor(time.Minute, "0/1 K", "1/1 +", "finished · 2 of 2 done")
	t.Logf("matrix:\n%s", matrix)
	tm.keys("q")
	tm.waitFor(time.Minute, "headroom exited 0")

	if _, left := onlyExperiment(t, out); left > 0 {
		t.Errorf("%d container(s) left behind", left)
	}
}

// Quitting mid-sweep asks, then stops and removes every running trial,
// and ends as headless's Ctrl-C does: the experiment named, the resume
// command, exit 130. (Quitting the demo is its end, exit 0: below.)
func TestConsoleQuitMidSweepCleansUp(t *testing.T) {
	tm, out := startConsole(t, "quit", 80, 24)
	// Setup opens with the showcase chosen: enter runs it.
	tm.waitFor(time.Minute, "bn-fit-modify")
	tm.keys("Enter")
	tm.waitFor(2*time.Minute, "OOM KILLED in install")
	tm.keys("q")
	tm.waitFor(10*time.Second, "Quit?", "y/n")
	tm.keys("y")
	screen := tm.waitFor(2*time.Minute, "headroom exited 130")
	dir, left := onlyExperiment(t, out)
	id := filepath.Base(dir)
	// tmux wraps the long line at 80 columns: join the screen's lines.
	flat := strings.ReplaceAll(screen, "\n", "")
	if !strings.Contains(flat, "experiment "+id+" in") || !strings.Contains(flat, "headroom run --resume "+id+" --out") {
		t.Errorf("no experiment id or resume hint after quitting mid-sweep:\n%s", screen)
	}
	if left > 0 {
		t.Errorf("%d container(s) left behind after quitting mid-sweep", left)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if !strings.Contains(string(data), `"status": "interrupted"`) {
		t.Errorf("manifest should record the interrupted sweep:\n%s", data)
	}
}

// A Terminal-Bench 2.0 task directory in the console: its image is built
// before the console opens, its oracle is a row, and the kill names the
// command of solve.sh that was running.
func TestConsoleRunsATaskDirectoryOracle(t *testing.T) {
	dir, err := filepath.Abs("../examples/tasks")
	if err != nil {
		t.Fatal(err)
	}
	tm, out := startConsole(t, "tbdir", 120, 40, "--tasks-dir", dir, "--repeats", "1")
	tm.waitFor(5*time.Minute, "examples/fit-model", "oracle", "hello-old", "repeats 1")
	// Found by the filter, not by counting rows: the built-in catalog grows.
	tm.keys("/", "examples/fit-model")
	tm.waitFor(10*time.Second, "/examples/fit-model")
	tm.keys("Enter", "Space")
	tm.waitFor(10*time.Second, "Tasks · 1 of", "[x] examples/fit-model")
	tm.keys("Tab", "Right", "Right", "Right", "Space")
	tm.waitFor(10*time.Second, "[ ]3x", "2 trials")
	tm.keys("Enter")
	banner := tm.waitFor(2*time.Minute, "OOM KILLED in python3 -")
	t.Logf("live view with the OOM banner:\n%s", banner)
	tm.keys("3")
	tm.waitFor(2*time.Minute, "0/1 K", "1/1 +", "finished · 2 of 2 done")
	tm.keys("q")
	tm.waitFor(time.Minute, "headroom exited 0")
	if _, left := onlyExperiment(t, out); left > 0 {
		t.Errorf("%d container(s) left behind", left)
	}
}

// `headroom demo --record FILE.cast` writes asciicast v2: a header with
// the terminal's size, then the console's output as timed events, the
// kill banner among them, so the demo replays without a machine. Quitting
// the demo is its end: exit 0, no resume to offer.
func TestDemoRecordsAnAsciicast(t *testing.T) {
	cast := filepath.Join(t.TempDir(), "demo.cast")
	tm, _ := startConsole(t, "record", 120, 40, "demo", "--record", cast)
	tm.waitFor(2*time.Minute, "OOM KILLED in install")
	tm.keys("q")
	tm.waitFor(10*time.Second, "Quit?", "y/n")
	tm.keys("y")
	tm.waitFor(2*time.Minute, "the demo ended", "headroom exited 0", "recorded "+cast)
	data, err := os.ReadFile(cast)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	var head struct {
		Version, Width, Height int
		Timestamp              int64
	}
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.Version != 2 || head.Width != 120 || head.Height != 40 || time.Since(time.Unix(head.Timestamp, 0)) > 10*time.Minute {
		t.Fatalf("header %q: %+v %v", lines[0], head, err)
	}
	last, bannerAt := -1.0, -1.0
	for _, l := range lines[1:] {
		var ev []any
		if err := json.Unmarshal([]byte(l), &ev); err != nil || len(ev) != 3 || ev[1] != "o" {
			t.Fatalf("event %q: %v", l, err)
		}
		at, _ := ev[0].(float64)
		if at <= last {
			t.Fatalf("event at %v after %v: times must increase", at, last)
		}
		last = at
		if s, _ := ev[2].(string); bannerAt < 0 && strings.Contains(s, "OOM KILLED in") {
			bannerAt = at
		}
	}
	if bannerAt <= 0 {
		t.Errorf("no event draws the kill banner (%d events)", len(lines)-1)
	}
	t.Logf("%d events over %.1fs, the banner at %.1fs", len(lines)-1, last, bannerAt)
}
