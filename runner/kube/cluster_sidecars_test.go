package kube

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/taskfile"
)

// probeExe builds the probe's static binary: the backend makes the
// workload image that copies it into task images' pods from it.
func probeExe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hr-workload")
	build := exec.Command("go", "build", "-o", bin, "github.com/headroom-eval/headroom/cmd/hr-workload")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the probe: %v\n%s", err, out)
	}
	return bin
}

// clusterComposeTask is the Docker backend's compose task (a static echo
// server as a sidecar, healthy before the task's container is used, a
// named volume it writes and main mounts read-only), its images built
// locally and put on the cluster as a sweep's would be.
func clusterComposeTask(t *testing.T, p *Platform) model.Task {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "compose-sidecar")
	if err := os.CopyFS(dir, os.DirFS("../docker/testdata/tb/compose-sidecar")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "environment", "echo", "echoserver"), "../docker/testdata/echoserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the sidecar: %v\n%s", err, out)
	}
	l, err := taskfile.LoadTaskDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	task := l.Task
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	log := func(l string) { t.Log(l) }
	if task.Image, err = p.PrepareImage(ctx, task, false, log); err != nil {
		t.Fatal(err)
	}
	if err := p.PrepareSidecars(ctx, &task, log); err != nil {
		t.Fatal(err)
	}
	a, ok := task.Agent(taskfile.AgentNop)
	if !ok {
		t.Fatal("no nop agent")
	}
	task.Agents = []model.Agent{a}
	return task
}

// A compose task on the cluster: its service runs as a second container
// of the trial's pod, healthy before the agent starts; the verifier
// reaches it by its service name and reads the volume it writes; the
// ratio limits only the task's container; the sidecar's peak is
// recorded as on Docker; nothing is left.
func TestClusterComposeSidecar(t *testing.T) {
	p, _ := clusterPlatform(t)
	task := clusterComposeTask(t, p)
	var containers, limits, aliases []string
	onEvent := func(e event.Event) {
		st, ok := e.(event.StepStarted)
		if !ok || containers != nil {
			return
		}
		pod, err := p.cs.CoreV1().Pods(p.ns).Get(context.Background(), PodName(testExperiment, st.TrialID()), metav1.GetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		for _, c := range pod.Spec.Containers {
			containers = append(containers, c.Name)
			limits = append(limits, c.Name+"="+c.Resources.Limits.Memory().String())
		}
		for _, a := range pod.Spec.HostAliases {
			aliases = append(aliases, a.IP+":"+strings.Join(a.Hostnames, ","))
		}
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.Name == "svc-echo" && !cs.Ready {
				t.Error("the agent started before the sidecar was healthy (ready)")
			}
		}
	}
	start := time.Now()
	results := clusterSweepWith(t, p, runner.SandboxOptions{Exe: probeExe(t)}, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 2}}, OnEvent: onEvent})
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	r := results[0]
	for _, s := range r.Steps {
		t.Logf("%s %s: exit %d\n%s", s.Phase, s.Name, s.ExitCode, s.Output)
	}
	if r.Outcome != model.Passed || r.Reward == nil || *r.Reward != 1 {
		t.Errorf("%s reward %v (%s), want passed with reward 1", r.Outcome, r.Reward, r.Reason)
	}
	if !slices.Equal(containers, []string{mainContainer, "svc-echo"}) {
		t.Errorf("pod containers %q, want the task's and the sidecar", containers)
	}
	// 2x 64 MiB and the probe's own 1.25 MiB (podConfig.containerPolicy).
	if !slices.Equal(limits, []string{mainContainer + "=132352Ki", "svc-echo=1Gi"}) {
		t.Errorf("memory limits %q, want the task's container at 2x 64 MiB (and the probe's own) and the sidecar at its default bound", limits)
	}
	if len(aliases) != 1 || !strings.HasPrefix(aliases[0], "127.0.0.1:echo,") {
		t.Errorf("host aliases %q, want echo at 127.0.0.1", aliases)
	}
	if len(r.Sidecars) != 1 || r.Sidecars[0].Name != "echo" || r.Sidecars[0].PeakBytes < 24*model.MiB || r.Sidecars[0].OOMKilled {
		t.Errorf("sidecar usage %+v, want echo's peak at least its 24 MiB", r.Sidecars)
	}
	t.Logf("compose trial on the cluster: %s in %s; sidecar %+v; sampled by %s", r.Outcome, time.Since(start).Round(time.Second), r.Sidecars, r.SampleSource)
}

