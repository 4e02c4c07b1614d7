package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
)

// A trial killed from outside shows the cause's glyph in the matrix, its
// legend and the count from outside, and the cause's banner on its card.
func TestCauseShowsInTheMatrixAndOnTheCard(t *testing.T) {
	m, _ := withSweep(t, 140, 44)
	var tr model.Trial
	for _, x := range m.state.Plan.Trials {
		if x.ID == "t0003" {
			tr = x
		}
	}
	end := model.TrialResult{Trial: tr, Outcome: model.InfraError, Cause: model.CauseKilledOutside,
		Reason: "killed from outside with SIGKILL during step install", Start: t0, End: t0.Add(2 * time.Second)}
	m = update(t, m, eventsMsg{events: []event.Event{event.TrialEnded{Base: event.Base{Trial: "t0003", Time: t0.Add(2 * time.Second)}, Result: end}}})
	matrix := keys(t, m, "3").View()
	for _, want := range []string{"KS", model.CauseKilledOutside.Glyph() + " killed from outside", "from outside"} {
		if !strings.Contains(matrix, want) {
			t.Errorf("matrix lacks %q:\n%s", want, matrix)
		}
	}
	live := keys(t, m, "2").View()
	if !strings.Contains(live, model.CauseKilledOutside.Banner("")) {
		t.Errorf("the card lacks the cause's banner %q:\n%s", model.CauseKilledOutside.Banner(""), live)
	}
}

// A task whose memory_mb was misspelt ran every column from the default:
// its matrix row says "(typo)" and the key is said under the table, in
// a sweep and opened from history (the run's warning scrolled away above
// the console: a new user's).
func TestTypoRowIsMarkedInTheMatrix(t *testing.T) {
	typo := model.Deviation{What: model.SuspectedTypo, Detail: "line 4: environment.memroy_mb: did you mean memory_mb?" + model.TypoIgnored}
	task := heavyOnly(t)
	task.Deviations = append(task.Deviations, typo)
	task.Resources.Defaulted = append(task.Resources.Defaulted, "memory")
	c := &Common{Spec: LaunchSpec{Tasks: []model.Task{task}}}
	if n := c.typoNotes()[task.Name]; !strings.Contains(n, "memroy_mb") || !strings.Contains(n, "limits are scaled") {
		t.Errorf("the sweep's typo note %q", n)
	}
	opened := &Common{Loaded: &Experiment{Typos: map[string]string{task.Name: "x"}}}
	if n := opened.typoNotes()[task.Name]; n != "x" {
		t.Errorf("the manifest's typo note %q; want x", n)
	}

	m, _ := withSweep(t, 140, 44)
	m.spec.Tasks = []model.Task{task}
	matrix := keys(t, m, "3").View()
	for _, want := range []string{"bn-fit-modify · heavy (typo)", "(typo) bn-fit-modify: line 4: environment.memroy_mb"} {
		if !strings.Contains(matrix, want) {
			t.Errorf("matrix lacks %q:\n%s", want, matrix)
		}
	}
}

// The setup screen marks a task whose file has a suspected typo on its
// row, and says the key under the preview: its warning was one of "… and
// 3 more skipped or warned about", the row read 2.0G like any other (a
// new user's).
func TestTypoTaskIsMarkedOnSetup(t *testing.T) {
	opts := testOptions(t, &fakeLauncher{})
	task := heavyOnly(t)
	task.Deviations = append(task.Deviations, model.Deviation{What: model.SuspectedTypo, Detail: "line 4: environment.memroy_mb: did you mean memory_mb?" + model.TypoIgnored})
	opts.Tasks = []model.Task{task}
	m := New(opts)
	m = update(t, m, tea.WindowSizeMsg{Width: 140, Height: 44})
	view := m.View()
	for _, want := range []string{"⚠ typo in its file", "⚠ typo: line 4: environment.memroy_mb: did you mean memory_mb?"} {
		if !strings.Contains(view, want) {
			t.Errorf("setup lacks %q:\n%s", want, view)
		}
	}
}
