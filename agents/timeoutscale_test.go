package agents

import (
	"strings"
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

// A scale that leaves a limit shorter than any step takes to start is
// refused, naming the task and the limit (1e-12 was taken, and the
// trials were recorded as the engine gone: the twelfth attacker's 8).
func TestTimeoutScaleTooSmallIsRefused(t *testing.T) {
	s := DefaultSettings()
	s.TimeoutScale = 1e-12
	_, _, err := s.Apply([]model.Task{{Name: "t", AgentTimeout: 8e9, VerifierTimeout: 10e9, Image: "img"}})
	if err == nil || !strings.Contains(err.Error(), "makes task t's") || !strings.Contains(err.Error(), "shorter than any step takes to start") {
		t.Errorf("--timeout-scale 1e-12: %v; want it refused", err)
	}
	s.TimeoutScale = 0.01 // 80 ms and 100 ms: taken
	if _, _, err := s.Apply([]model.Task{{Name: "t", AgentTimeout: 8e9, VerifierTimeout: 10e9, Image: "img"}}); err != nil {
		t.Errorf("--timeout-scale 0.01: %v", err)
	}
}
