package kube

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
)

// The tests below run real pods on a real cluster: the one `make kube-up`
// starts (its kubeconfig at /tmp/headroom-kube/kubeconfig) or the one
// HEADROOM_KUBECONFIG names. Without one they skip. The workload image is
// built with the local Docker engine and imported into the cluster's
// containerd (HEADROOM_KUBE_CONTAINERD, else containerd.sock beside the
// kubeconfig).

var cluster struct {
	once  sync.Once
	p     *Platform
	image string
	err   error
	skip  string
}

// testNamespace keeps these tests' pods apart from a user's.
const testNamespace = "headroom-test"

func clusterPlatform(t *testing.T) (*Platform, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a Kubernetes cluster (-short)")
	}
	cluster.once.Do(func() {
		kc := os.Getenv("HEADROOM_KUBECONFIG")
		if kc == "" {
			kc = "/tmp/headroom-kube/kubeconfig"
		}
		if _, err := os.Stat(kc); err != nil {
			cluster.skip = "no cluster: " + kc + " is missing (make kube-up, or set HEADROOM_KUBECONFIG)"
			return
		}
		sock := os.Getenv("HEADROOM_KUBE_CONTAINERD")
		if sock == "" {
			sock = filepath.Join(filepath.Dir(kc), "containerd.sock")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		p, err := Open(ctx, map[string]string{OptKubeconfig: kc, OptNamespace: testNamespace, OptContainerd: sock, OptProbe: "on"}, docker.OpenBuilder)
		if err != nil {
			cluster.skip = "cluster not reachable: " + err.Error()
			return
		}
		cluster.p = p
		// The workload image, built by the local engine from a static
		// binary of this tree and imported into the cluster's containerd.
		dir, err := os.MkdirTemp("", "headroom-kube-test")
		if err != nil {
			cluster.err = err
			return
		}
		defer os.RemoveAll(dir)
		cluster.image, _, cluster.err = enginetest.WorkloadImage(ctx, p, dir)
	})
	if cluster.skip != "" {
		if os.Getenv("HEADROOM_KUBE_REQUIRED") != "" {
			t.Fatal(cluster.skip)
		}
		t.Skip(cluster.skip)
	}
	if cluster.err != nil {
		t.Fatal(cluster.err)
	}
	return cluster.p, cluster.image
}

// testExperiment names this test process's pods.
var testExperiment = fmt.Sprintf("ktest%d", os.Getpid())

func clusterTask(t *testing.T, image, toml string) model.Task {
	t.Helper()
	return enginetest.Task(t, image, toml)
}

// clusterSweep runs a plan on the cluster's backend to the end, two
// trials at once.
func clusterSweep(t *testing.T, p *Platform, tasks []model.Task, ratios []model.Ratio, onEvent func(event.Event)) []model.TrialResult {
	t.Helper()
	return clusterSweepWith(t, p, runner.SandboxOptions{}, enginetest.Sweep{Tasks: tasks, Ratios: ratios, OnEvent: onEvent})
}

