package ui

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A trial opened from History has its task's image from the manifest, as
// a live trial has it from its start: its detail then says what a rerun
// is (exact for the seeded workload) and names the image.
func TestHistoryTrialsHaveTheirImages(t *testing.T) {
	tr := model.Trial{ID: "t0001", Task: "builtin/heavy", Agent: "heavy", Ratio: model.Ratio{K: 3}, Repeat: 1}
	plan := model.Plan{Trials: []model.Trial{tr}}
	results := []model.TrialResult{{Trial: tr, Outcome: model.Failed}}
	s := FromResults(plan, results).withImages(map[string]string{"builtin/heavy": "headroom-workload:3853d09be6a5"})
	if got := s.Trials["t0001"].Image; got != "headroom-workload:3853d09be6a5" {
		t.Errorf("image %q, want the manifest's", got)
	}
	if !model.SeededImage(s.Trials["t0001"].Image) {
		t.Error("the built-in workload's image is not seeded: the detail would say 'with the same settings'")
	}
}
