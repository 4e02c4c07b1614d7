package kube

import (
	"context"
	"testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/taskfile"
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
	task := clusterTask(t, image, clusterSeeded)
	onKube := clusterSweep(t, p, []model.Task{task}, []model.Ratio{model.Uncapped}, nil)

	l, err := taskfile.Parse("seeded.toml", []byte(clusterSeeded))
	if err != nil {
		t.Fatal(err)
	}
	dockerTasks := []model.Task{l.Task}
	taskfile.ResolveImages(dockerTasks, cluster.dockerImage)
	cli, err := docker.Connect()
	if err != nil {
		t.Skipf("no Docker engine: %v", err)
	}
	defer cli.Close()
	b, err := docker.New(context.Background(), cli, docker.Options{})
	if err != nil {
		t.Skipf("no Docker backend: %v", err)
	}
	defer b.Close()
	onDocker := sweepOn(t, b, dockerTasks, []model.Ratio{model.Uncapped}, nil)
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
		t.Logf("%s (%s, %s): sampled working set %s, kernel peak with cache %s, without %s; need %s", r.name, r.r.SampleSource, r.r.PeakMode,
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
