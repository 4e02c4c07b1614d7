package ui

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/taskfile"
	"github.com/headroom-eval/headroom/themes"
	"github.com/muesli/termenv"
)

func TestMain(m *testing.M) {
	// Goldens hold text, not colour codes.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// t0 is the fixed clock of every golden.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func builtinTasks(t testing.TB) []model.Task {
	t.Helper()
	c, err := taskfile.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	var out []model.Task
	for _, l := range c.Tasks {
		out = append(out, l.Task)
	}
	return out
}

// fakeSweep is a sweep whose events the test feeds by hand.
type fakeSweep struct {
	id        string
	plan      model.Plan
	events    chan event.Event
	stopped   []string
	cancelled bool
	holds     []string // every Hold's why, in order
}

func (f *fakeSweep) ID() string                 { return f.id }
func (f *fakeSweep) Dir() string                { return "/tmp/" + f.id }
func (f *fakeSweep) Plan() model.Plan           { return f.plan }
func (f *fakeSweep) Events() <-chan event.Event { return f.events }
func (f *fakeSweep) StopTrial(id string) bool   { f.stopped = append(f.stopped, id); return true }
func (f *fakeSweep) Cancel()                    { f.cancelled = true }
func (f *fakeSweep) Hold(why string)            { f.holds = append(f.holds, why) }

// fakeLauncher plans like the real one and returns a fakeSweep.
type fakeLauncher struct {
	specs       []LaunchSpec
	last        *fakeSweep
	resumed     []string
	resumeTasks []model.Task
}

func (l *fakeLauncher) Launch(spec LaunchSpec) (Sweep, error) {
	plan, err := model.NewPlan(model.PlanSpec{Tasks: spec.Tasks, Agents: spec.Agents, Ratios: spec.Ratios, Scale: spec.Scale, Axes: spec.Axes, Repeats: spec.Repeats, Seed: spec.Seed, HostCPUs: 2, OnlyRepeat: spec.OnlyRepeat})
	if err != nil {
		return nil, err
	}
	l.specs = append(l.specs, spec)
	l.last = &fakeSweep{id: "20261129-120000-beef", plan: plan, events: make(chan event.Event, 1024)}
	return l.last, nil
}

// launcher is what a test's fake starts sweeps with (fakeLauncher, the
// real runner on a fake backend).
type launcher interface {
	Launch(LaunchSpec) (Sweep, error)
}

// testPort answers the console's Port from a test's fixtures: its
// launcher (which may resume too), and each answer a test sets (nil: the
// answer of a console with nothing behind it).
type testPort struct {
	launcher
	host       func() HostStat
	history    func() ([]Experiment, error)
	shell      func(string, model.Task) (*exec.Cmd, error)
	respec     func(model.Task) (model.Resources, bool)
	imageNote  func(model.Task) string
	policyArgs func(model.ResourcePolicy) []string
	reproduce  func(task, image string, p model.ResourcePolicy) string
	preparing  func() string
}

// portOf is the testPort testOptions gave o.
func portOf(o Options) *testPort { return o.Port.(*testPort) }

func (p *testPort) Launch(spec LaunchSpec) (Sweep, error) {
	if p.launcher == nil {
		return noPort{}.Launch(spec)
	}
	return p.launcher.Launch(spec)
}

func (p *testPort) Resume(exp Experiment) (Sweep, error) {
	if r, ok := p.launcher.(interface {
		Resume(Experiment) (Sweep, error)
	}); ok {
		return r.Resume(exp)
	}
	return noPort{}.Resume(exp)
}

func (p *testPort) HostStat() (HostStat, bool) {
	if p.host == nil {
		return noPort{}.HostStat()
	}
	return p.host(), true
}

func (p *testPort) History() ([]Experiment, error) {
	if p.history == nil {
		return noPort{}.History()
	}
	return p.history()
}

func (p *testPort) Shell(id string, task model.Task) (*exec.Cmd, error) {
	if p.shell == nil {
		return noPort{}.Shell(id, task)
	}
	return p.shell(id, task)
}

func (p *testPort) Respec(t model.Task) (model.Resources, bool) {
	if p.respec == nil {
		return noPort{}.Respec(t)
	}
	return p.respec(t)
}

func (p *testPort) ImageNote(t model.Task) string {
	if p.imageNote == nil {
		return ""
	}
	return p.imageNote(t)
}

