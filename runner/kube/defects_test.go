package kube

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
)

// runAll plays a cluster that runs every new pod at once.
func runAll(t *testing.T, cs *fake.Clientset, ns string) {
	t.Helper()
	w, err := cs.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	go func() {
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added {
				continue
			}
			pod := ev.Object.(*corev1.Pod).DeepCopy()
			pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
				Name: mainContainer, ContainerID: "containerd://" + pod.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
			if _, err := cs.CoreV1().Pods(ns).UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
				t.Error(err)
			}
		}
	}()
}

// startOne starts one trial of task on the fake cluster.
func startOne(t *testing.T, p *Platform, opts runner.SandboxOptions, id string, task model.Task) *sandbox {
	t.Helper()
	b, err := p.Sandboxes(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sb, err := b.Start(ctx, "exp1", model.Trial{ID: id, Policy: policy(1)}, task)
	if err != nil {
		t.Fatal(err)
	}
	return sb.(*sandbox)
}

// waitFor waits, with a deadline, until cond holds; each check waits on
// the sandbox's lock, not a sleep.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("%s: not within 10s", what)
		case <-tick.C:
		}
	}
}

// A pod deleted from outside (kubectl delete pod) is a kill from outside,
// named, as Docker's `docker rm -f` is: the watch's DELETED event, a
// deletionTimestamp seen while it ends, or the pod already gone when
// headroom comes to remove it. headroom's own deletion is none of these.
func TestPodDeletedOutsideIsKilledOutside(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	runAll(t, cs, "hr")
	pods := cs.CoreV1().Pods("hr")
	ctx := context.Background()

	// Deleted: the watch's DELETED event.
	sb := startOne(t, p, runner.SandboxOptions{}, "t1", builtinTask())
	if err := pods.Delete(ctx, sb.pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the DELETED event", func() bool { sb.mu.Lock(); defer sb.mu.Unlock(); return sb.killedBy != "" })
	f, err := sb.Remove(ctx)
	if err != nil || !strings.Contains(f.KilledBy, "deletion of its pod") {
		t.Errorf("deleted pod: KilledBy %q, %v", f.KilledBy, err)
	}
	if out, cause := model.Classify(model.Evidence{KilledBy: f.KilledBy, InfraFailed: true}); out != model.InfraError || cause != model.CauseKilledOutside {
		t.Errorf("classified %s %s", out, cause)
	}

	// Deleting: a deletionTimestamp, with the cluster's disruption reason.
	sb = startOne(t, p, runner.SandboxOptions{}, "t2", builtinTask())
	pod, err := pods.Get(ctx, sb.pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	pod.DeletionTimestamp = &now
	pod.Status.Conditions = append(pod.Status.Conditions, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "PreemptionByScheduler", Message: "preempted by a higher priority pod"})
	if _, err := pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f, err = sb.Remove(ctx)
	if err != nil || !strings.Contains(f.KilledBy, "PreemptionByScheduler") {
		t.Errorf("deleting pod: KilledBy %q, %v", f.KilledBy, err)
	}

	// Gone by the time headroom removes it (the watch missed it).
	sb = startOne(t, p, runner.SandboxOptions{}, "t3", builtinTask())
	close(sb.quit) // the watch stops before the deletion
	<-sb.watched
	sb.quit, sb.watching = make(chan struct{}), false
	if err := pods.Delete(ctx, sb.pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if f, err = sb.Remove(ctx); err != nil || f.KilledBy != deletedOutside {
		t.Errorf("gone pod: KilledBy %q, %v", f.KilledBy, err)
	}

	// headroom's own deletion (Kill without a probe, then Remove).
	sb = startOne(t, p, runner.SandboxOptions{}, "t4", builtinTask())
	sb.drv.close()
	<-sb.drv.ended
	sb.drv = nil
	if err := sb.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if f, err = sb.Remove(ctx); err != nil || f.KilledBy != "" {
		t.Errorf("headroom's own deletion: KilledBy %q, %v", f.KilledBy, err)
	}
	sb = startOne(t, p, runner.SandboxOptions{}, "t5", builtinTask())
	if f, err = sb.Remove(ctx); err != nil || f.KilledBy != "" {
		t.Errorf("headroom's own removal: KilledBy %q, %v", f.KilledBy, err)
	}
}

// The first step opens right after the attach, before the probe's first
// reading: its CPU baseline is that reading, waited for, not nothing (16
// of 46 first steps had no CPU on the cluster).
func TestFirstStepHasCPUBaseline(t *testing.T) {
	p, cs, fp := fakePlatform(t)
	fp.firstSample = 300 * time.Millisecond
	runAll(t, cs, "hr")
	sb := startOne(t, p, runner.SandboxOptions{}, "t1", builtinTask())
	defer sb.Remove(context.Background())
	cpu, ok := sb.CPUUse()
	if !ok || cpu.UsageNanos != 7e6 {
		t.Fatalf("the first step's baseline: %+v %v", cpu, ok)
	}
}

// With --exec-steps (or --pod-probe off) a built-in trial's steps go by
// exec, in an image FROM scratch with no env: the environment goes
// through headroom's own binary's env mode, and a step the runtime
// cannot start is the step's exit 127, not the cluster's failure.
func TestExecStepsWithoutEnvInImage(t *testing.T) {
	p, cs, fp := fakePlatform(t)
	runAll(t, cs, "hr")
	sb := startOne(t, p, runner.SandboxOptions{ExecSteps: true}, "t1", builtinTask())
	defer sb.Remove(context.Background())
	if sb.StepRunner() != "exec" {
		t.Fatalf("step runner %q", sb.StepRunner())
	}
	ctx := context.Background()
	res, err := sb.Exec(ctx, []string{workload.Binary, "run", "--step", "s"}, []string{"HEADROOM_SEED=7"}, "", func(string, string) {})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("step: %+v %v", res, err)
	}
	fp.mu.Lock()
	got := fp.execs[len(fp.execs)-1]
	fp.mu.Unlock()
	if want := []string{workload.Binary, workload.EnvMode, "HEADROOM_SEED=7", "--", workload.Binary, "run", "--step", "s"}; !slices.Equal(got, want) {
		t.Errorf("exec argv %q, want %q", got, want)
	}
	fp.execErr = func(argv []string) error {
		return errors.New(`exec in pod x: failed to exec in container: failed to start exec "abc": OCI runtime exec failed: exec failed: unable to start container process: exec: "nope": executable file not found in $PATH: unknown`)
	}
	var lines []string
	res, err = sb.Exec(ctx, []string{"nope"}, nil, "", func(stream, text string) { lines = append(lines, stream+": "+text) })
	if err != nil || res.ExitCode != 127 || len(lines) != 1 || !strings.Contains(lines[0], "executable file not found") {
		t.Errorf("a step that cannot start: %+v %v %q", res, err, lines)
	}
	fp.execErr = nil
}
