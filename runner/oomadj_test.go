package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// Round six, oomadj: a task that raised the OOM score of headroom's step
// driver (started at -1000, never the OOM killer's choice) and then ran
// past its limit made the kernel take the driver, and its failure was
// driver-killed, not graded, rerun by a resume. A driver killed at an
// adjustment headroom never gives it is the task's own kill at its
// limit (the backend says so: RaisedScoreAdj, model.ForeignDriverScore);
// else headroom's as before.
func TestADriverKillAtARaisedScoreIsTheTasks(t *testing.T) {
	adj := func(n int) *int { return &n }
	for _, c := range []struct {
		name string
		adj  *int
		// usage and shmem are the kernel report's (0: none read)
		usage, shmem int64
		outcome      model.Outcome
		cause        model.Cause
		says         string
	}{
		{"raised to 1000", adj(1000), 0, 0, model.OOMKilled, model.CauseOwnLimit, "whose oom_score_adj the task had raised to 1000"},
		{"raised to -999", adj(-999), 0, 0, model.OOMKilled, model.CauseOwnLimit, "whose oom_score_adj the task had raised to -999"},
		{"at one headroom gives it, or unknown", nil, 0, 0, model.InfraError, model.CauseDriverKilled, "not graded"},
		// Round nine: a task filling /dev/shm where the engine refused to
		// spare the driver (the sixth attacker's open item) made the
		// driver the victim every time, and a resume reran it forever.
		{"its tmpfs the memory at the limit", nil, 64 * model.MiB, 60 * model.MiB, model.OOMKilled, model.CauseOwnLimit, "the task's tmpfs pages (a /dev/shm or other tmpfs it wrote, which no process's resident set counts) held 60MiB of the 64MiB at the limit"},
		{"half of it in tmpfs", nil, 64 * model.MiB, 32 * model.MiB, model.OOMKilled, model.CauseOwnLimit, "held 32MiB of the 64MiB"},
		{"a little tmpfs", nil, 64 * model.MiB, 31 * model.MiB, model.InfraError, model.CauseDriverKilled, "not graded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, _ := newTestTrial()
			solve := model.Step{Name: "solve", Show: "bash /solution/solve.sh", Argv: []string{"bash", "/solution/solve.sh"}}
			tr.task = model.Task{Agents: []model.Agent{{Name: "oracle", Steps: []model.Step{solve}}}}
			tr.trial.Agent = "oracle"
			tr.trial.Policy.HardLimitBytes = 64 * model.MiB
			tr.step = "solve"
			t0 := time.Unix(1000, 0)
			driver := Proc{PID: 1, Command: "/.headroom/hr-workload drive", Started: t0.Add(-time.Second), Role: RoleDriver}
			step := Proc{PID: 7, PPID: 1, Command: "bash /solution/solve.sh", Started: t0, RSSBytes: 3 * model.MiB, Role: RoleStep}
			tr.procSample(ProcSample{Time: t0.Add(100 * time.Millisecond), Procs: []Proc{driver, step}, Roles: true})
			tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "solve", Process: "hr-workload", PID: 1, RaisedScoreAdj: c.adj, KernelUsageBytes: c.usage, KernelShmemBytes: c.shmem})
			tr.nameKill(0)
			if !tr.res.OOMs[0].Driver {
				t.Fatal("the driver's kill is not marked the driver's")
			}
			// The container ended with its driver: the verifier's step
			// was refused, which alone would read as the engine gone.
			tr.engineErr = errors.New("the container has stopped (its step driver ended)")
			ev := model.Evidence{OOMKills: 1, InfraFailed: true}
			tr.attributionEvidence(&ev, Final{LimitHits: 3, LimitHitsKnown: true, KernelPeakBytes: 64 * model.MiB})
			outcome, cause, reason := assemble(tr.facts(ev))
			if outcome != c.outcome || cause != c.cause {
				t.Errorf("%s · %s (%q); want %s · %s", outcome, cause, reason, c.outcome, c.cause)
			}
			if !strings.Contains(reason, c.says) {
				t.Errorf("reason %q: want it to say %q", reason, c.says)
			}
			if raised := len(model.TaskKills(tr.res.OOMs)) == 1; raised != (c.cause == model.CauseOwnLimit) {
				t.Errorf("the kill counted the task's: %v; want %v", raised, c.cause == model.CauseOwnLimit)
			}
		})
	}
}

