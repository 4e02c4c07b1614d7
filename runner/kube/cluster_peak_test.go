package kube

import (
	"context"
	"testing"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

// clusterSeeded is one seeded workload with files written (a pip-style
// install), whose page cache each engine's storage charges differently:
// fuse-overlayfs or overlay2 on Docker, containerd's overlayfs here.
const clusterSeeded = `
[task]
name = "test/seeded-need"
[environment]
image = "builtin"
memory = "128M"
cpus = 1
[verifier]
workload = { style = "pytest", duration_ms = 200, base_mb = 5, requires = ["deps"] }
[[agents]]
name = "seeded"
  [[agents.steps]]
  name = "install"
  workload = { style = "pip", packages = ["pandas"], duration_ms = 1500, base_mb = 60, jitter_pct = 10, writes = ["deps"] }
`

// The same seeded workload on Docker and on the cluster has the same need
// within a few MiB: the need reads the kernel's peak without reclaimable
// cache, which is what differs between the two engines' storage.
func TestClusterNeedMatchesDocker(t *testing.T) {
	p, image := clusterPlatform(t)
	onKube := clusterSweep(t, p, []model.Task{clusterTask(t, image, clusterSeeded)}, []model.Ratio{model.Uncapped}, nil)

	ctx := context.Background()
	dp, err := docker.Open(ctx)
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	defer dp.Close()
	dimage, _, err := enginetest.WorkloadImage(ctx, dp, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := dp.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	onDocker, _ := enginetest.Run(t, ctx, b, enginetest.Sweep{Experiment: testExperiment, Tasks: []model.Task{clusterTask(t, dimage, clusterSeeded)}, Ratios: []model.Ratio{model.Uncapped}})
	if len(onKube) != 1 || len(onDocker) != 1 {
		t.Fatalf("%d trials on the cluster, %d on Docker", len(onKube), len(onDocker))
	}
	k, d := onKube[0], onDocker[0]
	for _, r := range []struct {
		name string
		r    model.TrialResult
	}{{"docker", d}, {"kubernetes", k}} {
		if r.r.Outcome != model.Passed {
			t.Fatalf("%s: %s (%s)", r.name, r.r.Outcome, r.r.Reason)
		}
		t.Logf("%s (%s, peak mode %q): sampled working set %s, kernel peak with cache %s, without %s; need %s", r.name, r.r.SampleSource, r.r.PeakMode,
			model.FormatBytes(r.r.PeakWorkingSetBytes), model.FormatBytes(r.r.KernelPeakBytes), model.FormatBytes(r.r.KernelPeakNoCacheBytes), model.FormatBytes(model.TrialPeakBytes(r.r)))
		if r.r.KernelPeakNoCacheBytes == 0 {
			t.Errorf("%s: no kernel peak without cache recorded", r.name)
		}
	}
	const within = 6 * model.MiB
	if diff := model.TrialPeakBytes(d) - model.TrialPeakBytes(k); diff > within || diff < -within {
		t.Errorf("need on Docker %s, on Kubernetes %s: want them within %s", model.FormatBytes(model.TrialPeakBytes(d)), model.FormatBytes(model.TrialPeakBytes(k)), model.FormatBytes(within))
	}
}

// A step's need is its own on a pod too, whose cgroup's mark cannot be
// reset: after a step OOM-killed at its 128 MiB limit, the verifier's
// need is what the probe measured in it (its samples, the usage at its
// two ends), not the killed step's last sample (issue #39: 127 MiB in 3
// of 3 such trials, its own samples peaking at 4 MiB).
func TestClusterStepNeedAfterAKillIsTheStepsOwn(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.KilledThenVerify)
	results := clusterSweepWith(t, p, runner.SandboxOptions{}, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}}, Repeats: 3})
	if len(results) != 3 {
		t.Fatalf("%d trials", len(results))
	}
	for _, r := range results {
		enginetest.CheckVerifierNeed(t, r)
	}
}
