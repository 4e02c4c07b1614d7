//go:build hostile

package e2e

// The hostile-input suite's "causes charged to the wrong party" rows
// (issue #24, items 8–9), injected for real on the engine.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// experimentContainers lists the containers of experiment id (all
// states) and removes them when the test ends, with the experiment's
// networks and volumes (a kept Harbor trial's /logs volumes stay with
// it): kept ones are the test's.
func experimentContainers(t *testing.T, id string) []container.Summary {
	t.Helper()
	list := experimentList(t, id, false)
	t.Cleanup(func() { removeExperimentContainers(id) })
	return list
}

// Item 9: --keep on the harbor profile, on an engine that refuses
// Harbor's open-files limit (docker run --ulimit nofile=1048576), before
// headroom has noted that it does: the first start fails, the retry
// without the limit must not find the first container (kept) in its way.
func TestHostileKeepOnHarborProfile(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	harborTask(t, tasks, "kept", "hostile-causes/kept", nil)
	t.Cleanup(func() { removeTaskImages(t, "hostile-causes/kept") })
	out := filepath.Join(root, "out")
	cache := filepath.Join(root, "cache") // no memo yet of the engine's refusal
	run := runBin(t, bin, []string{"XDG_CACHE_HOME=" + cache}, "run", "--keep", "--tasks-dir", tasks, "--tasks", "hostile-causes/kept",
		"--agents", "oracle", "--ratios", "uncapped", "--repeats", "2", "--concurrency", "1", "--out", out)
	dir, recs, _ := records(t, out)
	memo, _ := filepath.Glob(filepath.Join(cache, "headroom", "engine-nofile-refused-*"))
	refused := "refused"
	if len(memo) == 0 {
		refused = "accepted (the row tests nothing here)"
	}
	passed, conflict := 0, 0
	for _, r := range recs {
		if r["outcome"] == "passed" {
			passed++
		}
		if strings.Contains(fmt.Sprint(r["reason"]), "Conflict") {
			conflict++
		}
	}
	created, kept := 0, 0
	for _, c := range experimentContainers(t, filepath.Base(dir)) {
		switch {
		case c.State == "created":
			created++
		case c.Labels[runner.LabelKept] != "":
			kept++
		}
	}
	if run.code != 0 || passed != 2 || created != 0 || kept != 2 {
		t.Errorf("exit %d, %d passed, %d Conflict, %d Created and %d kept containers; want 0, 2, 0, 0, 2:\n%s", run.code, passed, conflict, created, kept, run.stderr)
	}
	_, _ = os.Stat(dir)
	letoutRow(t, "`run --keep` of a task directory (harbor profile, 2 trials) on an engine that refuses Harbor's open-files limit, not yet noted",
		fmt.Sprintf("the engine %s the limit; exit %d; %d trials passed, %d an infra error \"Conflict\"; %d containers kept (stopped) for inspection, %d left Created", refused, run.code, passed, conflict, kept, created),
		2-len(recs), created, conflict)
}

