package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

func newTestTrial() (*trialRun, *[]event.Event) {
	var evs []event.Event
	t := &trialRun{r: &Runner{redact: Redactor(map[string]string{"KEY": "sk-secret-123"})}, trial: model.Trial{ID: "t1"}}
	t.emit = func(e event.Event) { evs = append(evs, e) }
	return t, &evs
}

// Processes become activities once they live past the threshold, under
// the step running then, redacted and on one line; a kill the kernel names
// by pid gets the command line and the tree at the last sample before it;
// a kill it does not name gets the largest process gone at the next sample.
func TestProcessSamplesBecomeActivities(t *testing.T) {
	tr, evs := newTestTrial()
	t0 := time.Unix(1000, 0)
	init := Proc{PID: 1, Command: "sleep infinity", Started: t0.Add(-time.Minute)}
	script := Proc{PID: 10, PPID: 1, Command: "sh agent.sh", Started: t0, RSSBytes: model.MiB}
	child := Proc{PID: 11, PPID: 10, Command: "python3 -c 'x = 1\nprint(x)' --key sk-secret-123", Started: t0.Add(100 * time.Millisecond), RSSBytes: 50 * model.MiB}
	brief := Proc{PID: 12, PPID: 10, Command: "true", Started: t0.Add(150 * time.Millisecond)}
	tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{init}})
	tr.step = "sh agent.sh"
	tr.procSample(ProcSample{Time: t0.Add(200 * time.Millisecond), Procs: []Proc{init, script, child, brief}})
	child.RSSBytes = 90 * model.MiB
	tr.procSample(ProcSample{Time: t0.Add(400 * time.Millisecond), Procs: []Proc{init, script, child}})
	acts := tr.res.Activities
	if len(acts) != 2 || acts[0].Command != "sh agent.sh" || acts[1].Command != "python3 -c 'x = 1 print(x)' --key [redacted KEY]" || acts[1].PeakRSSBytes != 90*model.MiB || acts[1].Step != "sh agent.sh" {
		t.Fatalf("activities %+v", acts)
	}
	// The kernel names pid 11.
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{PID: 11})
	tr.nameKill(0)
	k := tr.res.OOMs[0]
	if !strings.HasPrefix(k.Command, "python3 -c") || len(k.Tree) != 3 || k.Tree[0].PID != 11 || k.Tree[0].RSSBytes != 90*model.MiB || !tr.res.Activities[1].OOMKilled {
		t.Errorf("kill %+v", k)
	}
	// A kill with no pid: named by the next sample.
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{})
	tr.nameKill(1)
	tr.procSample(ProcSample{Time: t0.Add(600 * time.Millisecond), Procs: []Proc{init}})
	if got := tr.res.OOMs[1].Command; got != "sh agent.sh" && !strings.HasPrefix(got, "python3") {
		t.Errorf("unnamed kill named %q", got)
	}
	if tr.res.Activities[0].End.IsZero() || tr.res.Activities[1].End.IsZero() {
		t.Errorf("vanished activities not ended: %+v", tr.res.Activities)
	}
	var started, ended int
	for _, e := range *evs {
		switch e.(type) {
		case event.ActivityStarted:
			started++
		case event.ActivityEnded:
			ended++
		}
	}
	if started != 2 || ended != 2 {
		t.Errorf("%d started, %d ended events", started, ended)
	}
}

// A fork storm: past MaxActivities nothing more is kept, only counted.
func TestActivitiesAreCapped(t *testing.T) {
	tr, _ := newTestTrial()
	t0 := time.Unix(1000, 0)
	tr.procSample(ProcSample{Time: t0})
	for i := 0; i < 3*MaxActivities; i++ {
		p := Proc{PID: 100 + i, Command: fmt.Sprintf("sleep %d", i), Started: t0}
		tr.procSample(ProcSample{Time: t0.Add(time.Second), Procs: []Proc{p}})
		tr.procSample(ProcSample{Time: t0.Add(2 * time.Second), Truncated: 7})
	}
	if len(tr.res.Activities) != MaxActivities || tr.res.ActivitiesDropped != 2*MaxActivities || tr.res.ProcessesUnread != 7 {
		t.Errorf("%d kept, %d dropped, %d unread", len(tr.res.Activities), tr.res.ActivitiesDropped, tr.res.ProcessesUnread)
	}
	if len(tr.procs.seen) != 0 {
		t.Errorf("%d processes still tracked after they vanished", len(tr.procs.seen))
	}
}

