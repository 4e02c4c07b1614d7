package cli

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/ui"
)

// The console's launcher hands Setup's scale to the engine as run does
// (the engine records it in the manifest and every trial's policy; the
// test binary cannot be the workload, so the sweep itself is run's test).
func TestConsoleLaunchCarriesTheScale(t *testing.T) {
	l := &consolePort{out: t.TempDir()}
	for _, sc := range []model.Scale{model.ScaleMemory, model.ScaleCPU, ""} {
		s := l.sessionSpec(ui.LaunchSpec{Ratios: []model.Ratio{{K: 1}}, Scale: sc, Repeats: 2, Concurrency: 1, Seed: 3})
		if s.Scale != sc || s.Repeats != 2 || s.Seed != 3 || s.OutRoot == "" {
			t.Errorf("scale %q: session spec %+v", sc, s)
		}
	}
}