func (p *testPort) PolicyArgs(pol model.ResourcePolicy) []string {
	if p.policyArgs == nil {
		return nil
	}
	return p.policyArgs(pol)
}

func (p *testPort) Reproduce(task, image string, pol model.ResourcePolicy) string {
	if p.reproduce == nil {
		return ""
	}
	return p.reproduce(task, image, pol)
}

func (p *testPort) Preparing() string {
	if p.preparing == nil {
		return ""
	}
	return p.preparing()
}

func testOptions(t testing.TB, l launcher) Options {
	return Options{
		Tasks: builtinTasks(t), Theme: themes.Plain(), HostCPUs: 2, Static: true,
		Now: func() time.Time { return t0.Add(3 * time.Second) },
		Port: &testPort{launcher: l,
			policyArgs: docker.RunFlags, reproduce: func(_, image string, p model.ResourcePolicy) string { return docker.Reproduce(model.Task{}, image, p) },
			host: func() HostStat { return HostStat{MemTotal: 24 << 30, MemAvailable: 20 << 30, CPUPercent: 37} },
			history: func() ([]Experiment, error) {
				return []Experiment{{ID: "20261128-093000-aaaa", Status: "finished", Trials: 63, Created: "2026-11-28 09:30",
					Tasks:  []string{"builtin/bn-fit-modify", "builtin/compile-project", "builtin/memory-hungry-tests", "builtin/swe-edit"},
					Ratios: []model.Ratio{{K: 1}, {K: 3}, model.Uncapped}, Repeats: 3},
					{ID: "20261127-170000-bbbb", Status: "interrupted", Trials: 12, Created: "2026-11-27 17:00",
						Tasks: []string{"builtin/bn-fit-modify"}, Ratios: []model.Ratio{{K: 1}, {K: 1.5}}, Repeats: 6}}, nil
			}},
		Seed: 1,
	}
}