func TestUntraceAndShims(t *testing.T) {
	wrapped := strings.Join(append([]string{"sh", "-c", traceWrapper, "headroom-trace"}, "-c", "sh agent.sh"), " ")
	if got := untrace(wrapped); got != tracedPrefix+"-c sh agent.sh" || !isEngineShim(got) {
		t.Errorf("untrace: %q", got)
	}
	// Since a Harbor step's wrapper starts with bash (traceArgv), and
	// the first bash it execs stays as the tee's pipeline for a teed
	// step: both were shown raw, the wrapper's script and all, as a
	// verifier's processes ("verify: bash -c exec 2>&3 3>&- 237>&1; …",
	// the new user of 2026-12-06).
	for _, c := range []struct{ argv []string }{
		{traceArgv([]string{"bash", "/tests/test.sh"}, true)},
		{[]string{"bash", "-c", traceBashInner, "/logs/verifier/test-stdout.txt", "bash", "/tests/test.sh"}},
		{[]string{"bash", "-lic", traceBashInner, "", "bash", "/tests/test.sh"}},
	} {
		if got := untrace(strings.Join(c.argv, " ")); got != tracedPrefix+"bash /tests/test.sh" || !isEngineShim(got) {
			t.Errorf("untrace(%.40q…) = %q", strings.Join(c.argv, " "), got)
		}
	}
	if !isEngineShim("/.headroom-replay/hr-workload term keys --dir /tmp/.headroom-term --wait 3s -- ls /root") || isEngineShim("/bin/bash --login") || isEngineShim("hr-workload run --step s") {
		t.Error("headroom's terminal is machinery, the shell it serves and a step's program are not")
	}
	if !isEngineShim("runc init") || isEngineShim("python3 -c x") {
		t.Error("shims")
	}
}

// A built-in step's process is shown as the step's own command, its jobs
// as that command's, and the step driver's fork is not an activity: the
// record and every face read `pip install pandas networkx scikit-learn`,
// never hr-workload's argv and profile.
func TestBuiltinStepProcessesAreShownAsTheirCommand(t *testing.T) {
	tr, _ := newTestTrial()
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn",
		Argv: []string{"/hr-workload", "run", "--step", "install", "--profile", `{"style":"pip","packages":["pandas","networkx","scikit-learn"],"duration_ms":5000}`}}
	tr.task = model.Task{Agents: []model.Agent{{Name: "heavy", Steps: []model.Step{install}}}}
	tr.trial.Agent = "heavy"
	t0 := time.Unix(1000, 0)
	driver := Proc{PID: 1, Command: "/hr-workload drive", Started: t0.Add(-time.Minute)}
	tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{driver}})
	tr.step = "install"
	step := Proc{PID: 10, PPID: 1, Command: strings.Join(install.Argv, " "), Started: t0, RSSBytes: 100 * model.MiB}
	job := Proc{PID: 11, PPID: 10, Command: "/hr-workload child --mb 26.0 --ms 1200", Started: t0, RSSBytes: 26 * model.MiB}
	fork := Proc{PID: 12, PPID: 1, Command: "/hr-workload drive", Started: t0}
	blank := Proc{PID: 13, PPID: 1, Command: "", Started: t0}
	tr.procSample(ProcSample{Time: t0.Add(300 * time.Millisecond), Procs: []Proc{driver, step, job, fork, blank}})
	var got []string
	for _, a := range tr.res.Activities {
		got = append(got, a.Command)
	}
	want := []string{install.Show, install.Show + " (a job it started)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("activities %q, want %q", got, want)
	}
	// The kernel names the program; the watch saw the pid.
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "hr-workload", PID: 10})
	tr.nameKill(0)
	if k := tr.res.OOMs[0]; k.Command != install.Show || strings.Contains(fmt.Sprint(k.Tree), "--profile") {
		t.Errorf("kill %+v", k)
	}
	// The kernel names the program; the watch never saw the pid.
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "hr-workload", PID: 99})
	tr.nameKill(1)
	if k := tr.res.OOMs[1]; k.Command != install.Show {
		t.Errorf("unseen kill named %q", k.Command)
	}
}

// The driver's first program of a step where it raises the step's OOM
// score (hr-workload step ADJ PATH ARGV...) is, read before its exec,
// what it will run: it was shown raw, profile and all, on a loaded host
// ("install: hr-workload step 57 /hr-workload /hr-workload run --step
// install --profile {…}", the new user of 2026-12-06).
func TestRaiseStepWrapperIsShownAsItsStep(t *testing.T) {
	tr, _ := newTestTrial()
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn",
		Argv: []string{"/hr-workload", "run", "--step", "install", "--profile", `{"style":"pip"}`}}
	tr.task = model.Task{Agents: []model.Agent{{Name: "heavy", Steps: []model.Step{install}}}}
	tr.trial.Agent = "heavy"
	t0 := time.Unix(1000, 0)
	driver := Proc{PID: 1, Command: "/hr-workload drive", Started: t0.Add(-time.Minute), Role: RoleDriver}
	tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{driver}, Roles: true})
	tr.step = "install"
	raw := "hr-workload step 57 /hr-workload " + strings.Join(install.Argv, " ")
	step := Proc{PID: 10, PPID: 1, Command: raw, Started: t0, RSSBytes: 10 * model.MiB, Role: RoleStep}
	tr.procSample(ProcSample{Time: t0.Add(300 * time.Millisecond), Procs: []Proc{driver, step}, Roles: true})
	if len(tr.res.Activities) != 1 || tr.res.Activities[0].Command != install.Show {
		t.Errorf("activities %+v, want the step's own command %q", tr.res.Activities, install.Show)
	}
}

