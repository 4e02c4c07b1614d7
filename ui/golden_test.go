package ui

import (
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/headroom-eval/headroom/model"
)

var sizes = []struct{ w, h int }{{80, 24}, {120, 40}}

// update runs one message through the model.
func update(t testing.TB, m Model, msg tea.Msg) Model {
	t.Helper()
	next, _ := m.Update(msg)
	return next.(Model)
}

func keys(t testing.TB, m Model, ks ...string) Model {
	t.Helper()
	for _, k := range ks {
		var msg tea.KeyMsg
		switch k {
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "space":
			msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "right":
			msg = tea.KeyMsg{Type: tea.KeyRight}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		m = update(t, m, msg)
	}
	return m
}

// withSweep is the console after the scripted sweep's events.
func withSweep(t testing.TB, w, h int) (Model, *fakeLauncher) {
	t.Helper()
	l := &fakeLauncher{}
	m := New(testOptions(t, l))
	m = update(t, m, tea.WindowSizeMsg{Width: w, Height: h})
	m = update(t, m, hostMsg(portOf(m.opts).host()))
	sw, err := l.Launch(LaunchSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}, model.Uncapped}, Repeats: 2, Concurrency: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	m = update(t, m, launchedMsg{sweep: sw, spec: l.specs[0]})
	m = update(t, m, eventsMsg{events: scriptedEvents(sw.Plan())})
	return m, l
}

func checkFits(t *testing.T, view string, w, h int) {
	t.Helper()
	lines := strings.Split(view, "\n")
	if len(lines) != h {
		t.Errorf("view has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := len([]rune(l)); n > w {
			t.Errorf("line %d is %d columns wide (max %d): %q", i+1, n, w, l)
		}
	}
}

func TestGoldenScreens(t *testing.T) {
	screens := []struct {
		name string
		keys []string
	}{
		{"live", nil},
		{"matrix", []string{"3"}},
		{"matrix-cell", []string{"3", "enter"}},
		{"detail", []string{"3", "enter", "enter"}},
		{"detail-search", []string{"3", "enter", "enter", "/", "p", "a", "n", "d", "a", "s", "enter"}},
		{"focus-empty", []string{"4"}},
		{"history", []string{"5"}},
		{"help", []string{"?"}},
		{"quit-confirm", []string{"q"}},
	}
	for _, sz := range sizes {
		for _, sc := range screens {
			t.Run(fmt.Sprintf("%s-%dx%d", sc.name, sz.w, sz.h), func(t *testing.T) {
				m, _ := withSweep(t, sz.w, sz.h)
				m = keys(t, m, sc.keys...)
				if sc.name == "history" {
					m = update(t, m, m.listHistory()())
				}
				view := m.View()
				checkFits(t, view, sz.w, sz.h)
				golden.RequireEqual(t, []byte(view))
			})
		}
		t.Run(fmt.Sprintf("setup-%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := New(testOptions(t, &fakeLauncher{}))
			m = update(t, m, tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			m = keys(t, m, "space", "down", "down", "space", "tab", "right", "space")
			view := m.View()
			checkFits(t, view, sz.w, sz.h)
			golden.RequireEqual(t, []byte(view))
		})
		t.Run(fmt.Sprintf("setup-scale-cpu-%dx%d", sz.w, sz.h), func(t *testing.T) {
			m := New(testOptions(t, &fakeLauncher{}))
			m = update(t, m, tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			m = keys(t, m, "space", "tab", "tab", "down", "down", "down", "down", "+", "+")
			view := m.View()
			checkFits(t, view, sz.w, sz.h)
			golden.RequireEqual(t, []byte(view))
		})
		t.Run(fmt.Sprintf("focus-%dx%d", sz.w, sz.h), func(t *testing.T) {
			l := &fakeLauncher{}
			m := New(testOptions(t, l))
			m = update(t, m, tea.WindowSizeMsg{Width: sz.w, Height: sz.h})
			m.setup.focusRuns = 4
			next, cmd := m.startFocus(heavyOnly(t), "heavy", model.Ratio{K: 1}, model.ScaleBoth)
			m = update(t, next.(Model), cmd())
			m = update(t, m, eventsMsg{events: focusEvents(l.last.plan)})
			view := m.View()
			checkFits(t, view, sz.w, sz.h)
			golden.RequireEqual(t, []byte(view))
		})
	}
}

// focusEvents finishes a focus loop: runs 1 and 3 killed, 2 and 4 passed.
func focusEvents(plan model.Plan) []runner_Event {
	var evs []runner_Event
	for i, tr := range plan.Trials {
		out := model.Passed
		peak := int64(110+i*3) << 20
		r := model.TrialResult{Trial: tr, Outcome: out, PeakWorkingSetBytes: peak, Start: t0, End: t0.Add(2e9)}
		if i%2 == 0 {
			r.Outcome = model.OOMKilled
			r.PeakWorkingSetBytes = 128 << 20
			r.Reason = "OOM-killed in step install at limit 128MiB"
			r.OOMs = []model.OOMEvent{{At: t0.Add(1e9), Step: "install", Source: "events", WorkingSetBytes: 127 << 20}}
		}
		evs = append(evs, trialEnded(r))
	}
	return evs
}
