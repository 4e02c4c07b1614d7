package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// Focus counts every failure at the limit (killed or stalled), shows the
// split, draws stalls as L, and leaves cancelled runs out of its rate.
// Seen before: "killed in 15% (3/20)" when 7 of 20 failed at the limit,
// and "20 of 20 runs, killed in 70% (14/20)" after 6 were cancelled.
func TestFocusCountsMemoryFailuresNotCancelledRuns(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m.setup.focusRuns = 8
	next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
	m = update(t, next.(Model), cmd())
	var evs []runner_Event
	for i, tr := range l.last.plan.Trials {
		r := model.TrialResult{Trial: tr, Outcome: model.Passed, PeakWorkingSetBytes: 100 << 20, Start: t0, End: t0.Add(2e9)}
		switch i {
		case 0, 1:
			r.Outcome, r.Cause, r.PeakWorkingSetBytes = model.OOMKilled, model.CauseOwnLimit, 128<<20
			r.OOMs = []model.OOMEvent{{At: t0.Add(1e9), Step: "install", Source: "events"}}
		case 2, 3:
			r.Outcome, r.Cause, r.PeakWorkingSetBytes = model.Timeout, model.CauseStalled, 127<<20
			r.Stall = &model.StallEvidence{LimitBytes: 128 << 20, Duration: model.Duration(14 * time.Second), AtLimit: model.Duration(6 * time.Second), MajorFaults: 6000, Stalled: true}
		case 6, 7:
			r.Outcome = model.Cancelled
		}
		evs = append(evs, trialEnded(r))
	}
	m = update(t, m, eventsMsg{events: evs})
	view := m.View()
	if !strings.Contains(view, "6 of 6 runs, failed at the limit in 67% (4/6): 2 killed, 2 stalled; 2 cancelled (not counted)") {
		t.Errorf("focus head does not count the stalls, or counts the cancelled runs:\n%s", view)
	}
	if !strings.Contains(view, "LK") {
		t.Errorf("no stall mark in the strip:\n%s", view)
	}
	if !strings.Contains(view, "stalled") {
		t.Errorf("the runs list does not name the stalls:\n%s", view)
	}
	// Failures at the limit beside passes under it: the task's own
	// variance, said as such (the tester read the kills as the host's).
	if !strings.Contains(strings.Join(strings.Fields(view), " "), "the task's own variance: 4 of 6 runs failed at the 128MiB limit, 2 passed under it needing 100MiB–100MiB") {
		t.Errorf("no own-variance verdict:\n%s", view)
	}
}

// Before any run has finished, focus says so: "failed at the limit in -"
// read as a kill in a step named "-".
func TestFocusBeforeAnyRunSaysSo(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m.setup.focusRuns = 4
	next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
	m = update(t, next.(Model), cmd())
	view := m.View()
	if strings.Contains(view, "in -") || !strings.Contains(view, "0 of 4 runs finished yet") {
		t.Errorf("focus before any run:\n%s", view)
	}
}

