package ui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// A traced script makes many steps; the table keeps the killed and failed
// ones and the latest, in order, and says how many it left out.
func TestStepsToShowKeepsTheKilledStep(t *testing.T) {
	var steps []model.StepResult
	for i := 0; i < 20; i++ {
		s := model.StepResult{Name: fmt.Sprintf("s%d", i)}
		switch i {
		case 3:
			s.OOMKills = 1
		case 7:
			s.ExitCode = 2
		}
		steps = append(steps, s)
	}
	got, hidden := stepsToShow(steps, 6)
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, " ") != "s3 s7 s17 s18 s19" || hidden != 15 {
		t.Errorf("shown %v hidden %d, want s3 s7 s17 s18 s19 and 15", names, hidden)
	}
	if got, hidden := stepsToShow(steps[:6], 6); len(got) != 6 || hidden != 0 {
		t.Errorf("six steps: %d shown, %d hidden", len(got), hidden)
	}
}
