package report

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// Each imported run's own score stands beside headroom's count of the
// same trials: "the same" when they are, else each cause on a line; a
// run that wrote no score says so.
func TestImportedLinesSetTheRunsOwnScoreBesideHeadroomsCount(t *testing.T) {
	trial := func(job string, o model.Outcome) model.TrialResult {
		return model.TrialResult{Outcome: o, Imported: &model.Imported{Harness: "harbor", Job: job}}
	}
	var trials []model.TrialResult
	for _, o := range []model.Outcome{model.Passed, model.PassedAfterTimeout, model.Failed, model.InfraError} {
		trials = append(trials, trial("jobs/a", o))
	}
	for _, o := range []model.Outcome{model.Passed, model.Timeout, model.Cancelled} {
		trials = append(trials, trial("jobs/b", o))
	}
	trials = append(trials, trial("jobs/c", model.Passed))
	trials = append(trials, trial("jobs/d", model.Passed), trial("jobs/d", model.Failed))
	m := &store.Manifest{Imported: []store.ImportSource{
		{Harness: "harbor", Dir: "jobs/a", Trials: 4, Own: &store.HarnessScore{Metric: "mean reward", Value: 0.5, From: "result.json", Passes: 2, Trials: 4}},
		{Harness: "harbor", Dir: "jobs/b", Trials: 3, Own: &store.HarnessScore{Metric: "mean reward", Value: 1.0 / 3, From: "result.json", Passes: 1, Trials: 3,
			Differences: []string{"1 trial cancelled: Harbor's mean counts each as reward 0, headroom's rates leave cancelled trials out"}}},
		{Harness: "harbor", Dir: "jobs/c", Trials: 1},
		// Rewards 1 and 0.5: one pass of two in either count, but
		// Harbor's mean is 0.75.
		{Harness: "harbor", Dir: "jobs/d", Trials: 2, Own: &store.HarnessScore{Metric: "mean reward", Value: 0.75, From: "result.json", Passes: 1, Trials: 2,
			Differences: []string{"rewards other than 0 and 1 (0.5): Harbor's mean averages them, headroom passes a trial at reward ≥ 1"}}},
	}}
	got := strings.Join((&Report{Manifest: m, Trials: trials}).importedLines(), "\n")
	for _, want := range []string{
		"its own score: mean reward 50.00% (2 of 4), from result.json · headroom: 2 of 4 passed (50.00%): the same",
		"its own score: mean reward 33.33% (1 of 3), from result.json · headroom: 1 of 2 passed (50.00%), because:\n      1 trial cancelled",
		"its own score: not written by the run · headroom: 1 of 1 passed (100.00%)",
		"its own score: mean reward 75.00% (1 of 2), from result.json · headroom: 1 of 2 passed (50.00%), because:\n      rewards other than 0 and 1 (0.5)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lines lack %q:\n%s", want, got)
		}
	}
}