// A driver's kill no kernel report named (its report unread before the
// trial ended) is still the driver's when the sandbox says its PID 1 died
// of it (DriverKillWitness): the tenth attacker's loop of kills was "the
// engine went away" (engine-lost) where the engine answered throughout.
func TestAnUnreportedDriverKillIsNotTheEngineGone(t *testing.T) {
	for _, witnessed := range []bool{false, true} {
		tr, _ := newTestTrial()
		tr.trial.Policy.HardLimitBytes = 32 * model.MiB
		tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "solve", Source: "events"})
		tr.engineErr = errors.New("making /logs/verifier directories again before the verifier: the container has stopped (its step driver ended)")
		tr.driverOOM = witnessed
		ev := model.Evidence{OOMKills: 1, InfraFailed: true}
		tr.attributionEvidence(&ev, Final{})
		_, cause, reason := assemble(tr.facts(ev))
		want := model.CauseEngineLost
		if witnessed {
			want = model.CauseDriverKilled
		}
		if cause != want {
			t.Errorf("witnessed %v: %s (%q); want %s", witnessed, cause, reason, want)
		}
	}
}

// The kernel logs ten OOM reports in five seconds: a task that fills its
// /dev/shm has it kill bash, head and then the step driver, and back to
// back such trials left the driver's kill without a report. Its exit
// said the driver died, no kill named it, and the trial was headroom's
// failure (driver-killed) one run in six where the report was logged
// own-limit. The last reading before the kill stands in: tmpfs pages at
// least half the working set are the task's doing as the report's are.
func TestAnUnreportedDriverKillByTmpfsIsTheTasks(t *testing.T) {
	for _, c := range []struct {
		name  string
		shmem int64
		cause model.Cause
		says  string
	}{
		{"tmpfs held the working set", 60 * model.MiB, model.CauseOwnLimit, "held 60MiB of the 64MiB in use at the last reading before the kill (the kernel logged no report of it"},
		{"a little tmpfs", 10 * model.MiB, model.CauseDriverKilled, "not graded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, _ := newTestTrial()
			tr.trial.Policy.HardLimitBytes = 64 * model.MiB
			tr.res.OOMs = []model.OOMEvent{
				{Step: "solve", Source: "kernel", Process: "bash", PID: 7, KernelUsageBytes: 65 * model.MiB, KernelShmemBytes: c.shmem, WorkingSetBytes: 64 * model.MiB, ShmemBytes: c.shmem},
				{Step: "solve", Source: "events", WorkingSetBytes: 64 * model.MiB, ShmemBytes: c.shmem},
			}
			tr.engineErr = errors.New("making /logs/verifier directories again before the verifier: the container has stopped (its step driver ended)")
			tr.driverOOM = true
			ev := model.Evidence{OOMKills: 2, InfraFailed: true}
			tr.attributionEvidence(&ev, Final{LimitHits: 3, LimitHitsKnown: true, KernelPeakBytes: 64 * model.MiB})
			_, cause, reason := assemble(tr.facts(ev))
			if cause != c.cause || !strings.Contains(reason, c.says) {
				t.Errorf("%s (%q); want %s, saying %q", cause, reason, c.cause, c.says)
			}
			if tr.res.OOMs[0].Driver || !tr.res.OOMs[1].Driver {
				t.Errorf("the driver's kill is not the one the log did not name: %+v", tr.res.OOMs)
			}
		})
	}
}