// Where the backend knows the driver and the step by their pids (the
// step driver's), a process that names itself `hr-workload drive` or
// `hr-workload run --step install …` is shown as what it says it is, not
// as headroom's driver nor as the built-in step's command; the real ones
// are shown as before.
func TestImpostorsOfTheDriverAndStepsAreShownAsThemselves(t *testing.T) {
	tr, _ := newTestTrial()
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn",
		Argv: []string{"/.headroom/hr-workload", "run", "--step", "install", "--profile", `{"style":"pip"}`}}
	tr.task = model.Task{Agents: []model.Agent{{Name: "heavy", Steps: []model.Step{install}}}}
	tr.trial.Agent = "heavy"
	t0 := time.Unix(1000, 0)
	driver := Proc{PID: 1, Command: "/.headroom/hr-workload drive", Started: t0.Add(-time.Minute), Role: RoleDriver}
	tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{driver}, Roles: true})
	tr.step = "install"
	step := Proc{PID: 10, PPID: 1, Command: strings.Join(install.Argv, " "), Started: t0, RSSBytes: 10 * model.MiB, Role: RoleStep}
	job := Proc{PID: 11, PPID: 10, Command: "/.headroom/hr-workload child --mb 26.0 --ms 1200", Started: t0}
	fakeDriver := Proc{PID: 20, PPID: 1, Command: "/.headroom/hr-workload drive", Started: t0, RSSBytes: 300 * model.MiB}
	fakeStep := Proc{PID: 21, PPID: 1, Command: "hr-workload run --step install --profile {}", Started: t0, RSSBytes: 300 * model.MiB}
	fakeJob := Proc{PID: 22, PPID: 21, Command: "hr-workload child --mb 1 --ms 1", Started: t0}
	tr.procSample(ProcSample{Time: t0.Add(300 * time.Millisecond), Procs: []Proc{driver, step, job, fakeDriver, fakeStep, fakeJob}, Roles: true})
	var got []string
	for _, a := range tr.res.Activities {
		got = append(got, a.Command)
	}
	want := []string{install.Show, install.Show + " (a job it started)", fakeDriver.Command, fakeStep.Command, fakeJob.Command}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("activities %q, want %q", got, want)
	}
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "dd", PID: 20})
	tr.nameKill(0)
	if k := tr.res.OOMs[0]; k.Command != fakeDriver.Command {
		t.Errorf("a kill of the process named like the driver is named %q, want %q", k.Command, fakeDriver.Command)
	}
}

// A step's process named by its role keeps that name when a later sample
// reads it without the role (the step ending, the driver's pid for it
// reset, the list read late): the record never falls back to hr-workload's
// argv (the catalog sweep's records, in a CI run: `/hr-workload run --step
// make --profile {…}` beside its jobs, named right). An impostor never
// named by a role is still shown as itself.
func TestAStepProcessKeepsItsNameWhenItsRoleIsLost(t *testing.T) {
	tr, _ := newTestTrial()
	mk := model.Step{Name: "make", Show: "make -j4", Argv: []string{"/hr-workload", "run", "--step", "make", "--profile", `{"style":"build"}`}}
	tr.task = model.Task{Agents: []model.Agent{{Name: "agent", Steps: []model.Step{mk}}}}
	tr.trial.Agent = "agent"
	t0 := time.Unix(1000, 0)
	driver := Proc{PID: 1, Command: "/hr-workload drive", Started: t0.Add(-time.Minute), Role: RoleDriver}
	tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{driver}, Roles: true})
	tr.step = "make"
	step := Proc{PID: 10, PPID: 1, Command: strings.Join(mk.Argv, " "), Started: t0, Role: RoleStep}
	impostor := Proc{PID: 20, PPID: 1, Command: "/hr-workload run --step make --profile {}", Started: t0}
	tr.procSample(ProcSample{Time: t0.Add(300 * time.Millisecond), Procs: []Proc{driver, step, impostor}, Roles: true})
	step.Role = "" // the step ending: the driver no longer says its pid
	tr.procSample(ProcSample{Time: t0.Add(400 * time.Millisecond), Procs: []Proc{driver, step, impostor}, Roles: true})
	got := map[int]string{}
	for _, a := range tr.res.Activities {
		got[a.PID] = a.Command
	}
	if got[10] != "make -j4" {
		t.Errorf("the step's process is recorded as %q, want its command %q", got[10], "make -j4")
	}
	if got[20] != impostor.Command {
		t.Errorf("the impostor is recorded as %q, want itself", got[20])
	}
}

