package ui

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

func TestReductionOfTheScriptedSweep(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	s := m.State()
	if s.Done != 2 || s.Running != 1 || s.Counts[model.OOMKilled] != 1 || s.Counts[model.Passed] != 1 {
		t.Errorf("done %d running %d counts %v", s.Done, s.Running, s.Counts)
	}
	killed := s.Trials["t0001"]
	if !killed.Killed() || len(killed.OOMs) != 1 || killed.OOMs[0].Process != "hr-workload" || killed.OOMs[0].Step != "install" || killed.Peak != 127<<20 || len(killed.Steps) != 2 || killed.Phase != Finished {
		t.Errorf("t0001 %+v", killed)
	}
	running := s.Trials["t0003"]
	if running.Phase != Running || running.Step == nil || running.Step.Step.Name != "install" || strings.Join(running.Tail, "|") != "Collecting pandas|Collecting networkx" {
		t.Errorf("t0003 phase %v step %+v tail %q", running.Phase, running.Step, running.Tail)
	}
	if w := s.Waiting(); len(w) != 1 || w[0].Trial.ID != "t0004" {
		t.Errorf("waiting %v", w)
	}
	if c := s.Matrix.Cell(model.RowKey{Task: "builtin/bn-fit-modify", Agent: "heavy"}, model.Ratio{K: 1}); c == nil || c.Outcomes[0] != model.OOMKilled {
		t.Errorf("matrix cell %+v", c)
	}
	if s.LastOOM == nil || s.LastOOM.TrialID() != "t0001" {
		t.Errorf("last OOM %+v", s.LastOOM)
	}
}

func TestLogIsBounded(t *testing.T) {
	v := &TrialView{}
	for i := 0; i < 2*logLines+10; i++ {
		v.log("line")
	}
	if len(v.Log) > 2*logLines || len(v.Log) < logLines || v.LogDrop+len(v.Log) != 2*logLines+10 {
		t.Errorf("%d lines kept, %d dropped", len(v.Log), v.LogDrop)
	}
}

func TestSetupBuildsTheLaunchSpec(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	// Nothing selected: enter explains instead of starting.
	m = keys(t, m, "enter")
	if !strings.Contains(m.View(), "select at least one task") {
		t.Error("enter with nothing selected should say why it does not start")
	}
	// Select bn-fit-modify·heavy; ratios: turn off 3x, keep 1x and uncapped.
	m = keys(t, m, "space", "tab", "right", "right", "right", "space", "tab", "+", "+")
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m = next.(Model)
	if cmd == nil {
		t.Fatal("enter did not start a sweep")
	}
	m = update(t, m, cmd())
	if len(l.specs) != 1 {
		t.Fatalf("%d launches", len(l.specs))
	}
	spec := l.specs[0]
	if len(spec.Tasks) != 1 || spec.Tasks[0].Name != "builtin/bn-fit-modify" || len(spec.Tasks[0].Agents) != 1 || spec.Tasks[0].Agents[0].Name != "heavy" {
		t.Errorf("tasks %+v", spec.Tasks)
	}
	if len(spec.Ratios) != 2 || spec.Ratios[0] != (model.Ratio{K: 1}) || !spec.Ratios[1].Uncapped {
		t.Errorf("ratios %v", spec.Ratios)
	}
	if spec.Repeats != 5 || spec.Concurrency != 2 || spec.Seed != 1 {
		t.Errorf("repeats %d concurrency %d seed %d", spec.Repeats, spec.Concurrency, spec.Seed)
	}
	if m.CurrentScreen() != LiveScreen {
		t.Errorf("screen %v after start, want live", m.CurrentScreen())
	}
}

// The options row's scale toggle reaches the launch spec and the plan's
// policies the way run's --scale does, and the preview shows its limits.
func TestSetupScaleReachesTheLaunchSpec(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	if m.setup.scale != model.ScaleBoth {
		t.Fatalf("default scale %q, want both (as run's)", m.setup.scale)
	}
	// Select bn-fit-modify·heavy, go to the options, down to scale, + once.
	m = keys(t, m, "space", "tab", "tab", "down", "down", "down", "down", "+")
	v := m.View()
	if !strings.Contains(v, "scale memory") || !strings.Contains(v, "limit memory only") {
		t.Errorf("setup should show the memory scale:\n%s", v)
	}
	// 1x: memory limited to the spec, CPU unlimited.
	if !strings.Contains(v, "1x       guarantee 128M  limit 128M  cpus none") {
		t.Errorf("the preview's 1x line should have no CPU limit under scale memory:\n%s", v)
	}
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m = next.(Model)
	if cmd == nil {
		t.Fatal("enter did not start a sweep")
	}
	m = update(t, m, cmd())
	if len(l.specs) != 1 || l.specs[0].Scale != model.ScaleMemory {
		t.Fatalf("launch specs %+v, want one with scale memory", l.specs)
	}
	for _, tr := range l.last.plan.Trials {
		if tr.Policy.Scale != model.ScaleMemory || tr.Policy.LimitCPUs != 0 || (!tr.Ratio.Uncapped && tr.Policy.HardLimitBytes == 0) {
			t.Errorf("%s policy %+v, want memory-only limits", tr.ID, tr.Policy)
		}
	}
	// + wraps round: memory → cpu → both.
	m = keys(t, m, "1", "+")
	if m.setup.scale != model.ScaleCPU {
		t.Errorf("scale %q after a second +, want cpu", m.setup.scale)
	}
	m = keys(t, m, "+")
	if m.setup.scale != model.ScaleBoth {
		t.Errorf("scale %q after a third +, want both", m.setup.scale)
	}
}