// The detail header names a stall as one, with its time at the limit and
// its major faults (it said TIMEOUT with neither), and calls the run's
// need its peak, the sampled figure beside it.
func TestDetailHeaderShowsTheStallsNumbersAndOnePeak(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 160, Height: 40})
	tr := model.Trial{ID: "t0007", Task: "numpy", Agent: "a", Ratio: model.Ratio{K: 1}, Repeat: 7, Policy: model.NewPolicy(model.Resources{MemoryBytes: 320 * model.MiB, CPUs: 1}, model.Ratio{K: 1}, 2)}
	r := model.TrialResult{Trial: tr, Outcome: model.Timeout, Cause: model.CauseStalled, Start: t0, End: t0.Add(15 * time.Second), PeakWorkingSetBytes: 178 << 20, KernelPeakBytes: 240 << 20,
		Stall: &model.StallEvidence{LimitBytes: 320 * model.MiB, Duration: model.Duration(14700 * time.Millisecond), AtLimit: model.Duration(6850 * time.Millisecond), MajorFaults: 6652, Stalled: true}}
	v := &TrialView{Trial: tr, Phase: Finished, Result: &r, Peak: 178 << 20}
	m.openDetail(v)
	view := m.View()
	for _, want := range []string{"STALLED (6.8s of 14.7s at the limit, 6652 major faults)", "peak 240MiB (kernel; sampled 178MiB)"} {
		if !strings.Contains(view, want) {
			t.Errorf("detail lacks %q:\n%s", want, view)
		}
	}
	// numpy is no task this console loaded: no rerun is offered (it was,
	// then failed: a new user's try); one of a loaded task is.
	if strings.Contains(view, "r reruns") || strings.Contains(view, "r rerun,") || !strings.Contains(view, "its task is not loaded here: no rerun") {
		t.Errorf("a rerun offered for a task the console did not load:\n%s", view)
	}
	tr.Task = m.opts.Tasks[0].Name
	m.openDetail(&TrialView{Trial: tr, Phase: Finished, Result: &r, Peak: 178 << 20})
	if view := m.View(); !strings.Contains(view, "r reruns") || !strings.Contains(view, "r rerun,") {
		t.Errorf("no rerun offered for a loaded task:\n%s", view)
	}
}

// F asks before it starts a loop of many runs, saying what it will run
// and under which scale; the scale is the cell's own sweep's, not setup's
// (which had since changed: the loop ran under another scale than the
// cell it came from). Seen before: F started at once.
func TestFocusAsksFirstWithTheCellsScale(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}}, Scale: model.ScaleMemory, Repeats: 1, Concurrency: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	var evs []runner_Event
	for _, tr := range sw.Plan().Trials {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.Passed, Start: t0, End: t0.Add(time.Second)}))
	}
	m = update(t, m, eventsMsg{events: append(evs, event.SweepEnded{})})
	m.setup.scale = model.ScaleCPU
	m = keys(t, m, "3", "F")
	if m.confirm == nil || len(l.specs) != 1 {
		t.Fatalf("F started a loop without asking (%d launches)", len(l.specs))
	}
	if p := m.confirm.text(0, 0); !strings.Contains(p, "at 1x 20 times, scale memory (memory only)? y/n") {
		t.Errorf("focus prompt %q", p)
	}
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd == nil {
		t.Fatal("y started nothing")
	}
	m = update(t, next.(Model), cmd())
	if len(l.specs) != 2 || l.specs[1].Label != "focus" || l.specs[1].Scale != model.ScaleMemory {
		t.Errorf("after y: launches %+v", l.specs)
	}
}

// F on setup before any sweep asks, then starts the loop: it crashed the
// console (the sweep's state not yet made), the first key a user of the
// README presses.
func TestFocusFromSetupBeforeAnySweep(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m = keys(t, m, "F")
	if m.confirm == nil || !strings.Contains(m.View(), "Focus: run") {
		t.Fatalf("F on setup asked nothing:\n%s", m.View())
	}
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("y")})
	if cmd == nil {
		t.Fatal("y started nothing")
	}
	m = update(t, next.(Model), cmd())
	if len(l.specs) != 1 || l.specs[0].Label != "focus" {
		t.Fatalf("after y: launches %+v", l.specs)
	}
	if view := m.View(); !strings.Contains(view, "runs finished yet") {
		t.Errorf("focus screen after F on setup:\n%s", view)
	}
}