// scriptedEvents plays a small sweep of bn-fit-modify·heavy at 1x and
// uncapped, two repeats, at fixed times: t0001 is OOM-killed in its install
// step, t0002 passes, t0003 is installing, t0004 is still queued.
func scriptedEvents(plan model.Plan) []event.Event {
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	b := func(id string, ms int) event.Base { return event.Base{Trial: id, Time: at(ms)} }
	tr := map[string]model.Trial{}
	for _, t := range plan.Trials {
		tr[t.ID] = t
	}
	install := model.Step{Name: "install", Show: "pip install pandas networkx scikit-learn"}
	verify := model.Step{Name: "verify", Show: "pytest tests/test_outputs.py"}
	var evs []event.Event
	evs = append(evs, event.SweepStarted{Base: b("", 0), Plan: plan})
	for _, t := range plan.Trials {
		evs = append(evs, event.TrialQueued{Base: b(t.ID, 0), Trial: t})
	}
	sample := func(id string, ms int, mb int64) event.Event {
		return event.MemorySample{Base: b(id, ms), Sample: event.Sample{Time: at(ms), WorkingSetBytes: mb << 20, UsageBytes: (mb + 6) << 20, CacheBytes: 6 << 20, CPUCores: 0.5}}
	}
	// t0001: killed at 1x.
	evs = append(evs, event.TrialStarted{Base: b("t0001", 100), ContainerID: "c0ffee0001aa", Image: "headroom-workload:abc", SampleSource: "cgroup-v1"},
		event.StepStarted{Base: b("t0001", 150), Phase: "agent", Step: install},
		event.OutputLine{Base: b("t0001", 200), Step: "install", Stream: "stdout", Text: "Collecting pandas"},
		event.OutputLine{Base: b("t0001", 300), Step: "install", Stream: "stdout", Text: "  Downloading pandas-2.2.3-cp311-cp311-manylinux_2_17_x86_64.whl (12.7 MB)"})
	for i, mb := range []int64{20, 60, 100, 127} {
		evs = append(evs, sample("t0001", 200+i*200, mb))
	}
	oom := model.OOMEvent{At: at(950), Step: "install", Source: "events", WorkingSetBytes: 127 << 20}
	detail := oom
	detail.Process, detail.PID, detail.RSSBytes, detail.Command = "hr-workload", 4242, 122<<20, install.Show // as the runner names it
	evs = append(evs, event.OOMKill{Base: b("t0001", 960), OOM: oom, LimitBytes: tr["t0001"].Policy.HardLimitBytes},
		event.OOMKill{Base: b("t0001", 965), OOM: detail, LimitBytes: tr["t0001"].Policy.HardLimitBytes, Detail: true},
		event.StepEnded{Base: b("t0001", 970), Result: model.StepResult{Name: "install", Show: install.Show, Phase: "agent", Start: at(150), End: at(970), ExitCode: 137, PeakWorkingSetBytes: 127 << 20, OOMKills: 1}},
		event.StepStarted{Base: b("t0001", 980), Phase: "verifier", Step: verify},
		event.OutputLine{Base: b("t0001", 1000), Step: "verify", Stream: "stdout", Text: "E   FileNotFoundError: model.json was never produced"},
		event.StepEnded{Base: b("t0001", 1100), Result: model.StepResult{Name: "verify", Show: verify.Show, Phase: "verifier", Start: at(980), End: at(1100), ExitCode: 1, PeakWorkingSetBytes: 6 << 20}})
	r1 := model.TrialResult{Trial: tr["t0001"], Outcome: model.OOMKilled, Reason: "OOM-killed in step install at limit 128MiB", ContainerID: "c0ffee0001aa",
		Start: at(0), End: at(1200), OOMs: []model.OOMEvent{detail}, KilledInStep: "install", PeakWorkingSetBytes: 127 << 20, SampleSource: "cgroup-v1"}
	evs = append(evs, event.TrialEnded{Base: b("t0001", 1200), Result: r1})
	// t0002: passes uncapped.
	evs = append(evs, event.TrialStarted{Base: b("t0002", 100), ContainerID: "c0ffee0002bb", Image: "headroom-workload:abc", SampleSource: "cgroup-v1"})
	for i, mb := range []int64{30, 90, 150, 165, 80} {
		evs = append(evs, sample("t0002", 200+i*300, mb))
	}
	r2 := model.TrialResult{Trial: tr["t0002"], Outcome: model.Passed, Reason: "", ContainerID: "c0ffee0002bb", Start: at(0), End: at(2000), PeakWorkingSetBytes: 165 << 20,
		Steps: []model.StepResult{{Name: "install", Show: install.Show, Phase: "agent", Start: at(150), End: at(1500), PeakWorkingSetBytes: 165 << 20}, {Name: "fit", Phase: "agent", Start: at(1500), End: at(1900), PeakWorkingSetBytes: 80 << 20}}}
	evs = append(evs, event.TrialEnded{Base: b("t0002", 2000), Result: r2})
	// t0003: installing now.
	evs = append(evs, event.TrialStarted{Base: b("t0003", 1300), ContainerID: "c0ffee0003cc", Image: "headroom-workload:abc", SampleSource: "cgroup-v1"},
		event.StepStarted{Base: b("t0003", 1400), Phase: "agent", Step: install},
		event.OutputLine{Base: b("t0003", 1500), Step: "install", Stream: "stdout", Text: "Collecting pandas"},
		event.OutputLine{Base: b("t0003", 1600), Step: "install", Stream: "stdout", Text: "Collecting networkx"},
		sample("t0003", 1500, 40), sample("t0003", 2500, 96))
	// t0004: held by admission.
	evs = append(evs, event.TrialWaiting{Base: b("t0004", 1300), Reason: "waiting for a slot (2 of 2 running)"})
	return evs
}

func heavyOnly(t testing.TB) model.Task {
	for _, task := range builtinTasks(t) {
		if task.Name == "builtin/bn-fit-modify" {
			a, _ := task.Agent("heavy")
			task.Agents = []model.Agent{a}
			return task
		}
	}
	t.Fatal("no bn-fit-modify")
	return model.Task{}
}

type runner_Event = event.Event

func trialEnded(r model.TrialResult) event.Event {
	return event.TrialEnded{Base: event.Base{Trial: r.ID, Time: r.End}, Result: r}
}

// Resume makes fakeLauncher a Resumer: it replays the heavy task's plan.
func (l *fakeLauncher) Resume(exp Experiment) (Sweep, error) {
	l.resumed = append(l.resumed, exp.ID)
	return l.Launch(LaunchSpec{Tasks: l.resumeTasks, Ratios: []model.Ratio{{K: 1}}, Repeats: 1, Concurrency: 1, Seed: 1, Label: "resume"})
}