// The step driver's fork read before its exec (Proc.Forked: the backend
// saw the driver's own command line and name) is the step's process: under
// load its kill was named `/hr-workload drive` in the banner, the record
// and the headless lines. It is named as the step's command, whether the
// driver has said its pid yet or not, and a fork of the step's process
// read so as one of its jobs; a process that only calls itself the driver
// (not a fork of it) is still shown as itself.
func TestAForkOfTheDriverIsNamedAsTheStep(t *testing.T) {
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn",
		Argv: []string{"/hr-workload", "run", "--step", "install", "--profile", `{"style":"pip"}`}}
	for _, role := range []string{RoleStep, ""} {
		tr, _ := newTestTrial()
		tr.task = model.Task{Agents: []model.Agent{{Name: "heavy", Steps: []model.Step{install}}}}
		tr.trial.Agent = "heavy"
		t0 := time.Unix(1000, 0)
		driver := Proc{PID: 1, Command: "/hr-workload drive", Started: t0.Add(-time.Minute), Role: RoleDriver}
		tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{driver}, Roles: true})
		tr.step = "install"
		step := Proc{PID: 10, PPID: 1, Command: "/hr-workload drive", Started: t0, RSSBytes: 100 * model.MiB, Role: role, Forked: true}
		job := Proc{PID: 11, PPID: 10, Command: strings.Join(install.Argv, " "), Started: t0, Forked: true}
		impostor := Proc{PID: 20, PPID: 1, Command: "/hr-workload drive", Started: t0}
		tr.procSample(ProcSample{Time: t0.Add(300 * time.Millisecond), Procs: []Proc{driver, step, job, impostor}, Roles: true})
		tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "hr-workload", PID: 10})
		tr.nameKill(0)
		if k := tr.res.OOMs[0]; k.Command != install.Show {
			t.Errorf("role %q: the kill of the driver's fork is named %q, want %q", role, k.Command, install.Show)
		}
		got := map[int]string{}
		for _, a := range tr.res.Activities {
			got[a.PID] = a.Command
		}
		if got[10] != install.Show || got[20] != impostor.Command {
			t.Errorf("role %q: activities %v", role, got)
		}
		if role == RoleStep && got[11] != install.Show+" (a job it started)" {
			t.Errorf("the step's fork is recorded as %q, want one of its jobs", got[11])
		}
	}
}

// The kernel killed the step's process and then, before that memory was
// freed, headroom's step driver (seen on cgroup v1 under load): the
// second kill is marked the driver's, by its pid's role, so the trial
// says so (CauseDriverKilled) and no screen names it as the task's.
func TestAKillOfTheDriverIsMarked(t *testing.T) {
	tr, _ := newTestTrial()
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn",
		Argv: []string{"/hr-workload", "run", "--step", "install", "--profile", `{"style":"pip"}`}}
	tr.task = model.Task{Agents: []model.Agent{{Name: "heavy", Steps: []model.Step{install}}}}
	tr.trial.Agent = "heavy"
	t0 := time.Unix(1000, 0)
	driver := Proc{PID: 1271, Command: "/hr-workload drive", Started: t0.Add(-time.Minute), Role: RoleDriver}
	tr.step = "install"
	step := Proc{PID: 1389, PPID: 1271, Command: strings.Join(install.Argv, " "), Started: t0, RSSBytes: 126 * model.MiB, Role: RoleStep}
	tr.procSample(ProcSample{Time: t0.Add(300 * time.Millisecond), Procs: []Proc{driver, step}, Roles: true})
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "hr-workload", PID: 1389}, model.OOMEvent{Step: "install", Process: "hr-workload", PID: 1271})
	tr.nameKill(0)
	tr.nameKill(1)
	if k := tr.res.OOMs[0]; k.Driver || k.Command != install.Show {
		t.Errorf("the step's kill: driver %v, named %q; want the task's, %q", k.Driver, k.Command, install.Show)
	}
	if k := tr.res.OOMs[1]; !k.Driver {
		t.Errorf("the driver's kill (named %q) is not marked the driver's", k.Command)
	}
	var ev model.Evidence
	tr.attributionEvidence(&ev, Final{})
	if !ev.DriverKilled {
		t.Error("the evidence does not say the driver was killed")
	}
}

// A process read mid-exec has no command line ("[hr-workload]" by its
// name): the driver, the step's process and its jobs are named by their
// pids as ever (under load the driver was kept as [hr-workload] and its
// step's kill named `/hr-workload drive`); without roles it stays as read.
func TestAProcessReadMidExecIsNamedByItsRole(t *testing.T) {
	tr, _ := newTestTrial()
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn",
		Argv: []string{"/hr-workload", "run", "--step", "install", "--profile", `{"style":"pip"}`}}
	tr.task = model.Task{Agents: []model.Agent{{Name: "heavy", Steps: []model.Step{install}}}}
	tr.trial.Agent = "heavy"
	tr.step = "install"
	yes := func(string) bool { return true }
	is := func(want string) func(string) bool { return func(r string) bool { return r == want } }
	for _, c := range []struct {
		name       string
		is, parent func(string) bool
		want       string
	}{
		{"the driver", is(RoleDriver), is(""), stepDriverShown},
		{"the step's process", is(RoleStep), is(RoleDriver), install.Show},
		{"the driver's fork", is(""), is(RoleDriver), install.Show},
		{"a job of the step", is(""), is(RoleStep), install.Show + " (a job it started)"},
		{"no roles", yes, yes, "[hr-workload]"},
	} {
		if got := tr.shown("[hr-workload]", c.is, c.parent, false); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// A process last read between its fork and its exec, and killed before
// it was read again, is named by the kernel's name for it, not by its
// parent's command line (make hostile's impostor row: a `(exec -a … dd
// bs=300M)` subshell's kill was named as the step's `bash -c …`).
func TestAKillReadOnlyAsItsParentsForkIsTheKernelsName(t *testing.T) {
	tr, _ := newTestTrial()
	t0 := time.Unix(1000, 0)
	shell := Proc{PID: 20, PPID: 1, Command: "bash -c (exec -a x dd bs=300M); echo done", Started: t0.Add(-time.Second)}
	fork := Proc{PID: 21, PPID: 20, Command: shell.Command, Started: t0, Forked: true}
	sub := Proc{PID: 22, PPID: 20, Command: "sleep 60", Started: t0}
	tr.procSample(ProcSample{Time: t0.Add(100 * time.Millisecond), Procs: []Proc{shell, fork, sub}})
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "dd", PID: 21}, model.OOMEvent{Step: "install", Process: "sleep", PID: 22})
	tr.nameKill(0)
	tr.nameKill(1)
	if got := tr.res.OOMs[0].Command; got != "dd" {
		t.Errorf("the fork's kill is named %q, want the kernel's dd", got)
	}
	if got := tr.res.OOMs[1].Command; got != "sleep 60" {
		t.Errorf("a process read after its exec is named %q, want its own line", got)
	}
}

