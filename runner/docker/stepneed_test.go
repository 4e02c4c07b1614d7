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
	needEngine(t) // before parseTask: the test image is known once the engine is
	task := parseTask(t, enginetest.KilledThenVerify)
	b := newBackend(t, Options{})
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 3, context.Background(), nil)
	for _, r := range results {
		enginetest.CheckVerifierNeed(t, r)
	}
}
