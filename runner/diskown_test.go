package runner

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

// Round five, finding 4: a task that filled the container's own /dev/shm
// was recorded disk-full, its reason not saying whose the filesystem was.
// With only an Own tmpfs full (diskOwn) the trial is the task's plain
// failure, and the reason names the filesystem and whose it is.
func TestFullOwnTmpfsIsTheTasksFailure(t *testing.T) {
	f := facts{
		steps:       []model.StepResult{{Name: "solve", Phase: model.PhaseAgent, NoSpace: true, ExitCode: 1}},
		stepEnds:    []stepEnd{{step: 0, code: 1}},
		diskLooked:  true,
		diskOwn:     "/dev/shm (tmpfs) had 0B of 64MiB free",
		diskRoom:    "/ (overlay) had 20GiB of 100GiB free",
		noSpaceLine: "dd: error writing '/dev/shm/fill': No space left on device",
	}
	outcome, cause, reason := assemble(f)
	if outcome != model.Failed || cause != model.CauseNone {
		t.Errorf("assemble with only the container's own /dev/shm full = %s · %q; want failed, no cause (the task's own failure)", outcome, cause)
	}
	for _, want := range []string{"/dev/shm (tmpfs) had 0B of 64MiB free", "the container's own fixed-size tmpfs", "the task's own failure"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q: want it to say %q", reason, want)
		}
	}
	if strings.Contains(reason, "no filesystem of its container was full") {
		t.Errorf("reason %q says no filesystem was full; /dev/shm was", reason)
	}
}