// A kill of a process the watch never read (killed before its first
// read: make hostile's impostor dd) is named by the kernel's name for it,
// not left empty.
func TestAKillNeverReadIsTheKernelsName(t *testing.T) {
	tr, _ := newTestTrial()
	t0 := time.Unix(1000, 0)
	shell := Proc{PID: 20, PPID: 1, Command: "bash -c dd bs=300M", Started: t0.Add(-time.Second)}
	tr.procSample(ProcSample{Time: t0, Procs: []Proc{shell}})
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "install", Process: "dd", PID: 23})
	tr.nameKill(0)
	if got := tr.res.OOMs[0].Command; got != "dd" {
		t.Errorf("a kill never read is named %q, want the kernel's dd", got)
	}
	if got := tr.res.OOMs[0].Tree; len(got) != 1 || got[0].PID != 20 {
		t.Errorf("tree %+v, want the last sample's", got)
	}
}

// A process an agent step left running (nohup'd, the step's script
// ended) and killed during the verifier's step: the kill names the agent
// step that left it, the verifier's step records that process's memory
// as a leftover's, and a process of the verifier's own script is not
// one. Read only after its step had ended, it is the step it was born
// in that left it.
func TestAKillOfALeftoverNamesTheStepThatLeftIt(t *testing.T) {
	for _, seenInAgent := range []bool{true, false} {
		tr, _ := newTestTrial()
		t0 := time.Now().Add(-time.Minute)
		init := Proc{PID: 1, Command: "sleep infinity", Started: t0.Add(-time.Minute)}
		tr.procSample(ProcSample{Time: t0, Procs: []Proc{init}})
		tr.newScript()
		tr.procs.scriptStart, tr.procs.firstScript = t0, t0 // on this test's clock: the agent's script began at t0, the hog after it
		tr.openStep("nohup python3 hog.py", t0)
		tr.res.Steps = append(tr.res.Steps, model.StepResult{Name: "nohup python3 hog.py", Phase: model.PhaseAgent, Start: t0, End: t0.Add(time.Second)})
		hog := Proc{PID: 20, PPID: 1, Command: "python3 hog.py", Started: t0.Add(100 * time.Millisecond), RSSBytes: 10 * model.MiB}
		if seenInAgent {
			tr.procSample(ProcSample{Time: t0.Add(500 * time.Millisecond), Procs: []Proc{init, hog}})
		}
		tr.newScript()
		tr.openStep("sleep 10", time.Now())
		own := Proc{PID: 30, PPID: 1, Command: "bash -x /tests/test.sh", Started: time.Now(), RSSBytes: 3 * model.MiB}
		hog.RSSBytes = 118 * model.MiB
		tr.procSample(ProcSample{Time: time.Now(), Procs: []Proc{init, hog, own}})
		tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 10", Process: "python3", PID: 20})
		tr.nameKill(0)
		if k := tr.res.OOMs[0]; k.StartedInStep != "nohup python3 hog.py" {
			t.Errorf("seen in the agent's step %v: the kill's step left running from %q, want the agent's step", seenInAgent, k.StartedInStep)
		}
		sr := model.StepResult{Name: "sleep 10", Phase: model.PhaseVerifier}
		tr.takeLeftovers(&sr)
		if sr.LeftoverRSSBytes != 118*model.MiB || !strings.Contains(sr.LeftoverFrom, "python3 hog.py (left running by step nohup python3 hog.py)") {
			t.Errorf("seen in the agent's step %v: the verifier's step's leftovers %d %q, want the hog's 118 MiB alone", seenInAgent, sr.LeftoverRSSBytes, sr.LeftoverFrom)
		}
		tr.res.Steps = append(tr.res.Steps, sr)
		tr.res.KilledInStep = "sleep 10"
		if got := tr.killedIn(); !strings.Contains(got, "sleep 10 (in the verifier; the process killed, python3 hog.py, was left running by agent step nohup python3 hog.py") {
			t.Errorf("the kill said %q", got)
		}
	}
}