func TestSetupFilterAndCustomRatio(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	m = keys(t, m, "/", "s", "w", "e", "enter")
	if rows := m.setup.visible(); len(rows) != 1 || rows[0].task.Name != "builtin/swe-edit" {
		t.Errorf("filter rows %v", rows)
	}
	// esc clears the applied filter (after enter, not only while typing).
	m = keys(t, m, "esc")
	if m.setup.filter.Value() != "" || len(m.setup.visible()) <= 1 {
		t.Errorf("esc after enter left the filter %q (%d rows)", m.setup.filter.Value(), len(m.setup.visible()))
	}
	// / starts a fresh filter rather than appending to the old one.
	m = keys(t, m, "/", "s", "w", "e", "enter", "/", "h")
	if m.setup.filter.Value() != "h" {
		t.Errorf("/ after an applied filter gave %q, want a fresh \"h\"", m.setup.filter.Value())
	}
	// q typed into the filter must not quit.
	m = keys(t, m, "q")
	if m.setup.filter.Value() != "hq" {
		t.Errorf("filter %q", m.setup.filter.Value())
	}
	m = keys(t, m, "esc", "tab")
	for i := 0; i < len(m.setup.ratios); i++ {
		m = keys(t, m, "right")
	}
	m = keys(t, m, "space", "0", ".", "5", "enter")
	if !strings.Contains(m.View(), "below 1x") {
		t.Error("a custom ratio below 1x must be refused on screen")
	}
	m = keys(t, m, "esc", "space", "2", ".", "5", "x", "enter")
	found := false
	for _, r := range m.setup.chosenRatios() {
		found = found || r == (model.Ratio{K: 2.5})
	}
	if !found {
		t.Errorf("custom 2.5x not chosen: %v", m.setup.chosenRatios())
	}
	// The cursor is on the ratio just given (it was left at its index,
	// on uncapped after the sorted insert).
	if c := m.setup.ratioCursor; c < 0 || c >= len(m.setup.ratios) || m.setup.ratios[c].ratio != (model.Ratio{K: 2.5}) {
		t.Errorf("after adding 2.5x the cursor is at %d of %v, want on 2.5x", c, m.setup.ratios)
	}
	// The prompt's placeholder reads as an example, not a value given.
	for m.setup.ratioCursor != len(m.setup.ratios) {
		m = keys(t, m, "right")
	}
	m = keys(t, m, "space")
	if v := m.View(); !strings.Contains(v, "e.g. 2.5x") {
		t.Errorf("the custom prompt's placeholder does not read as an example:\n%s", v)
	}
}

func TestQuitWhileRunningAsksThenCancels(t *testing.T) {
	m, l := withSweep(t, 120, 40)
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	m = next.(Model)
	if cmd != nil || m.confirm == nil {
		t.Fatal("q while trials run must ask first")
	}
	// The queue is held while the prompt is open (it went on starting
	// trials), and let go on n.
	if len(l.last.holds) != 1 || l.last.holds[0] == "" {
		t.Fatalf("q did not hold the queue: %q", l.last.holds)
	}
	m = keys(t, m, "n")
	if m.confirm != nil || l.last.cancelled {
		t.Fatal("n must keep the sweep running")
	}
	if len(l.last.holds) != 2 || l.last.holds[1] != "" {
		t.Fatalf("n did not let the queue go: %q", l.last.holds)
	}
	m = keys(t, m, "q", "y")
	if !l.last.cancelled || !m.quitting {
		t.Fatal("y must cancel the sweep")
	}
	// The console quits only once the runner has cleaned up (stream closed).
	_, cmd = m.Update(eventsMsg{closed: true})
	if cmd == nil {
		t.Fatal("no quit after the stream closed")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("closing the stream while quitting must quit")
	}
}

// The sweep may end while the quit prompt is open: its stream closes
// then, and no later close would come to quit on. A yes must quit at
// once (the console stayed on "cancelling: stopping trials…" for good,
// the sweep's 18 trials done, seen in a new user's tmux try).
func TestQuitConfirmedAfterTheSweepEndedQuits(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	m = keys(t, m, "q")
	if m.confirm == nil {
		t.Fatal("q while trials run must ask first")
	}
	next, _ := m.Update(eventsMsg{closed: true})
	m = next.(Model)
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd == nil {
		t.Fatal("y after the sweep's stream closed: no command, the console waits for a close that already came")
	}
	if !quits(cmd()) {
		t.Error("y after the sweep's stream closed must quit")
	}
}

