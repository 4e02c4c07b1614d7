package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/themes"
)

// A card's finished step says the step's peak as the detail view does
// (model.StepPeakBytes: the kernel's where it read higher than the
// samples). Before, the card said the sampled 41MiB beside the detail's
// 60MiB for one step (a new user's finding).
func TestCardStepPeakIsTheDetailsPeak(t *testing.T) {
	at := time.Unix(1_700_000_000, 0)
	s := model.StepResult{Name: "install", Start: at, End: at.Add(2 * time.Second), PeakWorkingSetBytes: 41 << 20, KernelPeakBytes: 60 << 20, KernelPeakNoCacheBytes: 60 << 20}
	line := stepsLine(newPaints(themes.Plain().Styles), []model.StepResult{s}, 80)
	if !strings.Contains(line, mib(model.StepPeakBytes(s))) || strings.Contains(line, mib(41<<20)) {
		t.Errorf("card's step line %q; want the step's peak %s (the detail's), not the sampled %s", line, mib(model.StepPeakBytes(s)), mib(41<<20))
	}
}