// A process the container's entrypoint started before any step (a
// service, a background job of the image's ENTRYPOINT) and killed at the
// limit while the agent's step ran: the kill says it was the
// environment's, started before any step, naming no step that left it;
// the step counts its memory as not its own; its activity is no step's.
// So whether the watch read it before the first step (in the container's
// first sample, or a later one) or only once a step ran (born before it),
// and, with no start time, only when read before any step. A process
// the step's own script started is still the step's.
func TestAKillOfAnEntrypointProcessIsTheEnvironments(t *testing.T) {
	for _, seen := range []string{"first sample", "before any step", "in the step, born before it"} {
		tr, _ := newTestTrial()
		t0 := time.Now().Add(-time.Minute)
		init := Proc{PID: 1, Command: "/bin/sh /start.sh sh -c sleep infinity", Started: t0.Add(-time.Second), RSSBytes: model.MiB}
		hog := Proc{PID: 7, PPID: 1, Command: "python3 /hog.py", Started: t0.Add(-500 * time.Millisecond), RSSBytes: 10 * model.MiB}
		switch seen {
		case "first sample":
			tr.procSample(ProcSample{Time: t0, Procs: []Proc{init, hog}})
		case "before any step":
			tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{init}})
			tr.procSample(ProcSample{Time: t0, Procs: []Proc{init, hog}})
		default:
			tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{init}})
		}
		tr.newScript()
		tr.procs.scriptStart, tr.procs.firstScript = t0, t0 // on this test's clock: the agent's script began at t0
		tr.openStep("sleep 8", t0)
		tr.res.Steps = append(tr.res.Steps, model.StepResult{Name: "sleep 8", Phase: model.PhaseAgent, Start: t0})
		own := Proc{PID: 30, PPID: 1, Command: "bash -x /solution/solve.sh", Started: t0.Add(50 * time.Millisecond), RSSBytes: 3 * model.MiB}
		hog.RSSBytes = 118 * model.MiB
		tr.procSample(ProcSample{Time: t0.Add(time.Second), Procs: []Proc{init, hog, own}})
		tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 8", Process: "python3", PID: 7})
		tr.nameKill(0)
		if k := tr.res.OOMs[0]; !k.Entrypoint || k.StartedInStep != "" || k.Command != "python3 /hog.py" {
			t.Errorf("read %s: the kill %+v, want python3 /hog.py, entrypoint, started in no step", seen, k)
		}
		sr := model.StepResult{Name: "sleep 8", Phase: model.PhaseAgent}
		tr.takeLeftovers(&sr)
		if sr.LeftoverRSSBytes != 119*model.MiB || sr.LeftoverFrom != "python3 /hog.py (started by the container's entrypoint)" {
			t.Errorf("read %s: the step's memory not its own %d %q, want the hog's and PID 1's 119 MiB, from the hog", seen, sr.LeftoverRSSBytes, sr.LeftoverFrom)
		}
		for _, a := range tr.res.Activities {
			if a.PID == 7 && a.Step != "" {
				t.Errorf("read %s: the hog's activity is charged to step %q, want none", seen, a.Step)
			}
			if a.PID == 30 && a.Step != "sleep 8" {
				t.Errorf("read %s: the step's own script's activity is in step %q", seen, a.Step)
			}
		}
		tr.res.KilledInStep = "sleep 8"
		if got := tr.killedIn(); got != "sleep 8 (in the agent; the process killed, python3 /hog.py, was started by the container's entrypoint: the task's environment, not this step's own)" {
			t.Errorf("read %s: the kill said %q", seen, got)
		}
		// The step's own script, killed: the step's.
		tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 8", Process: "bash", PID: 30})
		tr.nameKill(1)
		if k := tr.res.OOMs[1]; k.Entrypoint || k.StartedInStep != "" {
			t.Errorf("read %s: the step's own script's kill %+v, want the step's", seen, k)
		}
	}
	// No start time (the engine's top): a process first read once a step
	// ran cannot be told from the step's, and is the step's.
	tr, _ := newTestTrial()
	t0 := time.Now().Add(-time.Minute)
	tr.procSample(ProcSample{Time: t0, Procs: []Proc{{PID: 1, Command: "sleep infinity"}}})
	tr.newScript()
	tr.openStep("sleep 8", t0)
	tr.procSample(ProcSample{Time: t0.Add(time.Second), Procs: []Proc{{PID: 1, Command: "sleep infinity"}, {PID: 7, PPID: 1, Command: "python3 /hog.py", RSSBytes: 100 * model.MiB}}})
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 8", PID: 7})
	tr.nameKill(0)
	if k := tr.res.OOMs[0]; k.Entrypoint {
		t.Errorf("no start time, first read in the step: %+v said the entrypoint's", k)
	}
}

// headroom's step driver (the container's PID 1 where steps go through
// it) is in the container before any step but is no environment's
// process: the steps' memory not their own does not count it, and the
// engine's shim neither.
func TestTheDriverIsNotTheEnvironment(t *testing.T) {
	tr, _ := newTestTrial()
	t0 := time.Now().Add(-time.Minute)
	driver := Proc{PID: 1, Command: "/hr-workload drive", Started: t0.Add(-time.Second), RSSBytes: 4 * model.MiB, Role: RoleDriver}
	shim := Proc{PID: 2, PPID: 1, Command: "runc init", Started: t0.Add(-time.Second), RSSBytes: 2 * model.MiB}
	tr.procSample(ProcSample{Time: t0, Procs: []Proc{driver, shim}, Roles: true})
	tr.newScript()
	tr.procs.scriptStart, tr.procs.firstScript = t0, t0
	tr.openStep("sleep 8", t0)
	tr.procSample(ProcSample{Time: t0.Add(time.Second), Procs: []Proc{driver, shim}, Roles: true})
	sr := model.StepResult{Name: "sleep 8"}
	tr.takeLeftovers(&sr)
	if sr.LeftoverRSSBytes != 0 || sr.LeftoverFrom != "" {
		t.Errorf("the driver and the shim counted as the environment's: %d %q", sr.LeftoverRSSBytes, sr.LeftoverFrom)
	}
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 8", PID: 1, Driver: true})
	tr.nameKill(0)
	if tr.res.OOMs[0].Entrypoint {
		t.Errorf("the driver's kill said the entrypoint's: %+v", tr.res.OOMs[0])
	}
}