// The progress line counts a stall apart from the plain timeouts (it
// counted "timeout 2" for one stall and one timeout), and a resumed
// sweep's cell draws its glyphs in repeat order.
func TestProgressCountsStallsApartAndResumeKeepsRepeatOrder(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m.setup.focusRuns = 3
	next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
	m = update(t, next.(Model), cmd())
	plan := l.last.plan
	var evs []runner_Event
	for i := len(plan.Trials) - 1; i >= 0; i-- { // finished last first
		r := model.TrialResult{Trial: plan.Trials[i], Outcome: model.Timeout, Cause: model.CauseAgentTimeout, Start: t0, End: t0.Add(2e9)}
		switch i {
		case 0:
			r.Cause = model.CauseStalled
		case 2:
			r.Outcome, r.Cause = model.Passed, ""
		}
		evs = append(evs, trialEnded(r))
	}
	m = update(t, m, eventsMsg{events: evs})
	line := progressLine(m.common(), 140)
	if !strings.Contains(line, "timeout 1") || !strings.Contains(line, "stalled 1") {
		t.Errorf("progress line %q: want timeout 1 and stalled 1", line)
	}
	key := model.RowKey{Task: plan.Trials[0].Task, Agent: plan.Trials[0].Agent}
	if got := m.State().Matrix.Cells[key][model.Ratio{K: 1}].Marks(); got != "LT+" {
		t.Errorf("cell %q, want repeat order LT+", got)
	}
}

// A finished sweep offers nothing to stop: its footer read "x stop trial
// • X cancel sweep • s shell", and focus "x stop the loop", after the
// end. Focus lists a run not yet run with no peak ("-"), not "0".
func TestFinishedSweepOffersNothingToStop(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m.setup.focusRuns = 3
	next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
	m = update(t, next.(Model), cmd())
	trials := l.last.plan.Trials
	m = update(t, m, eventsMsg{events: []event.Event{trialEnded(model.TrialResult{Trial: trials[0], Outcome: model.Passed, PeakWorkingSetBytes: 100 << 20, Start: t0, End: t0.Add(2e9)})}})
	focus := keys(t, m, "4").View()
	if !strings.Contains(focus, "x stop the loop") {
		t.Errorf("a running focus loop does not offer to stop it:\n%s", focus)
	}
	for _, l := range strings.Split(focus, "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[0] == trials[2].ID && f[2] == "queued" && f[4] != "-" {
			t.Errorf("a queued run's peak is %q, want -: %q", f[4], l)
		}
	}
	if live := keys(t, m, "2").View(); !strings.Contains(live, "X cancel sweep") {
		t.Errorf("a running sweep's live screen does not offer to cancel it:\n%s", live)
	}
	var evs []event.Event
	for _, tr := range trials[1:] {
		evs = append(evs, trialEnded(model.TrialResult{Trial: tr, Outcome: model.Passed, PeakWorkingSetBytes: 100 << 20, Start: t0, End: t0.Add(2e9)}))
	}
	m = update(t, m, eventsMsg{events: append(evs, event.SweepEnded{Base: event.Base{Time: t0.Add(3e9)}})})
	for screen, offers := range map[string][]string{"2": {"x stop trial", "X cancel sweep", "s shell"}, "4": {"x stop the loop"}} {
		v := keys(t, m, screen).View()
		for _, o := range offers {
			if strings.Contains(v, o) {
				t.Errorf("screen %s still offers %q after the sweep ended:\n%s", screen, o, v)
			}
		}
	}
}

// Focus's x stops the focus loop alone: with a setup's sweep running (no
// loop), the Focus screen offers no "x stop the loop" and x asks nothing;
// it asked "Stop the focus loop?" and its yes cancelled the sweep.
func TestFocusStopsOnlyTheFocusLoop(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 40})
	m = update(t, m, m.launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}}, Scale: model.ScaleBoth, Repeats: 2, Concurrency: 1, Seed: 1})())
	if !m.Running() {
		t.Fatal("the setup's sweep is not running")
	}
	focus := keys(t, m, "4")
	if v := focus.View(); strings.Contains(v, "x stop the loop") {
		t.Errorf("with a setup's sweep running, Focus offers to stop a loop:\n%s", v)
	}
	if after := keys(t, focus, "x"); after.confirm != nil {
		t.Errorf("Focus's x asked %q with no focus loop running", after.confirm.text(0, 0))
	}
}
