package cli

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// report --baseline takes a knob's column, as the console's b does (it
// was refused: "1x time=2x" is no ratio).
func TestReportBaselineTakesAKnobColumn(t *testing.T) {
	s := statsFlags{baseline: "1x time=2x", noise: "3pp", detect: "3pp"}
	o, err := s.options()
	if err != nil {
		t.Fatal(err)
	}
	want, _ := model.ParseColumn("1x time=2x")
	if o.Baseline != want {
		t.Fatalf("baseline %s, want %s", o.Baseline, want)
	}
}