// quits says whether msg is a quit, alone or in a batch.
func quits(msg tea.Msg) bool {
	switch msg := msg.(type) {
	case tea.QuitMsg:
		return true
	case tea.BatchMsg:
		for _, c := range msg {
			if c != nil && quits(c()) {
				return true
			}
		}
	}
	return false
}

func TestStopTrialFromTheLiveScreen(t *testing.T) {
	m, l := withSweep(t, 120, 40)
	// Cards are in plan order; a finished one cannot be stopped.
	m = keys(t, m, "x")
	if m.confirm != nil || !strings.Contains(m.message, "t0001 has finished") {
		t.Fatalf("x on a finished card: confirm %+v message %q", m.confirm, m.message)
	}
	// t0003 waits in the 1x cell's corner while t0001's kill lingers:
	// the cursor moves to it after the kill's card.
	m = keys(t, m, "right", "x")
	if m.confirm == nil || !strings.Contains(m.confirm.prompt, "t0003") {
		t.Fatalf("confirm %+v", m.confirm)
	}
	m = keys(t, m, "y")
	if len(l.last.stopped) != 1 || l.last.stopped[0] != "t0003" {
		t.Errorf("stopped %v", l.last.stopped)
	}
}

func TestCancelSweepAsksFirst(t *testing.T) {
	m, l := withSweep(t, 120, 40)
	m = keys(t, m, "X")
	if m.confirm == nil || l.last.cancelled {
		t.Fatal("X must ask before cancelling")
	}
	m = keys(t, m, "y")
	if !l.last.cancelled || m.quitting {
		t.Errorf("cancelled %v quitting %v: X cancels the sweep but keeps the console", l.last.cancelled, m.quitting)
	}
}

func TestThemeCyclesAndScreensSwitch(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	names := []string{m.theme.Name}
	for i := 0; i < 4; i++ {
		m = keys(t, m, "t")
		names = append(names, m.theme.Name)
	}
	if strings.Join(names, ",") != "plain,dark,light,high-contrast,plain" {
		t.Errorf("themes %v", names)
	}
	for k, want := range map[string]Screen{"1": SetupScreen, "2": LiveScreen, "3": MatrixScreen, "4": FocusScreen, "5": HistoryScreen} {
		if got := keys(t, m, k).CurrentScreen(); got != want {
			t.Errorf("key %s: screen %v", k, got)
		}
	}
	if got := keys(t, m, "3", "tab").CurrentScreen(); got != FocusScreen {
		t.Errorf("tab from matrix: %v", got)
	}
	// Detail and back.
	d := keys(t, m, "3", "enter", "enter")
	if d.CurrentScreen() != DetailScreen || d.detail.v == nil || d.detail.v.Trial.ID != "t0001" {
		t.Fatalf("detail %v", d.CurrentScreen())
	}
	if got := keys(t, d, "esc").CurrentScreen(); got != MatrixScreen {
		t.Errorf("esc from detail: %v", got)
	}
}

func TestDetailSearchFollowWrapAndRerun(t *testing.T) {
	m, l := withSweep(t, 120, 40)
	m = keys(t, m, "3", "enter", "enter", "/", "O", "O", "M", "enter")
	if len(m.detail.matches) != 1 {
		t.Errorf("matches %v", m.detail.matches)
	}
	m = keys(t, m, "w")
	if !m.detail.wrap {
		t.Error("w must wrap")
	}
	// Rerun is refused while the sweep runs.
	m = keys(t, m, "r")
	if len(l.specs) != 1 || !strings.Contains(m.message, "sweep is running") {
		t.Errorf("rerun while running: %d launches, message %q", len(l.specs), m.message)
	}
	m = update(t, m, eventsMsg{events: []event.Event{event.SweepEnded{}}})
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	if cmd == nil {
		t.Fatal("no rerun")
	}
	next.(Model).Update(cmd())
	spec := l.specs[1]
	if spec.OnlyRepeat != 1 || spec.Seed != 1 || len(spec.Ratios) != 1 || spec.Ratios[0] != (model.Ratio{K: 1}) {
		t.Errorf("rerun spec %+v", spec)
	}
	plan, _ := model.NewPlan(model.PlanSpec{Tasks: spec.Tasks, Ratios: spec.Ratios, Repeats: spec.Repeats, Seed: spec.Seed, OnlyRepeat: spec.OnlyRepeat})
	if plan.Trials[0].Seed != m.state.Trials["t0001"].Trial.Seed {
		t.Error("a rerun must replay the trial's own seed")
	}
}

// runnerLauncher runs real runner code on the fake backend.
type runnerLauncher struct{ backend *fake.Backend }

type runnerSweep struct {
	plan   model.Plan
	r      *runner.Runner
	events chan event.Event
	cancel context.CancelFunc
}

func (s *runnerSweep) ID() string                 { return "fake-exp" }
func (s *runnerSweep) Dir() string                { return "" }
func (s *runnerSweep) Plan() model.Plan           { return s.plan }
func (s *runnerSweep) Events() <-chan event.Event { return s.events }
func (s *runnerSweep) StopTrial(id string) bool   { return s.r.StopTrial(id) }
func (s *runnerSweep) Cancel()                    { s.cancel() }

