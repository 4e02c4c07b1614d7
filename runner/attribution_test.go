package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/fake"
)

// witnessed wraps the fake engine's sandboxes so that Remove reports what
// a real engine's events and cgroup would have (runner.Final's evidence).
type witnessed struct {
	*fake.Backend
	final func(task string, f *runner.Final)
}

func (w witnessed) Start(ctx context.Context, req runner.StartRequest) (runner.Sandbox, error) {
	tr := req.Trial
	sb, err := w.Backend.Start(ctx, req)
	if err != nil {
		return nil, err
	}
	return finalSandbox{Sandbox: sb, final: func(f *runner.Final) { w.final(tr.Task, f) }}, nil
}

type finalSandbox struct {
	runner.Sandbox
	final func(*runner.Final)
}

func (s finalSandbox) Remove(ctx context.Context) (runner.Final, error) {
	f, err := s.Sandbox.Remove(ctx)
	s.final(&f)
	return f, err
}

func TestCausesThroughTheRunner(t *testing.T) {
	tasks := []model.Task{
		fake.Task("own", 64*model.MiB, "install"),
		fake.Task("pressure", 64*model.MiB, "install"),
		fake.Task("killed", 64*model.MiB, "install"),
		fake.Task("restart", 64*model.MiB, "install"),
		fake.Task("pids", 64*model.MiB, "build"),
		fake.Task("disk", 64*model.MiB, "build"),
		fake.Task("survived", 64*model.MiB, "install"),
		fake.Task("late", 64*model.MiB, "install"),
		fake.Task("helper", 64*model.MiB, "install"),
	}
	b := witnessed{Backend: &fake.Backend{Script: script(map[string]fake.StepPlan{
		"own/install":      {ExitCode: 137, OOM: true, PeakBytes: 64 * model.MiB},
		"pressure/install": {ExitCode: 137, OOM: true, PeakBytes: 20 * model.MiB},
		"killed/install":   {ExecErr: errors.New("the container has stopped (its step driver ended)")},
		"restart/install":  {ExecErr: errors.New("the container has stopped (its step driver ended)")},
		"pids/build":       {ExitCode: 2, Lines: []string{"runtime: failed to create new OS thread"}},
		"disk/build":       {ExitCode: 1, Lines: []string{"OSError: [Errno 28] No space left on device"}},
		"own/verify":       {ExitCode: 1},
		"pressure/verify":  {ExitCode: 1},
		"pids/verify":      {ExitCode: 1},
		"disk/verify":      {ExitCode: 1},
		"survived/install": {OOM: true},
		// The kill's notice came after the step closed (a loaded host):
		// the counters read after its peak was reset say no hit, but the
		// step's own kernel peak is the limit.
		"late/install": {ExitCode: 137, LateOOM: true, PeakBytes: 64 * model.MiB},
		"late/verify":  {ExitCode: 1},
		// Its network helper OOM-killed under it: the verifier, cut off
		// the network, failed.
		"helper/verify": {ExitCode: 1},
	})}, final: func(task string, f *runner.Final) {
		switch task {
		case "own":
			f.LimitHits, f.LimitHitsKnown = 3, true
		case "pressure":
			f.LimitHits, f.LimitHitsKnown = 0, true
		case "killed":
			f.KilledBy = "SIGKILL"
		case "restart":
			f.EngineRestarted = true
		case "survived", "late":
			f.LimitHitsKnown = true // and none
		case "pids":
			f.PidsLimitHits = 7
		case "helper":
			f.KilledBy = model.Witness(runner.HelperOOMKilled + " its network helper (the container shaping its network)")
		}
	}}
	res := runSweep(t, b, config(t, tasks, model.Ratio{K: 1}), context.Background(), nil)
	want := map[string]struct {
		outcome model.Outcome
		cause   model.Cause
		reason  string
	}{
		"own":      {model.OOMKilled, model.CauseOwnLimit, "OOM-killed in step install"},
		"pressure": {model.InfraError, model.CauseOutsidePressure, "under its own limit"},
		"killed":   {model.InfraError, model.CauseKilledOutside, "SIGKILL"},
		"restart":  {model.InfraError, model.CauseEngineLost, "engine went away"},
		"pids":     {model.Failed, model.CausePidsLimit, "refused 7 fork(s)"},
		"disk":     {model.Failed, model.CauseDiskFull, "ENOSPC"},
		"survived": {model.PassedAfterOOM, model.CauseOutsidePressure, "pressure from outside"},
		"late":     {model.OOMKilled, model.CauseOwnLimit, "OOM-killed in step install"},
		"helper":   {model.InfraError, model.CauseKilledOutside, "its network helper (the container shaping its network) was OOM-killed at its own limit during step verify: the knob it applied stopped acting"},
	}
	for task, w := range want {
		r := res.results[task+"@1x"]
		if r.Outcome != w.outcome || r.Cause != w.cause || !strings.Contains(r.Reason, w.reason) {
			t.Errorf("%s: %s / %q (%s), want %s / %q with %q", task, r.Outcome, r.Cause, r.Reason, w.outcome, w.cause, w.reason)
		}
	}
}