// clusterSweepWith runs the sweep on a backend of the cluster opened with
// opts, and checks that it left nothing behind.
func clusterSweepWith(t *testing.T, p *Platform, opts runner.SandboxOptions, s enginetest.Sweep) []model.TrialResult {
	t.Helper()
	b, err := p.Sandboxes(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Experiment = testExperiment
	results, _ := enginetest.Run(t, context.Background(), b, s)
	b.Close() // the experiment's NetworkPolicy goes with the backend
	nothingLeft(t, p)
	return results
}

// nothingLeft: no pod or NetworkPolicy of this test process remains (the
// backend closed: its experiments' NetworkPolicies go at its Close).
func nothingLeft(t *testing.T, p *Platform) {
	t.Helper()
	owned, err := p.Owned(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range owned {
		if o.Experiment == testExperiment {
			t.Errorf("left behind: %s %s (%s)", o.Kind, o.ID, o.State)
			_ = p.Remove(context.Background(), o)
		}
	}
}

// At 1x the kernel kills in the step that allocates past the limit; the
// same task uncapped passes; both sampled in the pod by the probe.
func TestClusterKillAt1xPassUncapped(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.HeavyInstall)
	var kills []event.OOMKill
	results := clusterSweep(t, p, []model.Task{task}, []model.Ratio{{K: 1}, model.Uncapped}, func(e event.Event) {
		if o, ok := e.(event.OOMKill); ok {
			kills = append(kills, o)
		}
	})
	by := map[model.Ratio]model.TrialResult{}
	for _, r := range results {
		by[r.Ratio] = r
	}
	tight, free := by[model.Ratio{K: 1}], by[model.Uncapped]
	if tight.Outcome != model.OOMKilled || tight.KilledInStep != "install" {
		t.Fatalf("1x: %s in %q (%s), want oom-killed in install; steps %+v", tight.Outcome, tight.KilledInStep, tight.Reason, tight.Steps)
	}
	if len(kills) == 0 || kills[0].TrialID() != tight.ID {
		t.Errorf("no OOMKill event for the 1x trial: %+v", kills)
	}
	if free.Outcome != model.Passed {
		t.Fatalf("uncapped: %s (%s), want passed", free.Outcome, free.Reason)
	}
	for _, r := range []model.TrialResult{tight, free} {
		if !strings.HasPrefix(r.SampleSource, "probe-cgroup-v") || r.StepRunner != runner.StepsByDriver {
			t.Errorf("%s: sampled by %q, steps by %q; want the probe", r.Ratio, r.SampleSource, r.StepRunner)
		}
		t.Logf("%s: %s, sampled at %.1f Hz by %s, peak working set %s", r.Ratio, r.Outcome, r.SampleRateHz, r.SampleSource, model.FormatBytes(r.PeakWorkingSetBytes))
	}
	if free.SampleRateHz < 10 {
		t.Errorf("uncapped: sampled at %.1f Hz in the pod, want about 20", free.SampleRateHz)
	}
	if free.Steps[1].PeakWorkingSetBytes < 100*model.MiB {
		t.Errorf("uncapped: install peak %s, want ≥ 100MiB", model.FormatBytes(free.Steps[1].PeakWorkingSetBytes))
	}
}

// A child the kernel kills while PID 1 (the probe) lives: the pod's
// status says nothing, the probe's counter says it.
func TestClusterChildKillSeen(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.ChildKill)
	r := clusterSweep(t, p, []model.Task{task}, []model.Ratio{{K: 1}}, nil)[0]
	if r.Outcome != model.PassedAfterOOM || !r.StateOOMKilled || r.KilledInStep != "build" {
		t.Fatalf("%s (%s), OOMKilled %v, killed in %q; want passed-after-oom in build", r.Outcome, r.Reason, r.StateOOMKilled, r.KilledInStep)
	}
}

// The pod's requests and limits, read back from the API server, are the
// policy's; the pod is gone after Remove.
func TestClusterPolicyReadBack(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.HeavyInstall)
	b, err := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ratio := range []model.Ratio{{K: 1.5}, model.Uncapped} {
		pol := model.NewPolicy(task.Resources, ratio, 2)
		start := time.Now()
		sb, err := b.Start(context.Background(), runner.StartRequest{Experiment: testExperiment, Trial: model.Trial{ID: "readback-" + strings.ReplaceAll(ratio.String(), ".", "-"), Policy: pol}, Task: task})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: pod created to running in %s", ratio, time.Since(start).Round(time.Millisecond))
		pod, err := p.cs.CoreV1().Pods(p.ns).Get(context.Background(), sb.ID(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := pod.Spec.Containers[0].Resources
		// With the probe in the container, its own memory is beside the
		// policy's limit (podConfig.containerPolicy).
		want := pol
		if sb.(*sandbox).probing && want.HardLimitBytes > 0 {
			want.HardLimitBytes += model.DriverMemoryBytes
			want.GuaranteeBytes += model.DriverMemoryBytes
		}
		if !equalResources(got, Resources(want)) {
			t.Errorf("%s: pod has requests %v limits %v, want %v %v", ratio, got.Requests, got.Limits, Resources(want).Requests, Resources(want).Limits)
		}
		if _, err := sb.Remove(context.Background()); err != nil {
			t.Error(err)
		}
	}
	b.Close()
	nothingLeft(t, p)
}

// A pod the scheduler cannot place: Start says why through the request's Waiting
// ("waiting: unschedulable (…)"), and a cancel then leaves nothing.
func TestClusterUnschedulableWaitsAndCancels(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.HeavyInstall)
	b, err := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	said := make(chan string, 4)
	tell := func(r string) { said <- r }
	huge := model.ResourcePolicy{GuaranteeBytes: 1 << 50, HardLimitBytes: 1 << 50, GuaranteeCPUs: 0.1}
	done := make(chan error, 1)
	go func() {
		sb, err := b.Start(ctx, runner.StartRequest{Experiment: testExperiment, Trial: model.Trial{ID: "unschedulable", Policy: huge}, Task: task, Waiting: tell})
		if sb != nil {
			sb.Remove(context.Background())
		}
		done <- err
	}()
	select {
	case r := <-said:
		if !strings.HasPrefix(r, "waiting: unschedulable (") || !strings.Contains(r, "memory") {
			t.Errorf("waiting reason %q", r)
		}
		t.Logf("said: %s", r)
	case err := <-done:
		t.Fatalf("Start returned before saying it waits: %v", err)
	case <-ctx.Done():
		t.Fatal("no waiting reason within 2 minutes")
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("Start of an unschedulable pod succeeded")
	}
	b.Close()
	nothingLeft(t, p)
}