func (l runnerLauncher) Launch(spec LaunchSpec) (Sweep, error) {
	plan, err := model.NewPlan(model.PlanSpec{Tasks: spec.Tasks, Ratios: spec.Ratios, Repeats: spec.Repeats, Seed: spec.Seed})
	if err != nil {
		return nil, err
	}
	r, err := runner.New(l.backend, runner.Config{Experiment: "x", Plan: plan, Tasks: spec.Tasks, Concurrency: spec.Concurrency, GuaranteeCapacityBytes: 1 << 40})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &runnerSweep{plan: plan, r: r, events: make(chan event.Event, 64), cancel: cancel}
	go r.Run(ctx, s.events)
	return s, nil
}

// The whole pipeline in a running program: keys select a task and ratios,
// the runner's events arrive through the batching command, the OOM banner
// shows, the matrix fills, quit asks and cleans up.
func TestInteractiveSweepThroughTeatest(t *testing.T) {
	b := &fake.Backend{Script: func(tr model.Trial, st model.Step) fake.StepPlan {
		if st.Name == "install" && !tr.Ratio.Uncapped {
			return fake.StepPlan{Lines: []string{"Collecting pandas"}, ExitCode: 137, OOM: true, PeakBytes: 128 << 20}
		}
		if st.Name == "verify" && !tr.Ratio.Uncapped {
			return fake.StepPlan{ExitCode: 1}
		}
		return fake.StepPlan{Lines: []string{"ok"}, PeakBytes: 100 << 20}
	}}
	opts := testOptions(t, runnerLauncher{b})
	opts.Tasks = []model.Task{fake.Task("demo/heavy", 128<<20, "install")}
	tm := teatest.NewTestModel(t, New(opts), teatest.WithInitialTermSize(120, 40))
	tm.Send(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
	tm.Send(tea.KeyMsg{Type: tea.KeyEnter})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "OOM KILLED in install") },
		teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		s := string(b)
		return strings.Contains(s, "0/3 KKK") && strings.Contains(s, "3/3 +++")
	}, teatest.WithDuration(10*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	final := tm.FinalModel(t).(Model)
	if final.State().Done != 9 {
		t.Errorf("done %d, want 9", final.State().Done)
	}
	if len(b.Started()) != len(b.Removed()) {
		t.Errorf("started %d removed %d", len(b.Started()), len(b.Removed()))
	}
}

func TestHistoryResumesAnExperiment(t *testing.T) {
	l := &fakeLauncher{resumeTasks: []model.Task{heavyOnly(t)}}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = keys(t, m, "5")
	m = update(t, m, m.listHistory()())
	m = keys(t, m, "down")
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	if cmd == nil {
		t.Fatal("r in history did not resume")
	}
	m = update(t, next.(Model), cmd())
	if len(l.resumed) != 1 || l.resumed[0] != "20261127-170000-bbbb" || m.CurrentScreen() != LiveScreen {
		t.Errorf("resumed %v, screen %v", l.resumed, m.CurrentScreen())
	}
}

func TestSetupListsSkippedTaskFiles(t *testing.T) {
	opts := testOptions(t, &fakeLauncher{})
	opts.Problems = []string{"tasks/broken.toml:3: expected '.' or ']' to end table name"}
	m := update(t, New(opts), tea.WindowSizeMsg{Width: 120, Height: 40})
	if v := m.View(); !strings.Contains(v, "skipped tasks/broken.toml:3:") {
		t.Errorf("setup should name the skipped file:\n%s", v)
	}
	// A task whose build failed: its reason comes after its file and
	// name, past the screen's edge, and is wrapped onto a second line; a
	// warning about a task that loaded is a warning, not a skip.
	opts.Problems = []string{"task nu/badbuild: building /tmp/some/long/path/to/the/task/environment/Dockerfile: The command '/bin/sh -c make' returned a non-zero code: 3; the build had no network"}
	opts.Warnings = []string{"tasks/h/task.toml: tasks/h/instruction.md is missing"}
	v := update(t, New(opts), tea.WindowSizeMsg{Width: 120, Height: 40}).View()
	if !strings.Contains(v, "returned a non-zero code: 3") || !strings.Contains(v, "warning: tasks/h/task.toml") || strings.Contains(v, "skipped tasks/h/task.toml") {
		t.Errorf("setup should show the build's failure whole and the warning as a warning:\n%s", v)
	}
}

// While a sweep starts, the latest line of image preparation (a Dockerfile
// build, debootstrap) is on the status line; it goes when the sweep runs.
func TestPreparingImagesIsShownWhileStarting(t *testing.T) {
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	portOf(opts).preparing = func() string { return "Step 2/3 : RUN apt-get install -y python3" }
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = keys(t, m, "space")
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m = update(t, next.(Model), tickMsg{})
	if !strings.Contains(m.View(), "preparing images: Step 2/3 : RUN apt-get install") {
		t.Fatalf("the status line does not show the image being prepared:\n%s", m.View())
	}
	m = update(t, m, cmd())
	m = update(t, m, tickMsg{})
	if strings.Contains(m.View(), "preparing images") {
		t.Error("the preparation line stays after the sweep started")
	}
}

