package ui

import (
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/headroom-eval/headroom/model"
)

// A stored experiment opens from its trials' summaries (no processes);
// a trial's detail reads its record, and shows what only the record has.
func TestDetailReadsTheRecord(t *testing.T) {
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{heavyOnly(t)}, Ratios: []model.Ratio{{K: 1}}, Repeats: 2, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var summaries []model.TrialResult
	for _, tr := range plan.Trials {
		summaries = append(summaries, model.TrialResult{Trial: tr, Outcome: model.Passed, Start: t0, End: t0.Add(time.Minute),
			Steps: []model.StepResult{{Name: "solve", Start: t0, End: t0.Add(time.Minute)}}})
	}
	asked := 0
	exp := Experiment{ID: "20261201-100000-aaaa", Status: "finished", Trials: 2, Ratios: plan.Ratios, Repeats: 2,
		Load: func() (model.Plan, []model.TrialResult, error) { return plan, summaries, nil },
		Record: func(id string) (model.TrialResult, error) {
			asked++
			r := summaries[0]
			r.Steps = []model.StepResult{{Name: "solve", Show: "python solve-with-a-long-name.py", Start: t0, End: t0.Add(time.Minute)}}
			r.Activities = []model.Activity{{PID: 42, Command: "python solve-with-a-long-name.py", Step: "solve", Start: t0, End: t0.Add(time.Minute), PeakRSSBytes: 100 << 20}}
			return r, nil
		}}
	m := update(t, New(testOptions(t, &fakeLauncher{})), tea.WindowSizeMsg{Width: 160, Height: 50})
	m = update(t, m, loadedMsg{exp: exp, plan: plan, results: summaries})
	v := m.State().Trials[plan.Trials[0].ID]
	if len(v.Activities) != 0 {
		t.Fatal("the summary has processes")
	}
	m = update(t, m, openTrialMsg{v})
	if asked != 1 || len(v.Activities) != 1 || v.Steps[0].Show == "" {
		t.Fatalf("asked for the record %d times; the detail has %d processes, step %+v", asked, len(v.Activities), v.Steps[0])
	}
	if view := m.View(); !strings.Contains(view, "solve-with-a-long-name") {
		t.Errorf("the detail does not show the record's processes:\n%s", view)
	}
	m = update(t, m, closeTrialMsg{})
	m = update(t, m, openTrialMsg{v})
	if asked != 1 {
		t.Errorf("the record was read %d times for one trial", asked)
	}
}