// The idle command headroom gives a container (exec'd by an image's
// entrypoint, PID 1's `sleep infinity`) is headroom's keep-alive, not the
// task's environment: every step of an exec-mode trial recorded it as
// memory not its own.
func TestTheKeepAliveIsNotTheEnvironment(t *testing.T) {
	for _, idle := range []string{"sleep infinity", "sh -c sleep infinity"} {
		tr, _ := newTestTrial()
		tr.task.IdleCommand = []string{"sh", "-c", "sleep infinity"}
		t0 := time.Now().Add(-time.Minute)
		keep := Proc{PID: 1, Command: idle, Started: t0.Add(-time.Second), RSSBytes: model.MiB}
		// First read as the image's entrypoint, which then execs the
		// idle command.
		entry := keep
		entry.Command = "/bin/sh /start.sh " + idle
		tr.procSample(ProcSample{Time: t0.Add(-2 * time.Second), Procs: []Proc{entry}})
		tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{keep}})
		tr.newScript()
		tr.procs.scriptStart, tr.procs.firstScript = t0, t0
		tr.openStep("sleep 8", t0)
		tr.res.Steps = append(tr.res.Steps, model.StepResult{Name: "sleep 8", Phase: model.PhaseAgent, Start: t0})
		tr.procSample(ProcSample{Time: t0.Add(time.Second), Procs: []Proc{keep, {PID: 30, PPID: 1, Command: "bash -x /solution/solve.sh", Started: t0.Add(50 * time.Millisecond), RSSBytes: 3 * model.MiB}}})
		sr := model.StepResult{Name: "sleep 8", Phase: model.PhaseAgent}
		tr.takeLeftovers(&sr)
		if sr.LeftoverRSSBytes != 0 || sr.LeftoverFrom != "" {
			t.Errorf("PID 1 %q (the idle command): the step's memory not its own %d from %q, want none", idle, sr.LeftoverRSSBytes, sr.LeftoverFrom)
		}
	}
}

// A process the entrypoint started 60 ms before the first step's script
// (the engine starts a container and headroom its first step that
// quickly) is the environment's; one started after the script was taken
// to start, within a clock tick of it, is not. The leftover rule's
// 100 ms slack had charged such an entrypoint's process to the step.
func TestAnEntrypointProcessJustBeforeTheFirstStep(t *testing.T) {
	var pt procTracker
	t0 := time.Now()
	pt.script, pt.firstScript = 1, t0
	for _, c := range []struct {
		born time.Duration
		env  bool
	}{{-60 * time.Millisecond, true}, {-30 * time.Millisecond, true}, {-5 * time.Millisecond, false}, {40 * time.Millisecond, false}} {
		if got := pt.beforeSteps(Proc{PID: 7, Started: t0.Add(c.born)}, "solve", 0); got != c.env {
			t.Errorf("born %s from the first script: the environment's %v, want %v", c.born, got, c.env)
		}
	}
}

// A process the entrypoint forks after the first step began (a loaded
// host) is the environment's where the backend says it is in the
// entrypoint's session (steps are engine execs, each a session of its
// own); one in a step's session, or with no session known, is the step's
// by its start time. By start time alone such a hog was charged to the
// step (the CI rehearsal of 2026-12-07, make hostile's entrypoint row).
func TestAnEntrypointProcessForkedAfterTheFirstStepIsTheEnvironments(t *testing.T) {
	for _, c := range []struct {
		session, init int
		env           bool
	}{{100, 100, true}, {230, 100, false}, {100, 0, false}, {0, 0, false}} {
		tr, _ := newTestTrial()
		t0 := time.Now().Add(-time.Minute)
		init := Proc{PID: 100, Command: "/bin/sh /start.sh", Started: t0.Add(-time.Second), Session: 100}
		tr.procSample(ProcSample{Time: t0.Add(-time.Second), Procs: []Proc{init}, InitSession: c.init})
		tr.newScript()
		tr.procs.scriptStart, tr.procs.firstScript = t0, t0
		tr.openStep("sleep 8", t0)
		tr.res.Steps = append(tr.res.Steps, model.StepResult{Name: "sleep 8", Phase: model.PhaseAgent, Start: t0})
		hog := Proc{PID: 120, PPID: 100, Command: "python3 /hog.py", Started: t0.Add(300 * time.Millisecond), RSSBytes: 100 * model.MiB, Session: c.session}
		tr.procSample(ProcSample{Time: t0.Add(time.Second), Procs: []Proc{init, hog}, InitSession: c.init})
		tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 8", Process: "python3", PID: 120})
		tr.nameKill(0)
		if k := tr.res.OOMs[0]; k.Entrypoint != c.env {
			t.Errorf("session %d, the entrypoint's %d: the kill said the entrypoint's %v, want %v", c.session, c.init, k.Entrypoint, c.env)
		}
	}
}

