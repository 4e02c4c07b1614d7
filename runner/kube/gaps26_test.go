package kube

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// endMain makes the pod's task container end as the kubelet reports it
// (the watch delivers it), then ends the probe's stream.
func endMain(t *testing.T, cs *fake.Clientset, sb *sandbox, term corev1.ContainerStateTerminated) {
	t.Helper()
	pods := cs.CoreV1().Pods("hr")
	pod, err := pods.Get(context.Background(), sb.pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.Status.Phase = corev1.PodFailed
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: mainContainer, ContainerID: "containerd://" + sb.pod,
		State: corev1.ContainerState{Terminated: &term}}}
	if _, err := pods.UpdateStatus(context.Background(), pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	sb.drv.close()
	<-sb.drv.ended
}

// The probe, PID 1 of the pod, dying by itself under a step (its runtime
// could not make a thread in a pod whose pids the task filled, exit 2) is
// said, an error of the trial's engine (infra), not a silent exit 137 of
// the step and every step after; an OOM kill of it, a deletion from
// outside and headroom's own kill keep the 137 their own evidence
// explains. Before: every one of these was a plain 137.
func TestProbeDeathIsSaid(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := fakePlatform(t)
	runAll(t, cs, "hr")
	step := func(sb *sandbox) (runner.ExecResult, error) {
		return sb.Exec(ctx, []string{"bash", "-c", "forks"}, nil, "", func(string, string) {})
	}

	sb := startOne(t, p, runner.SandboxOptions{}, "t1", builtinTask())
	endMain(t, cs, sb, corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"})
	res, err := step(sb)
	if err == nil || !strings.Contains(err.Error(), "probe, PID 1 of pod "+sb.pod+", died under the step (exit 2, Error") {
		t.Errorf("the probe died: %+v %v", res, err)
	}
	// The verifier after it: the same, not a 137.
	if res, err := step(sb); err == nil {
		t.Errorf("a step after the probe died: %+v", res)
	}
	sb.Remove(ctx)

	// OOM-killed: the kill's evidence names it; the step's 137 stands.
	sb = startOne(t, p, runner.SandboxOptions{}, "t2", builtinTask())
	endMain(t, cs, sb, corev1.ContainerStateTerminated{ExitCode: 137, Reason: ReasonOOMKilled})
	if res, err := step(sb); err != nil || res.ExitCode != 137 {
		t.Errorf("OOM-killed probe: %+v %v", res, err)
	}
	sb.Remove(ctx)

	// Headroom's own kill (a timeout): 137, nothing said.
	sb = startOne(t, p, runner.SandboxOptions{}, "t3", builtinTask())
	if err := sb.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	endMain(t, cs, sb, corev1.ContainerStateTerminated{ExitCode: 137, Reason: "Error"})
	if res, err := step(sb); err != nil || res.ExitCode != 137 {
		t.Errorf("after Kill: %+v %v", res, err)
	}
	sb.Remove(ctx)

	// The stream cut while the container runs: said, after the wait.
	defer func(w time.Duration) { probeEndWait = w }(probeEndWait)
	probeEndWait = 300 * time.Millisecond
	sb = startOne(t, p, runner.SandboxOptions{}, "t4", builtinTask())
	sb.drv.close()
	<-sb.drv.ended
	if res, err := step(sb); err == nil || !strings.Contains(err.Error(), "still runs") {
		t.Errorf("stream cut, container running: %+v %v", res, err)
	}
	sb.Remove(ctx)
}

// The runtime's last words are read from the container's log, the
// probe's own lines left out, and the pids limit named.
func TestProbeDiedNamesThePidsLimit(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	_ = cs
	b := &backend{p: p}
	sb := newSandbox(b, "pod1", builtinTask(), model.ResourcePolicy{PidsLimit: 1024})
	sb.pidsEnforced = ""
	err := sb.probeDied(context.Background(), &corev1.ContainerStateTerminated{ExitCode: 2, Reason: "Error"})
	if err == nil || !strings.Contains(err.Error(), "exit 2, Error") {
		t.Fatalf("%v", err)
	}
	words := lastWords("hr1 S 1 2 3 4 5 6 7 8 9\nruntime: failed to create new OS thread (have 7 already; errno=11)\nruntime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc\n\nruntime stack:\nruntime.throw(…)\n")
	if !strings.HasPrefix(words, "runtime: failed to create new OS thread") || !strings.Contains(words, "fatal error: newosproc") || strings.Contains(words, "hr1") {
		t.Errorf("last words %q", words)
	}
	if got := pidsNote(words, sb.policy.PidsLimit, ""); !strings.Contains(got, "pids limit (1024)") {
		t.Errorf("pids note %q", got)
	}
}

// One failed look at the pod while it starts (an API server's 500, a
// timeout) is waited out with the API-gone backoff, the start going on
// when the next look answers; only failures past the bound fail it
// (ErrPlatformGone when the server did not answer at all). Before: the
// first failed look ended the trial, engine-lost.
func TestPodLookFailureIsWaitedOut(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := fakePlatform(t)
	podsGVR := corev1.SchemeGroupVersion.WithResource("pods")
	var mu sync.Mutex
	fails, gets := 3, 0
	failWith := func() error { return apierrors.NewInternalError(errors.New("etcdserver: request timed out")) }
	// The watch never tells the pod runs; only the direct look does,
	// after its first failures.
	cs.PrependReactor("get", "pods", func(a k8stesting.Action) (bool, kruntime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		gets++
		if fails > 0 {
			fails--
			return true, nil, failWith()
		}
		obj, err := cs.Tracker().Get(podsGVR, "hr", a.(k8stesting.GetAction).GetName())
		if err != nil {
			return true, nil, err
		}
		pod := obj.(*corev1.Pod).DeepCopy()
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: mainContainer, ContainerID: "containerd://" + pod.Name, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
		return true, pod, nil
	})
	sb := startOne(t, p, runner.SandboxOptions{}, "t1", builtinTask())
	mu.Lock()
	if gets < 4 {
		t.Errorf("%d looks, want the 3 failures and one that answered", gets)
	}
	mu.Unlock()
	sb.Remove(ctx)

	// Failing for good: past the bound, the last error.
	p, cs, _ = fakePlatform(t)
	p.apiWait = 600 * time.Millisecond
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, kruntime.Object, error) { return true, nil, failWith() })
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = b.Start(ctx, "exp1", model.Trial{ID: "t2", Policy: policy(1)}, builtinTask())
	if err == nil || !strings.Contains(err.Error(), "the API server failed every time") || errors.Is(err, runner.ErrPlatformGone) {
		t.Errorf("failing for good: %v", err)
	}
	if d := time.Since(start); d < 600*time.Millisecond {
		t.Errorf("gave up after %s, before the bound", d)
	}

	// Not answering at all: the sweep stops (ErrPlatformGone), once.
	p, cs, _ = fakePlatform(t)
	p.apiWait, p.host = 600*time.Millisecond, "https://127.0.0.1:6443"
	cs.PrependReactor("get", "pods", func(k8stesting.Action) (bool, kruntime.Object, error) { return true, nil, refused() })
	b, err = p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Start(ctx, "exp1", model.Trial{ID: "t3", Policy: policy(1)}, builtinTask())
	if !errors.Is(err, runner.ErrPlatformGone) {
		t.Errorf("not answering: %v", err)
	}
}