// A task that could not run shows in the matrix as such, with why, not
// as cells of infra-errors.
func TestMatrixShowsATaskThatCouldNotRun(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}, model.Uncapped}, Repeats: 1, Concurrency: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	var evs []event.Event
	for _, tr := range sw.Plan().Trials {
		evs = append(evs, event.TrialQueued{Base: event.Base{Trial: tr.ID, Time: t0}, Trial: tr},
			trialEnded(model.TrialResult{Trial: tr, Outcome: model.InfraError, TaskNotRun: true, Start: t0, End: t0,
				Reason: "task builtin/bn-fit-modify: building Dockerfile: exit 100"}))
	}
	m = update(t, m, eventsMsg{events: evs})
	m = keys(t, m, "3")
	view := m.View()
	checkFits(t, view, 120, 40)
	if !strings.Contains(view, "could not run: task builtin/bn-fit-modify: building Dockerfile: exit 100") {
		t.Errorf("matrix does not say the task could not run:\n%s", view)
	}
	if strings.Contains(view, "0/1 E") {
		t.Errorf("a task that could not run drawn as infra-error cells:\n%s", view)
	}
}

// The quit question counts the trials running as it is drawn: a trial
// that starts while it waits is one more to stop (the demo asked about 1
// while its header said 3).
func TestQuitPromptCountsLive(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	before := m.state.Running
	m = keys(t, m, "q")
	if m.confirm == nil {
		t.Fatal("q while trials run must ask first")
	}
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("Quit? %d running", before)) {
		t.Fatalf("prompt does not count %d running:\n%s", before, v)
	}
	m = update(t, m, eventsMsg{events: []event.Event{event.TrialStarted{Base: event.Base{Trial: "t0004", Time: t0.Add(3 * time.Second)}, ContainerID: "c0ffee0004dd"}}})
	if m.state.Running != before+1 {
		t.Fatalf("running %d after a start, want %d", m.state.Running, before+1)
	}
	if v := m.View(); !strings.Contains(v, fmt.Sprintf("Quit? %d running", before+1)) {
		t.Errorf("prompt still counts the trials of when q was pressed:\n%s", v)
	}
}

// partResumer resumes an experiment by rerunning the trials its plan
// names but the history's results left cancelled.
type partResumer struct {
	*fakeLauncher
	plan model.Plan
}

func (p partResumer) Resume(exp Experiment) (Sweep, error) {
	_, results, _ := exp.Load()
	again := p.plan
	again.Trials = nil
	for _, r := range results {
		if r.Outcome == model.Cancelled {
			again.Trials = append(again.Trials, r.Trial)
		}
	}
	p.last = &fakeSweep{id: exp.ID, plan: again, events: make(chan event.Event, 64)}
	return p.last, nil
}

// resumedFromHistory is the console after r on exp, the one experiment
// its History lists, resumed through l.
func resumedFromHistory(t *testing.T, l partResumer, exp Experiment) Model {
	t.Helper()
	opts := testOptions(t, l)
	portOf(opts).history = func() ([]Experiment, error) { return []Experiment{exp}, nil }
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = keys(t, m, "5")
	m = update(t, m, m.listHistory()())
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("r")})
	if cmd == nil {
		t.Fatal("r in history did not resume")
	}
	return update(t, next.(Model), cmd())
}

// After r (resume) from history, the console shows the whole experiment,
// not only the trials the resume reruns. Seen before: the matrix read
// "0/6 ±39" where report and a reopen showed 0/20.
func TestResumeFromHistoryShowsTheWholeExperiment(t *testing.T) {
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}}, Repeats: 4, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var results []model.TrialResult
	for i, tr := range plan.Trials {
		r := model.TrialResult{Trial: tr, Outcome: model.OOMKilled, Cause: model.CauseOwnLimit, Start: t0, End: t0.Add(time.Second)}
		if i >= 2 {
			r.Outcome, r.Cause = model.Cancelled, ""
		}
		results = append(results, r)
	}
	l := partResumer{fakeLauncher: &fakeLauncher{}, plan: plan}
	m := resumedFromHistory(t, l, Experiment{ID: "20261127-170000-bbbb", Status: "interrupted", Trials: 4, Tasks: []string{"builtin/bn-fit-modify"}, Ratios: []model.Ratio{{K: 1}}, Repeats: 4,
		Load: func() (model.Plan, []model.TrialResult, error) { return plan, results, nil }})
	var evs []runner_Event
	for _, tr := range l.last.plan.Trials {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.OOMKilled, Cause: model.CauseOwnLimit, Start: t0, End: t0.Add(time.Second)}))
	}
	m = update(t, m, eventsMsg{events: evs})
	m = keys(t, m, "3")
	if v := m.View(); !strings.Contains(v, "0/4 KKKK") || m.State().Done != 4 {
		t.Errorf("after the resume the matrix shows %d done, want the whole experiment (0/4 KKKK):\n%s", m.State().Done, v)
	}
}