// A leftover that grew to the limit between two samples and was killed
// there counts in the running step's memory not its own at the kernel's
// figure for it, not the small one the samples read (make hostile's
// verifier-leftover row in CI: 38.8 MB recorded for a 125 MiB kill).
func TestALeftoversKillCountsAtTheKernelsFigure(t *testing.T) {
	tr, _ := newTestTrial()
	t0 := time.Now().Add(-time.Minute)
	init := Proc{PID: 1, Command: "sleep infinity", Started: t0.Add(-time.Minute)}
	tr.procSample(ProcSample{Time: t0, Procs: []Proc{init}})
	tr.newScript()
	tr.procs.scriptStart, tr.procs.firstScript = t0, t0
	tr.openStep("nohup python3 hog.py", t0)
	tr.res.Steps = append(tr.res.Steps, model.StepResult{Name: "nohup python3 hog.py", Phase: model.PhaseAgent, Start: t0, End: t0.Add(time.Second)})
	hog := Proc{PID: 20, PPID: 1, Command: "python3 hog.py", Started: t0.Add(100 * time.Millisecond), RSSBytes: 2 * model.MiB}
	tr.procSample(ProcSample{Time: t0.Add(500 * time.Millisecond), Procs: []Proc{init, hog}})
	tr.newScript()
	tr.openStep("sleep 10", time.Now())
	hog.RSSBytes = 37 * model.MiB // the last sample before the kill
	tr.procSample(ProcSample{Time: time.Now(), Procs: []Proc{init, hog}})
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{Step: "sleep 10", Process: "python3", PID: 20, RSSBytes: 125 * model.MiB})
	tr.nameKill(0)
	sr := model.StepResult{Name: "sleep 10", Phase: model.PhaseVerifier}
	tr.takeLeftovers(&sr)
	if sr.LeftoverRSSBytes != 125*model.MiB || !strings.Contains(sr.LeftoverFrom, "python3 hog.py (left running by step nohup python3 hog.py)") {
		t.Errorf("the step's memory not its own %d from %q, want the kill's 125 MiB from the hog", sr.LeftoverRSSBytes, sr.LeftoverFrom)
	}
}

// The killed process in the tree at a kill shows the resident set the
// kernel's report gave it when the last sample read it smaller: on a
// loaded host the sample that still had the process read it as the
// kernel reaped it, 0 B beside the kernel's 381 MiB (runner/docker's
// TestInstalledAgentChildKillIsNamed, once).
func TestKillTreeShowsTheKernelsRSSOfTheKilled(t *testing.T) {
	tr, _ := newTestTrial()
	t0 := time.Unix(1000, 0)
	script := Proc{PID: 10, PPID: 1, Command: "sh agent.sh", Started: t0, RSSBytes: model.MiB}
	child := Proc{PID: 11, PPID: 10, Command: "python3 -c big", Started: t0, RSSBytes: 0}
	tr.step = "sh agent.sh"
	tr.procSample(ProcSample{Time: t0.Add(200 * time.Millisecond), Procs: []Proc{script, child}})
	tr.res.OOMs = append(tr.res.OOMs, model.OOMEvent{PID: 11, RSSBytes: 381 * model.MiB})
	tr.nameKill(0)
	tree := tr.res.OOMs[0].Tree
	if len(tree) != 2 || tree[0].PID != 11 || tree[0].RSSBytes != 381*model.MiB || tree[1].RSSBytes != model.MiB {
		t.Errorf("tree at the kill %+v; want pid 11 first at the kernel's 381MiB, the script at its sampled 1MiB", tree)
	}
}

// A pipeline's commands are traced one by one, in no set order, and each
// that joins renames the step: its kills so far, and the processes first
// seen in it, take the pipeline's name, so a kill is named the same way
// whichever command bash traced first (a new user's head | tail | wc:
// three names over 20 runs, once "left running by step wc -c" in its
// own pipeline).
func TestAJoiningPipelineCommandRenamesTheStepsKills(t *testing.T) {
	var res model.TrialResult
	tr := &trialRun{recorder: newRecorder(&res, 0, nil)}
	tr.out = &res
	before := tr.openStep("wc -c", time.Now())
	res.OOMs = append(res.OOMs, model.OOMEvent{Step: "wc -c", StartedInStep: "wc -c", Process: "tail"})
	tr.procs.seen = map[procKey]*trackedProc{{pid: 7}: {step: "wc -c"}, {pid: 8}: {step: "earlier", script: 0}}
	tr.renameStep("head -c 80M /dev/zero | tail -n 1 | wc -c", before)
	o := res.OOMs[0]
	if o.Step != "head -c 80M /dev/zero | tail -n 1 | wc -c" || o.StartedInStep != "" {
		t.Errorf("kill in %q started in %q; want the pipeline's name and no other step", o.Step, o.StartedInStep)
	}
	if tr.step != o.Step || tr.procs.seen[procKey{pid: 7}].step != o.Step || tr.procs.seen[procKey{pid: 8}].step != "earlier" {
		t.Errorf("running step %q, processes %q %q", tr.step, tr.procs.seen[procKey{pid: 7}].step, tr.procs.seen[procKey{pid: 8}].step)
	}
}
