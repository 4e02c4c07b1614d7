package agents

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// --timeout-scale marks the tasks it scaled, so a time column's record
// does not call the scaled limits the task's own.
func TestTimeoutScaleMarksTheTask(t *testing.T) {
	s := DefaultSettings()
	s.TimeoutScale = 2
	out, _, err := s.Apply([]model.Task{{Name: "t", AgentTimeout: 8e9, VerifierTimeout: 10e9, Image: "img"}})
	if err != nil {
		t.Fatal(err)
	}
	if out[0].TimeoutScale != 2 || out[0].AgentTimeout != 16e9 {
		t.Fatalf("task %+v: want its limits doubled and marked ×2", out[0])
	}
}