// A spec written since the console opened (calibrate --write) is what
// setup shows and what a sweep runs. Seen before: task specs were not
// reloaded after --write.
func TestSetupRunsTheSpecItsFileSaysNow(t *testing.T) {
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	written := false
	portOf(opts).respec = func(task model.Task) (model.Resources, bool) {
		if !written || task.Name != "builtin/bn-fit-modify" {
			return model.Resources{}, false
		}
		r := task.Resources
		r.MemoryBytes, r.MemoryLimitBytes = 200*model.MiB, 520*model.MiB
		return r, true
	}
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 160, Height: 40})
	written = true
	m = keys(t, m, "2", "1")
	if v := m.View(); !strings.Contains(v, "200MiB") {
		t.Errorf("setup does not show the spec the file says now:\n%s", v)
	}
	m = keys(t, m, "space")
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m = next.(Model)
	for cmd != nil {
		msg := cmd()
		next, cmd = m.Update(msg)
		m = next.(Model)
		if _, ok := msg.(launchedMsg); ok {
			break
		}
	}
	if len(l.specs) != 1 || l.specs[0].Tasks[0].Resources.MemoryLimitBytes != 520*model.MiB {
		t.Fatalf("launched %+v, want the file's spec now", l.specs)
	}
}

// An experiment opened from history while it runs elsewhere (a headless
// run) is followed live. Seen before: it stayed as it was when opened.
func TestOpenedRunningExperimentIsFollowed(t *testing.T) {
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}}, Repeats: 3, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	done := 1
	load := func() (model.Plan, []model.TrialResult, error) {
		mu.Lock()
		defer mu.Unlock()
		var rs []model.TrialResult
		for _, tr := range plan.Trials[:done] {
			rs = append(rs, model.TrialResult{Trial: tr, Outcome: model.OOMKilled, Cause: model.CauseOwnLimit, Start: t0, End: t0.Add(time.Second)})
		}
		return plan, rs, nil
	}
	opts := testOptions(t, &fakeLauncher{})
	opts.FollowEvery = time.Millisecond
	portOf(opts).history = func() ([]Experiment, error) {
		return []Experiment{{ID: "20261130-090000-run", Status: "running", Trials: 3, Tasks: []string{"builtin/bn-fit-modify"}, Ratios: []model.Ratio{{K: 1}}, Repeats: 3, Load: load}}, nil
	}
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = keys(t, m, "5")
	m = update(t, m, m.listHistory()())
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m = next.(Model)
	next, cmd = m.Update(cmd())
	m = next.(Model)
	if !strings.Contains(m.View(), "0/1 K") || cmd == nil {
		t.Fatalf("opened: follow %v\n%s", cmd != nil, m.View())
	}
	mu.Lock()
	done = 3
	mu.Unlock()
	next, cmd = m.Update(cmd())
	m = next.(Model)
	if v := m.View(); !strings.Contains(v, "0/3 KKK") || m.CurrentScreen() != MatrixScreen {
		t.Errorf("the opened experiment did not follow its run:\n%s", v)
	}
	if cmd != nil {
		t.Error("every trial has a result: the console should stop re-reading")
	}
}

// Custom ratios take their place in column order (Ratio.Less, as the
// matrix sorts them) in setup, on the live stage and in history: 2.5x
// went after 5x.
func TestCustomRatiosAreSortedEverywhere(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = keys(t, m, "tab")
	for i := 0; i < len(m.setup.ratios); i++ {
		m = keys(t, m, "right")
	}
	m = keys(t, m, "space", "2", ".", "5", "x", "enter")
	var got []string
	for _, r := range m.setup.ratios {
		got = append(got, r.ratio.String())
	}
	if want := "1x 1.5x 2x 2.5x 3x 5x uncapped"; strings.Join(got, " ") != want {
		t.Errorf("setup ratios %q, want %q", strings.Join(got, " "), want)
	}

	unsorted := []model.Ratio{{K: 1}, {K: 5}, {K: 2.5}, model.Uncapped}
	if got, want := whatWasRun(Experiment{Ratios: unsorted}), "1x 2.5x 5x uncapped"; got != want {
		t.Errorf("history says %q, want %q", got, want)
	}

	opts := testOptions(t, &fakeLauncher{})
	opts.Demo = &LaunchSpec{Label: "demo", Tasks: []model.Task{heavyOnly(t)}, Ratios: unsorted, Repeats: 1, Concurrency: 4, Seed: 1}
	m = New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = update(t, m, m.launch(*opts.Demo)())
	g := liveLayout(m.common(), 120, 38)
	got = got[:0]
	for _, r := range g.ratios {
		got = append(got, r.String())
	}
	if want := "1x 2.5x 5x uncapped"; strings.Join(got, " ") != want {
		t.Errorf("live stage columns %q, want %q", strings.Join(got, " "), want)
	}
}

