package docker

import (
	"context"
	"testing"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
)

// A step's need is its own: after a step OOM-killed at its 128 MiB limit,
// the verifier's recorded need (its kernel peak, with and without cache)
// is its own few MiB, not the killed step's mark carried over the step
// boundary (issue #39: 127 MiB in 3 of 3 such trials).
func TestStepNeedAfterAKillIsTheStepsOwn(t *testing.T) {
	task := parseTask(t, enginetest.KilledThenVerify)
	b := newBackend(t, Options{})
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 3, context.Background(), nil)
	for _, r := range results {
		checkVerifierNeed(t, r)
	}
}

func checkVerifierNeed(t *testing.T, r model.TrialResult) {
	t.Helper()
	var install, verify *model.StepResult
	for i := range r.Steps {
		switch s := &r.Steps[i]; {
		case s.Name == "install":
			install = s
		case s.Phase == model.PhaseVerifier:
			verify = s
		}
	}
	if install == nil || verify == nil || install.OOMKills == 0 {
		t.Fatalf("trial %s (%s): want install OOM-killed and a verifier, got %+v", r.ID, r.Outcome, r.Steps)
	}
	t.Logf("%s: install kernel peak %s; verifier sampled %s, kernel peak %s, without cache %s, need %s", r.ID,
		model.FormatBytes(install.KernelPeakBytes), model.FormatBytes(verify.PeakWorkingSetBytes), model.FormatBytes(verify.KernelPeakBytes),
		model.FormatBytes(verify.KernelPeakNoCacheBytes), model.FormatBytes(model.StepPeakBytes(*verify)))
	if need := model.StepPeakBytes(*verify); need > enginetest.VerifierNeedMiB*model.MiB {
		t.Errorf("%s: verifier need %s (kernel peak %s): the killed step's %s carried over", r.ID, model.FormatBytes(need),
			model.FormatBytes(verify.KernelPeakBytes), model.FormatBytes(install.KernelPeakBytes))
	}
}