// The agent writes its answer, then works on past its time limit: the
// probe stops its step alone (runner.StepStopper) and the verifier, run
// in the same pod as Harbor runs it, passes the trial.
func TestClusterAgentGradedAfterTimeout(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.GradedAfterTimeout)
	results := clusterSweep(t, p, []model.Task{task}, []model.Ratio{{K: 1}}, nil)
	r := results[0]
	if r.Outcome != model.PassedAfterTimeout || r.Cause != model.CauseAgentTimeout {
		t.Errorf("%s/%s (%s), want passed-after-timeout", r.Outcome, r.Cause, r.Reason)
	}
	if n := len(r.Steps); n != 3 || !r.Steps[1].TimedOut || r.Steps[2].Phase != model.PhaseVerifier {
		t.Errorf("steps %+v: want answer, polish timed out, the verifier", r.Steps)
	}
}

// The task's [environment.healthcheck] runs before its agent on a pod as
// on Docker (runner.WaitHealthy): the Kubernetes backend ran none, and a
// task whose environment never came up ran its agent and passed. A check
// that fails every time is the environment's failure, an infra error
// naming it.
func TestClusterEnvironmentHealthcheckRuns(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.GradedAfterTimeout)
	task.Name = "test/cluster-health"
	task.Healthcheck = &model.Healthcheck{Test: []string{"CMD", "/hr-workload", "no-such-mode"}, Interval: 200 * time.Millisecond, Timeout: 10 * time.Second, Retries: 2}
	r := clusterSweep(t, p, []model.Task{task}, []model.Ratio{model.Uncapped}, nil)[0]
	if r.Outcome != model.InfraError || !strings.Contains(r.Reason, "healthcheck failed 2 time(s) in a row") {
		t.Errorf("%s (%s); want an infra error: the healthcheck failed", r.Outcome, r.Reason)
	}
}

// A check the kernel OOM-kills at the ratio's limit is the limit's doing,
// an OOM kill at its own limit, on a pod as on Docker (runner.
// StartOOMError): here it was the infra error of a failed check, no kill,
// no cause. Uncapped, the same check passes and the trial runs.
func TestClusterHealthcheckKilledAtTheLimitIsAnOOMKill(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.GradedAfterTimeout)
	task.Name = "test/cluster-health-oom"
	task.Healthcheck = &model.Healthcheck{Test: []string{"CMD", "/hr-workload", "child", "--mb", "160", "--ms", "50"}, Interval: 200 * time.Millisecond, Timeout: 20 * time.Second, Retries: 2}
	got := map[string]model.TrialResult{}
	for _, r := range clusterSweep(t, p, []model.Task{task}, []model.Ratio{{K: 1}, model.Uncapped}, nil) {
		got[r.Ratio.String()] = r
	}
	if k := got["1x"]; k.Outcome != model.OOMKilled || k.Cause != model.CauseOwnLimit || !strings.Contains(k.Reason, "during the task's [environment.healthcheck]") {
		t.Errorf("1x: %s · %s (%s); want oom-killed · own-limit during the healthcheck", k.Outcome, k.Cause, k.Reason)
	}
	if u := got["uncapped"]; u.Outcome == model.InfraError || u.Outcome == model.OOMKilled {
		t.Errorf("uncapped: %s (%s); want the trial run: the check has room", u.Outcome, u.Reason)
	}
}