// s on a finished trial says it has finished, as x does; a shell that
// ends with a non-zero status because its trial finished meanwhile says
// that, not docker exec's bare "exit status 1".
func TestShellOnAFinishedTrialSaysSo(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	m = keys(t, m, "s") // the cursor starts on t0001, OOM-killed
	if !strings.Contains(m.message, "t0001 has finished") {
		t.Errorf("s on a finished card: message %q", m.message)
	}
	m = update(t, m, shellMsg{err: errors.New("exit status 1"), trial: "t0001"})
	if !strings.Contains(m.message, "t0001 has finished") || strings.Contains(m.message, "exit status") {
		t.Errorf("a shell whose trial finished: message %q", m.message)
	}
	// One still running keeps the shell's own error.
	m = update(t, m, shellMsg{err: errors.New("exit status 1"), trial: "t0003"})
	if m.message != "shell: exit status 1" {
		t.Errorf("a shell on a running trial: message %q", m.message)
	}
}

// t names the new theme once on the status line (the notice and the
// theme's own part said it twice); under NO_COLOR it says themes are off
// and keeps the plain one.
func TestThemeKeyNamesItOnceAndIsOffUnderNoColor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	m, _ := withSweep(t, 200, 40) // room for the theme's own part
	m = keys(t, m, "t")
	if n := strings.Count(m.viewStatus(), "theme dark"); n != 1 {
		t.Errorf("status line names the theme %d times: %q", n, m.viewStatus())
	}
	t.Setenv("NO_COLOR", "1")
	m, _ = withSweep(t, 120, 40)
	m = keys(t, m, "t")
	if m.theme.Name != "plain" || !strings.Contains(m.viewStatus(), "themes are off: NO_COLOR is set") {
		t.Errorf("t under NO_COLOR: theme %q, status %q", m.theme.Name, m.viewStatus())
	}
	if strings.Contains(m.viewStatus(), "theme plain") {
		t.Errorf("under NO_COLOR the status line should not offer a theme: %q", m.viewStatus())
	}
}

// An engine unreachable at start is said on setup at once, its error
// whole and wrapped, with what to do: the console opened as if all were
// well and enter was the first to tell, cut at the edge.
func TestSetupSaysTheEngineIsUnreachable(t *testing.T) {
	opts := testOptions(t, &fakeLauncher{})
	opts.EngineError = errors.New("connecting to the Docker engine: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 80, Height: 40})
	v := m.View()
	checkFits(t, v, 80, 40)
	flat := strings.Join(strings.Fields(v), " ")
	for _, want := range []string{
		"The engine is unreachable, so nothing can run",
		"unix:///var/run/docker.sock. Is the docker daemon running?",
		"run `headroom doctor` to check, then start headroom again.",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("setup should say %q:\n%s", want, v)
		}
	}
	// All is well: no such line.
	m = update(t, New(testOptions(t, &fakeLauncher{})), tea.WindowSizeMsg{Width: 80, Height: 40})
	if strings.Contains(m.View(), "unreachable") {
		t.Errorf("a reachable engine is not unreachable:\n%s", m.View())
	}
}

// The log's / starts a new search, as the setup's does: the last query
// stayed in the input and a new user's "iteration" searched
// "numpyiteration".
func TestDetailSearchStartsAfresh(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	m = keys(t, m, "3", "enter", "enter", "/", "p", "a", "n", "d", "a", "s", "enter", "/", "p", "i", "p", "enter")
	if m.detail.query != "pip" {
		t.Errorf("the second search is %q, want %q", m.detail.query, "pip")
	}
}

// A resume from history lays its cards out as the run did: one cell a
// ratio for a run whose concurrency was no higher than its ratios. Its
// spec had neither ratios nor concurrency, and a resumed showcase came
// back as a grid of "kills, running, just ended" (a new user's).
func TestResumeFromHistoryKeepsTheRunsLayout(t *testing.T) {
	ratios := []model.Ratio{{K: 1}, {K: 3}}
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: ratios, Repeats: 2, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var results []model.TrialResult
	for _, tr := range plan.Trials {
		results = append(results, model.TrialResult{Trial: tr, Outcome: model.Cancelled, Start: t0, End: t0.Add(time.Second)})
	}
	l := partResumer{fakeLauncher: &fakeLauncher{}, plan: plan}
	m := resumedFromHistory(t, l, Experiment{ID: "20261127-170000-cccc", Status: "interrupted", Trials: 4, Tasks: []string{"builtin/bn-fit-modify"}, Ratios: ratios, Repeats: 2, Concurrency: 2,
		Load: func() (model.Plan, []model.TrialResult, error) { return plan, results, nil }})
	if m.spec.Concurrency != 2 || len(m.spec.Ratios) != 2 {
		t.Errorf("the resume's spec: concurrency %d, ratios %v; want the run's 2 and %v", m.spec.Concurrency, m.spec.Ratios, ratios)
	}
	if v := m.View(); !strings.Contains(v, "a card a ratio") {
		t.Errorf("the resumed sweep's cards are not one a ratio:\n%s", v)
	}
}

