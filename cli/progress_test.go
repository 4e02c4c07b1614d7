package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// Headless progress says each kill once, with which figure it is, names
// a command's processes once a trial (saying what the lines are), and
// gives each trial's line the sweep's elapsed time and time left. A
// new user's sweep said one kill three times ("at 128MiB", "at 126.0MiB
// (last sample)", "the kernel killed … at 128MiB"), make -j4's jobs four
// times a trial with no word of what the lines were, and no time at all.
func TestProgressSaysAKillOnceAndAProcessOnce(t *testing.T) {
	var b bytes.Buffer
	t0 := time.Date(2026, 12, 3, 18, 0, 0, 0, time.UTC)
	now := t0
	p := newProgressAt(&b, 4, func() time.Time { return now })
	pol := model.NewPolicy(model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}, model.Ratio{K: 1}, 1)
	for _, id := range []string{"t0001", "t0002"} {
		p.event(event.TrialQueued{Base: event.Base{Trial: id}, Trial: model.Trial{ID: id, Task: "builtin/parallel-build-retry", Agent: "agent", Ratio: model.Ratio{K: 1}, Repeat: 1, Policy: pol}})
	}
	base := event.Base{Trial: "t0001", Time: t0}
	for pid := 10; pid < 14; pid++ {
		p.event(event.ActivityStarted{Base: base, Activity: model.Activity{Step: "build", PID: pid, Command: "make -j4 (a job it started)"}})
	}
	// The engine's word first (the last sample), the kernel's after.
	p.event(event.OOMKill{Base: base, OOM: model.OOMEvent{Step: "build", WorkingSetBytes: 126 * model.MiB}, LimitBytes: 128 * model.MiB})
	p.event(event.OOMKill{Base: base, OOM: model.OOMEvent{Step: "build", WorkingSetBytes: 126 * model.MiB, KernelUsageBytes: 128 * model.MiB, Process: "make", PID: 12, RSSBytes: 30 * model.MiB}, LimitBytes: 128 * model.MiB, Detail: true})
	now = t0.Add(10 * time.Second)
	p.event(event.TrialEnded{Base: base, Result: model.TrialResult{Trial: model.Trial{ID: "t0001", Policy: pol}, Outcome: model.OOMKilled, Start: t0, End: now}})
	// A kill the kernel's report never named: said at the trial's end,
	// as the last sample.
	base2 := event.Base{Trial: "t0002", Time: t0}
	p.event(event.OOMKill{Base: base2, OOM: model.OOMEvent{Step: "build", WorkingSetBytes: 126 * model.MiB}, LimitBytes: 128 * model.MiB})
	now = t0.Add(20 * time.Second)
	p.event(event.TrialEnded{Base: base2, Result: model.TrialResult{Trial: model.Trial{ID: "t0002", Policy: pol}, Outcome: model.OOMKilled, Start: t0, End: now}})
	out := b.String()
	count := func(sub string) int { return strings.Count(out, sub) }
	if n := count("t0001 builtin/parallel-build-retry · agent 1x r1: killed in step build at 128MiB (the kernel's usage at the kill) (limit 128MiB): make, pid 12"); n != 1 || count("t0001: the kill") != 0 || count("126") != 1 {
		t.Errorf("t0001's kill: want one line, at the kernel's figure:\n%s", out)
	}
	if count("t0002 builtin/parallel-build-retry · agent 1x r1: killed in step build at 126MiB (the last sample before it; the kernel's figure unread)") != 1 {
		t.Errorf("t0002's kill: want one line, at the last sample, said so:\n%s", out)
	}
	if count("t0001: build: make -j4 (a job it started)") != 1 || count("is a process a step started that ran past") != 1 {
		t.Errorf("make's four jobs: want one line, explained once:\n%s", out)
	}
	if count("· 10s elapsed, ~30s left") != 1 || count("· 20s elapsed, ~20s left") != 1 {
		t.Errorf("trial lines: want elapsed and time left:\n%s", out)
	}
}

// An interrupted sweep's queued trials, cancelled before they started,
// are one line, not one line (with an eta) each.
func TestProgressFoldsTheUnstartedCancels(t *testing.T) {
	var b bytes.Buffer
	t0 := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	p := newProgressAt(&b, 40, func() time.Time { return t0.Add(3 * time.Second) })
	for i := 1; i <= 40; i++ {
		id := fmt.Sprintf("t%04d", i)
		r := model.TrialResult{Trial: model.Trial{ID: id}, Outcome: model.Cancelled, Reason: "cancelled before it started", Start: t0, End: t0}
		if i == 1 {
			r.ContainerID, r.Reason = "c1", "cancelled"
		}
		p.event(event.TrialEnded{Base: event.Base{Trial: id}, Result: r})
	}
	p.event(event.SweepEnded{Interrupted: true})
	out := b.String()
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "[40/40] cancelled        39 trials before they started (t0002…t0040)") {
		t.Errorf("%d lines:\n%s", n, out)
	}
}

// A trial held back says why, once per kind of hold: a run paused by its
// floor printed nothing and looked hung (the twenty-ninth attacker's 3);
// the concurrency's own queue is not news.
func TestProgressSaysWhyATrialWaits(t *testing.T) {
	var b bytes.Buffer
	p := newProgressAt(&b, 2, time.Now)
	for i, reason := range []string{"waiting for a slot (2 of 2 running)", "paused: host memory under pressure (22.6GiB available, floor 23GiB)", "paused: host memory under pressure (22.5GiB available, floor 23GiB)"} {
		p.event(event.TrialWaiting{Base: event.Base{Trial: fmt.Sprintf("t000%d", i+1)}, Reason: reason})
	}
	if got := b.String(); got != "       t0002 waits: paused: host memory under pressure (22.6GiB available, floor 23GiB)\n" {
		t.Errorf("got %q", got)
	}
}

// A passed trial whose agent's step was not found (exit 127) says so
// under its line: the verifier alone grades, as the harness's does, and
// a new user's `/no/such/binary` agent read as a plain pass.
func TestProgressSaysAPassWhoseAgentWasNotFound(t *testing.T) {
	var b bytes.Buffer
	t0 := time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC)
	p := newProgressAt(&b, 2, func() time.Time { return t0.Add(3 * time.Second) })
	pol := model.NewPolicy(model.Resources{CPUs: 1, MemoryBytes: 128 * model.MiB}, model.Ratio{K: 1}, 1)
	for i, agent := range [][]model.StepResult{
		{{Name: "missing", Phase: model.PhaseAgent, ExitCode: 127}},
		{{Name: "missing", Phase: model.PhaseAgent, ExitCode: 1}},
		// A traced script's guarded command: not its last.
		{{Name: "python --version", Phase: model.PhaseAgent, ExitCode: 127}, {Name: "python3 solve.py", Phase: model.PhaseAgent}},
	} {
		id := fmt.Sprintf("t%04d", i+1)
		p.event(event.TrialEnded{Base: event.Base{Trial: id}, Result: model.TrialResult{Trial: model.Trial{ID: id, Policy: pol}, Outcome: model.Passed, Start: t0, End: t0.Add(time.Second),
			Steps: append(agent, model.StepResult{Name: "verify", Phase: model.PhaseVerifier})}})
	}
	out := b.String()
	if strings.Count(out, "passed, though the agent's step missing exited 127 (command not found): the verifier alone grades") != 1 || strings.Count(out, "passed, though") != 1 {
		t.Errorf("want the 127 said once, the exit 1 and the guarded command not:\n%s", out)
	}
}
