package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// The presets of Setup's knob controls are valid sweeps.
func TestKnobPresetsParse(t *testing.T) {
	for _, p := range knobPresets {
		for _, v := range p.values[1:] {
			if _, err := model.ParseAxis(p.key, v); err != nil {
				t.Errorf("%s preset %q: %v", p.label, v, err)
			}
		}
	}
}

// Setup's latency control adds its columns to the sweep and the preview.
func TestSetupKnobControlSweepsLatency(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 40})
	// Select a row, go to the options, down to latency (the seventh), on.
	m = keys(t, m, "space", "tab", "tab")
	for i := 0; i < optLatency; i++ {
		m = keys(t, m, "down")
	}
	m = keys(t, m, "right")
	view := m.View()
	if !strings.Contains(view, "latency 0,50ms,200ms") || !strings.Contains(view, "each ratio at 3 knob settings") {
		t.Fatalf("setup after turning latency on:\n%s", view)
	}
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil {
		t.Fatal("enter did not start a sweep")
	}
	update(t, next.(Model), cmd())
	if len(l.specs) != 1 || len(l.specs[0].Axes) != 1 || l.specs[0].Axes[0].Name != "latency" || len(l.last.plan.Ratios) != 9 {
		t.Fatalf("launched %+v", l.specs)
	}
}

// The matrix heads a knob's columns with its group and short values,
// compares each within its knob, and shows what the cursor cell's
// trials measured in their containers.
func TestGoldenMatrixKnobs(t *testing.T) {
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: 100, Height: 30})
	m = update(t, m, hostMsg(portOf(m.opts).host()))
	lat, _ := model.ParseAxis("latency", "0,200ms")
	task := heavyOnly(t)
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}, {K: 3}}, Axes: []model.Axis{lat}, Repeats: 2, Concurrency: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	plan := sw.Plan()
	evs := []event.Event{event.SweepStarted{Base: event.Base{Time: t0}, Plan: plan}}
	for i, tr := range plan.Trials {
		o := model.Passed
		rtt := 0.3
		if tr.Ratio.Knobs.Latency > 0 {
			o, rtt = model.Timeout, 201
		}
		if tr.Ratio.K == 1 && tr.Repeat == 1 {
			o = model.OOMKilled
		}
		res := model.TrialResult{Trial: tr, Outcome: o, Start: t0, End: t0.Add(time.Duration(i+1) * time.Second),
			Knobs: &model.KnobRecord{Measured: []model.Measure{{Name: "model_rtt", Value: rtt, Unit: "ms", Where: "container"}}}}
		evs = append(evs, event.TrialQueued{Base: event.Base{Trial: tr.ID, Time: t0}, Trial: tr}, event.TrialEnded{Base: event.Base{Trial: tr.ID, Time: res.End}, Result: res})
	}
	m = update(t, m, eventsMsg{events: evs})
	m = keys(t, m, "3", "right", "right")
	view := m.View()
	checkFits(t, view, 100, 30)
	for _, want := range []string{"── ratio", "── network", "1x +200ms", "vs 1x", "measured in the container: model_rtt 201ms"} {
		if !strings.Contains(view, want) {
			t.Errorf("matrix lacks %q:\n%s", want, view)
		}
	}
	golden.RequireEqual(t, []byte(view))
}

// tab reaches the Knobs row (it was reachable only by walking down the
// options), its keys are said while there, and with every knob on the row
// wraps instead of being cut at the width.
func TestSetupKnobsRowByTabAndWrapped(t *testing.T) {
	m := New(testOptions(t, &fakeLauncher{}))
	m = update(t, m, tea.WindowSizeMsg{Width: 80, Height: 40})
	m = keys(t, m, "tab", "tab", "tab")
	view := m.View()
	if !strings.Contains(view, "▸time off") || !strings.Contains(view, "↑/↓ choose an option or knob · ←/→ or +/- change it") {
		t.Fatalf("tab ×3 is not on the knobs row:\n%s", view)
	}
	for i := optTime; i < optCount; i++ {
		m = keys(t, m, "right", "right", "down")
	}
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "neighbours") && strings.HasSuffix(strings.TrimSpace(l), "…") {
			t.Errorf("knobs row cut: %q", l)
		}
	}
	if !strings.Contains(m.View(), "neighbours ") {
		t.Errorf("no neighbours knob shown:\n%s", m.View())
	}
	// shift+tab from the knobs goes back to the options' row.
	m = update(t, m, tea.KeyMsg{Type: tea.KeyShiftTab})
	if m.setup.pane != paneOptions || m.setup.optCursor >= optTime {
		t.Errorf("shift+tab: pane %d cursor %d", m.setup.pane, m.setup.optCursor)
	}
}

// Setup's preview shows what a knob column runs as, and warns that a
// latency column of a task with no network runs unshaped.
func TestSetupPreviewShowsKnobReproduceAndNothingToShape(t *testing.T) {
	l := &fakeLauncher{}
	opts := testOptions(t, l)
	portOf(opts).reproduce = func(task, image string, p model.ResourcePolicy) string {
		return "docker run --memory=" + model.FormatBytes(p.HardLimitBytes) + " " + image + "; then tc netem " + p.Ratio.Knobs.String()
	}
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 120, Height: 60})
	m = keys(t, m, "space", "tab", "tab")
	for i := 0; i < optLatency; i++ {
		m = keys(t, m, "down")
	}
	m = keys(t, m, "right")
	view := m.View()
	for _, want := range []string{"nothing to shape, the task runs with no network", "latency=50ms runs as:", "then tc netem latency=50ms"} {
		if !strings.Contains(view, want) {
			t.Errorf("setup preview lacks %q:\n%s", want, view)
		}
	}
}