// headroom --ratios sets which ratios setup opens with: the standard ones
// named are on, the others off, and one not among them is added on, in
// column order (the console refused --ratios, which COMMANDS.md promised
// with run's other sweep flags: the new user of 2026-12-06).
func TestSetupOpensWithTheRatiosGiven(t *testing.T) {
	opts := testOptions(t, &fakeLauncher{})
	two, _ := model.ParseRatios("1x,2.5x")
	opts.Ratios = two
	m := update(t, New(opts), tea.WindowSizeMsg{Width: 120, Height: 40})
	if v := m.View(); !strings.Contains(v, "[x]1x  [ ]1.5x  [ ]2x  [x]2.5x  [ ]3x  [ ]5x  [ ]uncapped") {
		t.Errorf("setup's ratios:\n%s", v)
	}
}

// s on a running trial asks first, as x does, saying what the shell does
// to the trial; n opens none, y opens it (a new user's s voided a running
// trial unasked).
func TestShellAsksFirst(t *testing.T) {
	m, _ := withSweep(t, 120, 40)
	opened := 0
	portOf(m.opts).shell = func(string, model.Task) (*exec.Cmd, error) {
		opened++
		return exec.Command("true"), nil
	}
	for i := 0; i < 12 && m.confirm == nil; i++ {
		m = keys(t, m, "right", "s")
	}
	if m.confirm == nil {
		t.Fatal("no running card asked before its shell")
	}
	if p := m.confirm.prompt; !strings.Contains(p, "Open a shell in trial") || !strings.Contains(p, "killed-outside") {
		t.Errorf("prompt %q: want it to say the trial will be recorded killed-outside", p)
	}
	if opened != 0 {
		t.Fatalf("a shell opened before the answer")
	}
	m = keys(t, m, "n")
	if m.confirm != nil || opened != 0 {
		t.Errorf("n: confirm %v, %d shell(s) opened", m.confirm, opened)
	}
	m = keys(t, m, "s", "y")
	if opened != 1 {
		t.Errorf("y: %d shell(s) opened, want 1", opened)
	}
}

// A trial whose container is dead frees its place for the next before its
// record is written: counted as running until then, the live screen said
// "running 3" at concurrency 2 (a new user's try). It finishes instead.
func TestAStoppedTrialIsFinishingNotRunning(t *testing.T) {
	plan := model.Plan{Trials: []model.Trial{{ID: "t1", Task: "a", Ratio: model.Ratio{K: 1}}, {ID: "t2", Task: "a", Ratio: model.Ratio{K: 1}}}}
	s := NewSweepState(plan, time.Time{})
	at := func(id string) event.Base { return event.Base{Trial: id, Time: time.Now()} }
	s.Apply(event.TrialCreating{Base: at("t1")})
	s.Apply(event.TrialStarted{Base: at("t1")})
	s.Apply(event.TrialStopped{Base: at("t1")})
	s.Apply(event.TrialStopped{Base: at("t1")}) // once only
	s.Apply(event.TrialCreating{Base: at("t2")})
	if s.Running != 1 || s.Finishing != 1 {
		t.Errorf("running %d finishing %d; want 1 and 1", s.Running, s.Finishing)
	}
	s.Apply(event.TrialEnded{Base: at("t1"), Result: model.TrialResult{Trial: plan.Trials[0], Outcome: model.Passed}})
	if s.Running != 1 || s.Finishing != 0 {
		t.Errorf("after t1's record: running %d finishing %d; want 1 and 0", s.Running, s.Finishing)
	}
}

// A question cut at the screen's edge keeps the answer it waits for.
func TestAQuestionKeepsItsAnswer(t *testing.T) {
	q := "Cancel the sweep? 2 running trial(s) stop, 12 queued never start; all are recorded as cancelled. y/n"
	if got := keepAnswer(q, 60); width(got) != 60 || !strings.HasSuffix(got, "… y/n") {
		t.Errorf("%q (%d columns)", got, width(got))
	}
	if got := keepAnswer("Quit? y/n", 60); got != "Quit? y/n" {
		t.Errorf("%q", got)
	}
}

// Rows chosen before a filter stay chosen, and Enter runs them: the
// title says how many the filter hides (a new user's "3 of 18 selected"
// beside one row shown ran 30 trials, not 10).
func TestSetupTitleCountsTheChosenRowsAFilterHides(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m = keys(t, m, "/", "h", "e", "a", "v", "y", "enter", "space", "esc")
	n := 0
	for _, on := range m.setup.selected {
		if on {
			n++
		}
	}
	if n == 0 {
		t.Fatal("no row chosen")
	}
	if v := m.View(); strings.Contains(v, "hidden by the filter") {
		t.Errorf("no filter, yet rows hidden:\n%s", v)
	}
	m = keys(t, m, "/", "s", "w", "e", "enter")
	if v, want := m.View(), fmt.Sprintf("(%d hidden by the filter)", n); !strings.Contains(v, want) {
		t.Errorf("filtered to swe-edit with %d showcase rows chosen: want %q\n%s", n, want, v)
	}
}
