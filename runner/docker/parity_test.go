package docker

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// runOne runs each task's oracle once, uncapped, with the host secrets
// given, and returns the results by task name.
func runOne(t *testing.T, secrets map[string]string, tasks ...model.Task) map[string]model.TrialResult {
	t.Helper()
	return runOneWith(t, Options{}, secrets, tasks...)
}

// runOneWith is runOne on a backend with opts.
func runOneWith(t *testing.T, opts Options, secrets map[string]string, tasks ...model.Task) map[string]model.TrialResult {
	t.Helper()
	plan, err := model.NewPlan(model.PlanSpec{Tasks: tasks, Ratios: []model.Ratio{{Uncapped: true}}, Repeats: 1, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(newBackend(t, opts), runner.Config{Experiment: testExperimentPrefix, Plan: plan, Tasks: tasks,
		Concurrency: 2, GuaranteeCapacityBytes: 8 << 30, Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 256)
	go r.Run(context.Background(), out)
	results := map[string]model.TrialResult{}
	deadline := time.After(8 * time.Minute)
	for {
		select {
		case e, ok := <-out:
			if !ok {
				return results
			}
			if te, ok := e.(event.TrialEnded); ok {
				results[te.Result.Task] = te.Result
			}
		case <-deadline:
			t.Fatal("trials did not finish within 8 minutes")
		}
	}
}

// loadParity loads a parity fixture under a profile ("" keeps the
// task directory's default) with its oracle only.
func loadParity(t *testing.T, dir, profile string) model.Task {
	t.Helper()
	task := loadTB(t, dir, taskfile.AgentOracle)
	if profile != "" {
		task.SetProfile(profile)
		task.Name += "@" + profile
	}
	return task
}

func wantPassed(t *testing.T, r model.TrialResult, why string) {
	t.Helper()
	if r.Outcome != model.Passed {
		var steps []string
		for _, s := range r.Steps {
			steps = append(steps, s.Name+"→"+s.Output)
		}
		t.Errorf("%s: %s (%s), want passed: %s\nsteps %q", r.Task, r.Outcome, r.Reason, why, steps)
	}
}

// An image's HEALTHCHECK that never passes nor fails (a start period of
// 1000 h) held the trial at "creating container" for ever: the wait is
// bounded, then an infra error naming it (issue #40, item 13).
func TestImageHealthcheckWaitIsBounded(t *testing.T) {
	needDebian(t)
	task := loadParity(t, "image-health-forever", "")
	r := runOneWith(t, Options{ImageHealthWait: 5 * time.Second}, nil, task)[task.Name]
	if r.Outcome != model.InfraError || !strings.Contains(r.Reason, "HEALTHCHECK did not pass within 5s: still starting (its start period 1000h0m0s") {
		t.Errorf("%s %q, want an infra error naming the bounded HEALTHCHECK wait", r.Outcome, r.Reason)
	}
}

// network_mode = "no-network" gives the container no network; the same
// task under Harbor's default (public) has one.
func TestParityNoNetwork(t *testing.T) {
	needEngine(t)
	needDebian(t)
	off := loadParity(t, "parity-no-network", "")
	on := off
	on.Name, on.Network = "test/parity-network-public", "bridge"
	r := runOne(t, nil, off, on)
	wantPassed(t, r[off.Name], "only the loopback interface")
	if got := r[on.Name]; got.Outcome != model.Failed {
		t.Errorf("public network: %s (%s), want failed (the verifier sees an interface besides lo)", got.Outcome, got.Reason)
	}
}

// ${VAR:-default} resolves inside the container: the default when the
// host has no VAR, the host's value (a secret) when it has.
func TestParityEnvTemplates(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadParity(t, "parity-env", "")
	r := runOne(t, map[string]string{"HR_PARITY_KEY": "parity-key-from-the-host"}, task)
	wantPassed(t, r[task.Name], "PARITY_LEVEL=info (default) and PARITY_KEY from the host")
	for _, s := range r[task.Name].Steps {
		if strings.Contains(s.Output, "parity-key-from-the-host") {
			t.Errorf("the host's value reached the record: %q", s.Output)
		}
	}
}

// chroot and mknod work in Harbor's container and not in the hardened
// one; the audit of the hardened task names the capabilities it lacks.
func TestParityChrootByProfile(t *testing.T) {
	needEngine(t)
	needDebian(t)
	harbor := loadParity(t, "parity-chroot", model.ProfileHarbor)
	hardened := loadParity(t, "parity-chroot", model.ProfileHardened)
	r := runOne(t, nil, harbor, hardened)
	wantPassed(t, r[harbor.Name], "chroot and mknod under Docker's default capabilities")
	if got := r[hardened.Name]; got.Outcome == model.Passed {
		t.Errorf("hardened: passed, want the chroot to fail without SYS_CHROOT")
	}
	if r[harbor.Name].Profile != model.ProfileHarbor || r[hardened.Name].Profile != model.ProfileHardened {
		t.Errorf("recorded profiles %q, %q", r[harbor.Name].Profile, r[hardened.Name].Profile)
	}
	if d := harbor.AllDeviations(); len(d) != 0 {
		t.Errorf("harbor profile deviations %v, want none", d)
	}
	var caps string
	for _, d := range hardened.AllDeviations() {
		if d.What == "hardened profile: capabilities dropped" {
			caps = d.Detail
		}
	}
	if !strings.Contains(caps, "SYS_CHROOT") || !strings.Contains(caps, "MKNOD") {
		t.Errorf("hardened deviations %v, want the dropped SYS_CHROOT and MKNOD named", hardened.AllDeviations())
	}
}

// The agent starts only once the healthcheck passes (its third run, after
// the image's ENTRYPOINT ran), in the task's workdir, as the agent's user;
// the verifier runs as its own.
func TestParityHealthcheckWorkdirUsers(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadParity(t, "parity-healthcheck", "")
	if task.Healthcheck == nil || task.WorkDir != "/work" || task.AgentUser != "nobody" || task.Verifier.User != "root" {
		t.Fatalf("loaded healthcheck %v workdir %q users %q/%q", task.Healthcheck, task.WorkDir, task.AgentUser, task.Verifier.User)
	}
	never := loadParity(t, "parity-unhealthy", "")
	r := runOne(t, nil, task, never)
	wantPassed(t, r[task.Name], "healthy before the agent, in /work, as nobody; verifier as root")
	bad := r[never.Name]
	if bad.Outcome != model.InfraError || !strings.Contains(bad.Reason, "healthcheck failed 2 time(s) in a row (exit 3)") {
		t.Errorf("never healthy: %s (%s), want infra-error naming the healthcheck", bad.Outcome, bad.Reason)
	}
	if slices.ContainsFunc(bad.Steps, func(s model.StepResult) bool { return s.Phase == "agent" }) {
		t.Errorf("the agent ran in an environment that never became healthy: %v", bad.Steps)
	}
}

// A task that needs a GPU is refused, saying why, where the engine has
// none; it never runs without one.
func TestParityGPUNeverSilentlyAbsent(t *testing.T) {
	needEngine(t)
	if info, err := testCli.Info(context.Background()); err == nil {
		if _, ok := info.Runtimes["nvidia"]; ok {
			t.Skip("this engine has a GPU runtime")
		}
	}
	needDebian(t)
	task := loadParity(t, "parity-no-network", "")
	task.Name, task.GPUs = "test/parity-gpu", 1
	r := runOne(t, nil, task)[task.Name]
	if r.Outcome != model.InfraError || !strings.Contains(r.Reason, "needs 1 GPU(s) and this engine cannot give any") || len(r.Steps) != 0 {
		t.Errorf("%s (%s), steps %d: want infra-error saying the engine has no GPU, nothing run", r.Outcome, r.Reason, len(r.Steps))
	}
}

// A pinned docker_image is what runs, as in Harbor, even beside a
// Dockerfile; only when it cannot be had is the Dockerfile built, and the
// progress says so.
func TestParityPinnedImageBeforeDockerfile(t *testing.T) {
	needEngine(t)
	needDebian(t)
	l, err := taskfile.LoadTaskDir("testdata/tb/parity-pinned")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pinned := l.Task
	pinned.Image = DebianImage
	var said []string
	img, err := EnsureTaskImage(ctx, testCli, pinned, func(s string) { said = append(said, s) })
	if err != nil || img != DebianImage || len(said) != 0 {
		t.Errorf("pinned image on the engine: %q %v, said %q; want it used as is", img, err, said)
	}
	said = nil
	img, err = EnsureTaskImage(ctx, testCli, l.Task, func(s string) { said = append(said, s) })
	if err != nil || !strings.HasPrefix(img, TaskRepo+"/") {
		t.Fatalf("unpullable pinned image: %q %v, want the Dockerfile built", img, err)
	}
	if !slices.ContainsFunc(said, func(s string) bool {
		return strings.Contains(s, "headroom-test/never-published:1 could not be pulled") && strings.Contains(s, "which Harbor would not do")
	}) {
		t.Errorf("progress %q does not say the pinned image was replaced by a build", said)
	}
}

// An image's own HEALTHCHECK is waited on before the agent starts, as
// Harbor's `docker compose up --wait` does.
func TestParityImageHealthcheckWaited(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadParity(t, "parity-image-health", "")
	r := runOne(t, nil, task)
	wantPassed(t, r[task.Name], "the agent started after the image's HEALTHCHECK passed (its second run)")
}

// A healthcheck the kernel OOM-kills at the ratio's limit: the task could
// not come up under that limit, an OOM kill at its own limit, counted at
// the limit; with room (uncapped) it passes. Before, "healthcheck failed
// 2 time(s) in a row (exit 137)", an infra error with no kill and no
// cause (the twenty-third attacker's 2, 2 of 2).
func TestHealthcheckKilledAtTheLimitIsAnOOMKill(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := loadTB(t, "healthcheck-oom", taskfile.AgentOracle)
	plan, err := model.NewPlan(model.PlanSpec{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}, {Uncapped: true}}, Repeats: 1, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(newBackend(t, Options{}), runner.Config{Experiment: testExperimentPrefix, Plan: plan, Tasks: []model.Task{task},
		Concurrency: 2, GuaranteeCapacityBytes: 8 << 30})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 256)
	go r.Run(context.Background(), out)
	got := map[string]model.TrialResult{}
	for ev := range out {
		if end, ok := ev.(event.TrialEnded); ok {
			got[end.Result.Ratio.String()] = end.Result
		}
	}
	if k := got["1x"]; k.Outcome != model.OOMKilled || k.Cause != model.CauseOwnLimit || !strings.Contains(k.Reason, "during the task's [environment.healthcheck]") {
		t.Errorf("1x: %s · %s (%s); want oom-killed · own-limit during the healthcheck", k.Outcome, k.Cause, k.Reason)
	}
	wantPassed(t, got["uncapped"], "the healthcheck has room")
}
