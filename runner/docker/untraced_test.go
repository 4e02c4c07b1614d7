package docker

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// run --trace=false: a traced script runs untraced, as one step with its
// output, and the trial says so; traced, each command is a step.
func TestUntracedScriptIsOneStep(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := parseTask(t, debianSteps)
	task.Image = DebianImage
	task.Agents[0].Steps = []model.Step{{Name: "loop.sh", Argv: []string{"-c", `i=0; while [ $i -lt 50 ]; do i=$((i+1)); done; echo "done $i"`}, Trace: true}}
	task.Verifier = model.Step{Name: "verify", Argv: []string{"true"}}
	for _, untraced := range []bool{true, false} {
		results, _ := sweepTuned(t, newBackend(t, Options{DriverBinary: testBinary}), []model.Task{task}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil,
			func(c *runner.Config) { c.Untraced = untraced })
		r := results[0]
		var agent []model.StepResult
		for _, s := range r.Steps {
			if s.Phase == "agent" {
				agent = append(agent, s)
			}
		}
		if r.Untraced != untraced || r.Outcome != model.Passed {
			t.Errorf("untraced %v: recorded untraced %v, %s (%s)", untraced, r.Untraced, r.Outcome, r.Reason)
		}
		switch {
		case untraced && (len(agent) != 1 || agent[0].Name != "loop.sh" || agent[0].Output != "done 50"):
			t.Errorf("untraced: agent steps %+v, want loop.sh alone, its output `done 50`", agent)
		case !untraced && len(agent) < 50:
			t.Errorf("traced: %d agent steps, want each command one", len(agent))
		}
	}
}

// An untraced script's step is the whole script from its start: a silent
// one was opened at its end, its window the last microseconds, its peak
// and CPU none of its work (a new user's: a 4 s solve recorded as 5 µs
// at 5.6 MiB beside an 88 MiB trial).
func TestUntracedSilentScriptIsItsWholeTime(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := parseTask(t, debianSteps)
	task.Image = DebianImage
	task.Agents[0].Steps = []model.Step{{Name: "solve.sh", Argv: []string{"-c", `sleep 1; python3 -c "x = bytearray(60 << 20); import time; time.sleep(0.5)"`}, Trace: true}}
	task.Verifier = model.Step{Name: "verify", Argv: []string{"true"}}
	results, _ := sweepTuned(t, newBackend(t, Options{DriverBinary: testBinary}), []model.Task{task}, []model.Ratio{model.Uncapped}, 1, context.Background(), nil,
		func(c *runner.Config) { c.Untraced = true })
	for _, s := range results[0].Steps {
		if s.Name != "solve.sh" {
			continue
		}
		if d := s.Duration(); d < 1400*time.Millisecond || s.PeakWorkingSetBytes < 60<<20 {
			t.Errorf("solve.sh: %s, peak %s; want its whole 1.5 s and its 60 MiB", d, model.FormatBytes(s.PeakWorkingSetBytes))
		}
		return
	}
	t.Errorf("no step solve.sh in %+v", results[0].Steps)
}