// A pod (or its NetworkPolicy) an earlier run of the experiment kept
// (--keep) holds the trial's name: the rerun on --resume gets the first
// free -2, -3 … as the Docker backend's containers do, and the kept ones
// are left alone. Before: the create failed "already exists", infra-error.
func TestKeptPodIsRenamedAround(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := fakePlatform(t)
	runAll(t, cs, "hr")
	keptMeta := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Name: name, Namespace: "hr",
			Labels:      map[string]string{LabelHeadroom: "1", LabelKept: "1", LabelExperiment: "exp1", LabelTrial: "t1"},
			Annotations: map[string]string{LabelExperiment: "exp1", LabelTrial: "t1"}}
	}
	base := PodName("exp1", "t1")
	if _, err := cs.CoreV1().Pods("hr").Create(ctx, &corev1.Pod{ObjectMeta: keptMeta(base)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies("hr").Create(ctx, &netv1.NetworkPolicy{ObjectMeta: keptMeta(base)}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// -2's policy kept alone (its pod removed by hand).
	if _, err := cs.NetworkingV1().NetworkPolicies("hr").Create(ctx, &netv1.NetworkPolicy{ObjectMeta: keptMeta(PodName("exp1", "t1-2"))}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{Keep: true})
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	sb, err := b.Start(sctx, "exp1", model.Trial{ID: "t1", Policy: policy(1)}, builtinTask())
	if err != nil {
		t.Fatalf("the rerun beside the kept pod: %v", err)
	}
	if want := PodName("exp1", "t1-3"); sb.ID() != want {
		t.Errorf("rerun's pod %s, want %s", sb.ID(), want)
	}
	if ks := sb.(*sandbox); ks.netpol != sb.ID() {
		t.Errorf("rerun's policy %q, want the pod's name", ks.netpol)
	}
	if _, err := sb.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	// Another trial keeps its own name; the kept ones are still there.
	sb, err = b.Start(sctx, "exp1", model.Trial{ID: "t2", Policy: policy(1)}, builtinTask())
	if err != nil || sb.ID() != PodName("exp1", "t2") {
		t.Fatalf("t2: %v %v", sb, err)
	}
	sb.Remove(ctx)
	if _, err := cs.CoreV1().Pods("hr").Get(ctx, base, metav1.GetOptions{}); err != nil {
		t.Errorf("the kept pod: %v", err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies("hr").Get(ctx, base, metav1.GetOptions{}); err != nil {
		t.Errorf("the kept policy: %v", err)
	}
}
