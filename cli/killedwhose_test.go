package cli

import (
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// The live OOM lines say whose the killed process was when not the
// running step's: the environment's (started before any step, by the
// container's entrypoint) or an earlier step's; the step's own, nothing.
func TestKilledWhoseNamesTheEnvironmentAndLeftovers(t *testing.T) {
	for _, c := range []struct {
		o    model.OOMEvent
		want string
	}{
		{model.OOMEvent{Entrypoint: true}, ", a process started by the container's entrypoint (the task's environment, not the step's)"},
		{model.OOMEvent{StartedInStep: "nohup python3 hog.py"}, ", a process left running by step nohup python3 hog.py"},
		{model.OOMEvent{}, ""},
	} {
		if got := killedWhose(c.o); got != c.want {
			t.Errorf("killedWhose(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
