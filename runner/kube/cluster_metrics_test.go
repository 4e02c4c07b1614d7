package kube

import (
	"context"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

// requireMetrics says whether HEADROOM_KUBE_REQUIRED asks for the metrics
// API too ("metrics" among its comma-separated words, as make kube-test
// KUBE_REQUIRED=1,metrics sets after make kube-metrics): then a cluster
// without it fails the test instead of skipping it.
func requireMetrics() bool {
	return slices.Contains(strings.Split(os.Getenv("HEADROOM_KUBE_REQUIRED"), ","), "metrics")
}

// A task that holds 80 MB long enough for metrics-server (10 s
// resolution, a pod's first figures two scrapes after it starts) to
// report it several times.
const clusterHold = `
[task]
name = "test/hold"
[environment]
image = "builtin"
memory = "256M"
[agent]
timeout_sec = 120
[verifier]
workload = { duration_ms = 100, base_mb = 2 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "hold"
  workload = { style = "build", duration_ms = 40000, base_mb = 80, ramp_pct = 5 }
`

// With --pod-probe off headroom reads a pod's memory from the metrics API
// alone (docs/KUBERNETES.md, "Probe"): a real trial on the cluster with
// metrics-server (make kube-metrics) is recorded as sampled by
// k8s-metrics, with the working set it held.
func TestClusterMetricsAPIWithProbeOff(t *testing.T) {
	p, image := clusterPlatform(t)
	if _, err := p.cs.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1"); err != nil {
		msg := "the cluster serves no metrics API (metrics.k8s.io/v1beta1: " + err.Error() + "): `make kube-metrics` starts metrics-server on make kube-up's cluster"
		if requireMetrics() {
			t.Fatal(msg)
		}
		t.Skip(msg + "; HEADROOM_KUBE_REQUIRED=1,metrics makes this a failure")
	}
	set := maps.Clone(p.set)
	set[OptProbe] = "off"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	off, err := Open(ctx, set, docker.OpenBuilder)
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	task := clusterTask(t, image, clusterHold)
	r := clusterSweepWith(t, off, runner.SandboxOptions{}, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{model.Uncapped}, Concurrency: 1})[0]
	t.Logf("%s: sampled by %s (%s), %d samples at %.2f Hz, peak working set %s, steps by %s",
		r.Outcome, r.SampleSource, r.Reason, r.Samples, r.SampleRateHz, model.FormatBytes(r.PeakWorkingSetBytes), r.StepRunner)
	if r.Outcome != model.Passed {
		t.Fatalf("%s (%s), want passed", r.Outcome, r.Reason)
	}
	if r.SampleSource != SourceMetrics {
		t.Fatalf("sampled by %q, want %q", r.SampleSource, SourceMetrics)
	}
	// The step's 80 MB, less what the metrics API's working set leaves
	// out; never nothing.
	if r.PeakWorkingSetBytes < 40*model.MiB {
		t.Errorf("peak working set %s from the metrics API, want the step's ~80 MiB", model.FormatBytes(r.PeakWorkingSetBytes))
	}
}