// Item 8: the agent kills PID 1 (`kill -TERM 1`, and HUP, INT, QUIT, and
// the fatal ones SEGV, BUS, FPE, ILL, TRAP, SYS, ABRT, XCPU) in
// step-driver mode, where PID 1 is headroom's driver. The task's own act
// must not be recorded as the engine lost (and excluded from the
// comparison): PID 1 ignores it, as an init process (Harbor's `sleep
// infinity`) does, and the trial goes on to its verdict.
func TestHostileAgentKillsPID1(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	root := t.TempDir()
	tasks := filepath.Join(root, "tasks")
	harborTask(t, tasks, "pid1", "hostile-causes/pid1", map[string]string{"solution/solve.sh": "#!/bin/bash\nkill -TERM 1\nkill -HUP 1\nkill -INT 1\nkill -QUIT 1\nfor s in SEGV BUS FPE ILL TRAP SYS ABRT XCPU; do kill -$s 1; done\nsleep 1\necho still here\n"})
	t.Cleanup(func() { removeTaskImages(t, "hostile-causes/pid1") })
	out := filepath.Join(root, "out")
	run := runBin(t, bin, nil, "run", "--tasks-dir", tasks, "--tasks", "hostile-causes/pid1", "--agents", "oracle", "--ratios", "uncapped", "--repeats", "1", "--out", out)
	dir, recs, left := records(t, out)
	logb, _ := os.ReadFile(filepath.Join(dir, "trials", "t0001", "log.txt"))
	var outcome, cause, runner_ string
	if len(recs) == 1 {
		outcome, cause, runner_ = fmt.Sprint(recs[0]["outcome"]), fmt.Sprint(recs[0]["cause"]), fmt.Sprint(recs[0]["step_runner"])
	}
	wrong := 0
	if outcome != "passed" || runner_ != "driver" {
		wrong = 1
		t.Errorf("exit %d, outcome %s (cause %s), step runner %s; want passed in driver mode:\n%s", run.code, outcome, cause, runner_, run.stderr)
	}
	ignored := strings.Count(string(logb), "was ignored, as an init process ignores it")
	still := "not printed"
	if strings.Contains(string(logb), "still here") {
		still = "printed"
	}
	letoutRow(t, "the agent's solve.sh sends SIGTERM, SIGHUP, SIGINT, SIGQUIT and SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGXCPU to PID 1 (headroom's step driver, harbor task)",
		fmt.Sprintf("exit %d; 1 trial %s (step runner %s), `still here` %s; the log says %d signal(s) to PID 1 ignored, as an init process does", run.code, outcome, runner_, still, ignored),
		1-len(recs), left, wrong)
}

// Item 6: headroom itself stopped (SIGSTOP) for 12 s while a 4 s step
// with a 8 s time limit ran: the limit passed while headroom could not
// watch, so the timeout is the freeze's (infra-error · frozen), not the
// task's agent-timeout (what main recorded).
func TestHostileHeadroomStopped(t *testing.T) {
	needEngine(t)
	bin := hostileBin(t)
	tasks := slowTasks(t, 4000)
	toml := filepath.Join(tasks, "slow.toml")
	data, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(toml, []byte(strings.Replace(string(data), "timeout_sec = 120", "timeout_sec = 8", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	l, dir := startSweep(t, bin, tasks, out, 1, 1)
	waitContainer(t, filepath.Base(dir), 3*time.Minute) // the trial under way
	l.cmd.Process.Signal(syscall.SIGSTOP)
	stopped := time.NewTimer(12 * time.Second)
	<-stopped.C // the stop's length is the injection, not a wait for an event
	l.cmd.Process.Signal(syscall.SIGCONT)
	code := l.wait(3 * time.Minute)
	recs := trialLines(t, dir)
	got := "no record"
	if len(recs) == 1 {
		got = fmt.Sprintf("%v · %v: %v", recs[0]["outcome"], recs[0]["cause"], recs[0]["reason"])
	}
	// The step's own 4 s may be read as done before the limit's timer
	// (a pass: the task was not charged either); a timeout must be the
	// freeze's, never the agent's.
	frozen := len(recs) == 1 && recs[0]["cause"] == string(model.CauseFrozen) && strings.Contains(fmt.Sprint(recs[0]["reason"]), "SIGSTOP")
	passed := len(recs) == 1 && recs[0]["outcome"] == string(model.Passed)
	if !frozen && !passed {
		t.Errorf("after a 12 s SIGSTOP of headroom across the step's 8 s limit: exit %d, %s\n%s", code, got, l.stderr())
	}
	letoutRow(t, "SIGSTOP of headroom for 12 s while a 4 s step with an 8 s limit runs", got, 1-len(recs), containersLeft(t, filepath.Base(dir)), 0)
}

// waitContainer waits until experiment id has a running container.
func waitContainer(t *testing.T, id string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		if len(experimentList(t, id, true)) > 0 {
			return
		}
		<-tick.C
	}
	t.Fatalf("no running container of experiment %s within %s", id, within)
}