// A task that starts processes until it cannot hits its pod's pids
// limit, the node's podPidsLimit (kube-up sets the hardened profile's):
// the probe counts the refused forks and the trial is failed ·
// pids-limit, the policy's limit applied. The step's shell gives up
// after its fork retries (about 15 s) and waits for its sleeps, so the
// verifier has processes to run with. The probe, PID 1 of the same pod
// under the same limit, lives through the storm on the threads it made
// at its start (workload/threads.go): without them it died here 3 runs
// in 4 ("failed to create new OS thread"), now said as the trial's
// engine error rather than a step's silent 137.
func TestClusterPidsLimit(t *testing.T) {
	p, _ := clusterPlatform(t)
	ctx := context.Background()
	nodes, err := p.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		t.Fatalf("nodes: %v", err)
	}
	limit, err := p.podPidsLimit(ctx, nodes.Items[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	if limit == 0 || limit > 4096 {
		t.Fatalf("node %s's podPidsLimit is %d: kube/up.sh sets %d (a cluster started before it: make kube-down && make kube-up)", nodes.Items[0].Name, limit, model.DefaultPidsLimit)
	}
	task := clusterTask(t, "", fmt.Sprintf(`
[task]
name = "test/forks"
[environment]
image = "headroom-debian:bookworm"
memory = "768M"
cpus = 1
[agent]
timeout_sec = 120
[verifier]
timeout_sec = 30
command = ["bash", "-c", "test -f /tmp/done"]
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "forks"
  command = ["bash", "-c", "trap wait EXIT; for i in $(seq %d); do sleep 25 & done; touch /tmp/done"]
`, limit+64))
	ictx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if task.Image, err = p.PrepareImage(ictx, task, false, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	pol := model.NewPolicy(task.Resources, model.Ratio{K: 1}, 2)
	start := time.Now()
	results := clusterSweepWith(t, p, runner.SandboxOptions{Exe: probeExe(t)}, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{{K: 1}}})
	r := results[0]
	for _, s := range r.Steps {
		t.Logf("%s %s: exit %d\n%s", s.Phase, s.Name, s.ExitCode, tail(s.Output, 400))
	}
	if r.Outcome != model.Failed || r.Cause != model.CausePidsLimit {
		t.Fatalf("%s · %s (%s), want failed · pids-limit", r.Outcome, r.Cause, r.Reason)
	}
	if pol.PidsLimit == limit && r.PidsLimitEnforced != "" {
		t.Errorf("the policy's pids limit %d is the node's, but the record says %q", pol.PidsLimit, r.PidsLimitEnforced)
	}
	t.Logf("pids: %s · %s in %s: %s (policy %d, node %d, enforced %q)", r.Outcome, r.Cause, time.Since(start).Round(time.Second), r.Reason, pol.PidsLimit, limit, r.PidsLimitEnforced)
}

// tail is the end of s, at most n bytes.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// A step that signals its container's PID 1 — the probe, which is the
// step driver on a cluster — does not end the pod: the probe holds the
// signals an init process holds, as the Docker step driver does (a
// `kill -HUP 1` or `kill -SEGV 1` ended the whole pod before).
func TestClusterStepSignalsPID1(t *testing.T) {
	p, _ := clusterPlatform(t)
	task := clusterTask(t, "", `
[task]
name = "test/pid1"
[environment]
image = "headroom-debian:bookworm"
memory = "256M"
cpus = 1
[verifier]
command = ["bash", "-c", "test -f /tmp/still-here"]
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "signals"
  command = ["bash", "-c", "for s in TERM HUP INT QUIT USR1 SEGV BUS ABRT; do kill -$s 1; done; sleep 1; touch /tmp/still-here; echo still here"]
`)
	ictx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	if task.Image, err = p.PrepareImage(ictx, task, false, func(l string) { t.Log(l) }); err != nil {
		t.Fatal(err)
	}
	r := clusterSweepWith(t, p, runner.SandboxOptions{Exe: probeExe(t)}, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{model.Uncapped}})[0]
	for _, s := range r.Steps {
		t.Logf("%s %s: exit %d\n%s", s.Phase, s.Name, s.ExitCode, tail(s.Output, 600))
	}
	if r.Outcome != model.Passed {
		t.Fatalf("%s · %s (%s), want passed: the probe, PID 1, ignores the step's signals", r.Outcome, r.Cause, r.Reason)
	}
}
