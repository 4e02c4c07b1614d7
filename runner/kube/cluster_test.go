package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/docker"
	"github.com/headroom-eval/headroom/taskfile"
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
	// dockerImage is the same workload image as the local engine has it.
	dockerImage string
	err         error
	skip        string
}

// testNamespace keeps these tests' pods apart from a user's.
const testNamespace = "headroom-test"

func clusterPlatform(t *testing.T) (*Platform, string) {
	t.Helper()
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
		p, err := Open(ctx, map[string]string{OptKubeconfig: kc, OptNamespace: testNamespace, OptContainerd: sock, OptProbe: "on"})
		if err != nil {
			cluster.skip = "cluster not reachable: " + err.Error()
			return
		}
		cluster.p = p
		// The workload image, built from a static binary of this tree.
		dir, err := os.MkdirTemp("", "headroom-kube-test")
		if err != nil {
			cluster.err = err
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "hr-workload")
		build := exec.Command("go", "build", "-o", bin, "github.com/headroom-eval/headroom/cmd/hr-workload")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			cluster.err = fmt.Errorf("build workload: %v\n%s", err, out)
			return
		}
		cli, err := docker.Connect()
		if err != nil {
			cluster.err = err
			return
		}
		defer cli.Close()
		ref, err := docker.EnsureWorkloadImage(ctx, cli, bin, false, nil)
		if err != nil {
			cluster.err = err
			return
		}
		cluster.dockerImage = ref
		if cluster.image, err = p.toCluster(ctx, ref, func(s string) {}); err != nil {
			cluster.err = err
		}
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
	l, err := taskfile.Parse(t.Name()+".toml", []byte(toml))
	if err != nil {
		t.Fatal(err)
	}
	tasks := []model.Task{l.Task}
	taskfile.ResolveImages(tasks, image)
	return tasks[0]
}

// clusterSweep runs a plan on the cluster's backend to the end.
func clusterSweep(t *testing.T, p *Platform, tasks []model.Task, ratios []model.Ratio, onEvent func(event.Event)) []model.TrialResult {
	t.Helper()
	b, err := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	results := sweepOn(t, b, tasks, ratios, onEvent)
	nothingLeft(t, p)
	return results
}

// sweepOn runs a plan on a backend to the end.
func sweepOn(t *testing.T, b runner.Backend, tasks []model.Task, ratios []model.Ratio, onEvent func(event.Event)) []model.TrialResult {
	t.Helper()
	plan, err := model.NewPlan(model.PlanSpec{Tasks: tasks, Ratios: ratios, Repeats: 1, Seed: 1, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(b, runner.Config{Experiment: testExperiment, Plan: plan, Tasks: tasks, Concurrency: 2, GuaranteeCapacityBytes: 8 << 30,
		Host: func() runner.HostLoad { return runner.HostLoad{} }, HostCPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan event.Event, 256)
	go r.Run(context.Background(), out)
	var results []model.TrialResult
	deadline := time.After(8 * time.Minute)
	for {
		select {
		case e, ok := <-out:
			if !ok {
				return results
			}
			if onEvent != nil {
				onEvent(e)
			}
			if te, ok := e.(event.TrialEnded); ok {
				results = append(results, te.Result)
			}
		case <-deadline:
			t.Fatal("sweep did not finish within 8 minutes")
		}
	}
}

// nothingLeft: no pod or NetworkPolicy of this test process remains.
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

const clusterHeavy = `
[task]
name = "test/heavy"
[environment]
image = "builtin"
memory = "64M"
cpus = 1
[agent]
timeout_sec = 60
[verifier]
timeout_sec = 30
workload = { style = "pytest", duration_ms = 200, base_mb = 5, requires = ["deps"] }
[[agents]]
name = "heavy"
  [[agents.steps]]
  name = "prepare"
  workload = { style = "edit", duration_ms = 100, base_mb = 2 }
  [[agents.steps]]
  name = "install"
  workload = { style = "pip", packages = ["pandas"], duration_ms = 1000, base_mb = 110, writes = ["deps"] }
`

// At 1x the kernel kills in the step that allocates past the limit; the
// same task uncapped passes; both sampled in the pod by the probe.
func TestClusterKillAt1xPassUncapped(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, clusterHeavy)
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
		if !strings.HasPrefix(r.SampleSource, "probe-cgroup-v") || r.StepRunner != docker.StepsByDriver {
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
	task := clusterTask(t, image, `
[task]
name = "test/retry"
[environment]
image = "builtin"
memory = "96M"
[verifier]
workload = { duration_ms = 100, base_mb = 2, requires = ["target"] }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "build"
  workload = { style = "build", duration_ms = 300, base_mb = 4, children = 3, child_mb = 45, child_len_ms = 900, on_child_killed = "retry", writes = ["target"] }
`)
	r := clusterSweep(t, p, []model.Task{task}, []model.Ratio{{K: 1}}, nil)[0]
	if r.Outcome != model.PassedAfterOOM || !r.StateOOMKilled || r.KilledInStep != "build" {
		t.Fatalf("%s (%s), OOMKilled %v, killed in %q; want passed-after-oom in build", r.Outcome, r.Reason, r.StateOOMKilled, r.KilledInStep)
	}
}

// The pod's requests and limits, read back from the API server, are the
// policy's; the pod is gone after Remove.
func TestClusterPolicyReadBack(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, clusterHeavy)
	b, err := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ratio := range []model.Ratio{{K: 1.5}, model.Uncapped} {
		pol := model.NewPolicy(task.Resources, ratio, 2)
		start := time.Now()
		sb, err := b.Start(context.Background(), testExperiment, model.Trial{ID: "readback-" + strings.ReplaceAll(ratio.String(), ".", "-"), Policy: pol}, task)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: pod created to running in %s", ratio, time.Since(start).Round(time.Millisecond))
		pod, err := p.cs.CoreV1().Pods(p.ns).Get(context.Background(), sb.ID(), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := pod.Spec.Containers[0].Resources
		if !equalResources(got, Resources(pol)) {
			t.Errorf("%s: pod has requests %v limits %v, policy says %v %v", ratio, got.Requests, got.Limits, Resources(pol).Requests, Resources(pol).Limits)
		}
		if _, err := sb.Remove(context.Background()); err != nil {
			t.Error(err)
		}
	}
	nothingLeft(t, p)
}

// A pod the scheduler cannot place: Start says why through runner.Waiting
// ("waiting: unschedulable (…)"), and a cancel then leaves nothing.
func TestClusterUnschedulableWaitsAndCancels(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, clusterHeavy)
	b, err := p.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	said := make(chan string, 4)
	ctx = runner.WithWaiting(ctx, func(r string) { said <- r })
	huge := model.ResourcePolicy{GuaranteeBytes: 1 << 50, HardLimitBytes: 1 << 50, GuaranteeCPUs: 0.1}
	done := make(chan error, 1)
	go func() {
		sb, err := b.Start(ctx, testExperiment, model.Trial{ID: "unschedulable", Policy: huge}, task)
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
	nothingLeft(t, p)
}
