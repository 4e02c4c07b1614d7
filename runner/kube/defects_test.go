package kube

import (
	"context"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
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
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: id, Policy: policy(1)}, Task: task})
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
	if err != nil || !strings.Contains(string(f.KilledBy), "deletion of its pod") {
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
	if err != nil || !strings.Contains(string(f.KilledBy), "PreemptionByScheduler") {
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
	res, err := sb.Exec(ctx, []string{wire.Binary, "run", "--step", "s"}, []string{"HEADROOM_SEED=7"}, "", func(string, string) {})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("step: %+v %v", res, err)
	}
	fp.mu.Lock()
	got := fp.execs[len(fp.execs)-1]
	fp.mu.Unlock()
	if want := []string{wire.Binary, workload.EnvMode, "HEADROOM_SEED=7", "--", wire.Binary, "run", "--step", "s"}; !slices.Equal(got, want) {
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

// rbac plays the API server's authorizer: what deny holds is refused
// ("verb resource[/sub]"), everything else allowed.
func rbac(cs *fake.Clientset, deny ...string) {
	cs.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, kruntime.Object, error) {
		rev := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview).DeepCopy()
		ra := rev.Spec.ResourceAttributes
		what := ra.Verb + " " + ra.Resource
		if ra.Subresource != "" {
			what += "/" + ra.Subresource
		}
		rev.Status.Allowed = !slices.Contains(deny, what)
		return true, rev, nil
	})
}

// A namespace headroom may not use is refused before the first trial,
// naming the namespace and each missing right; one it can neither read
// nor make, and that does not exist, is named so.
func TestNamespaceRightsRefusedBeforeTrials(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := fakePlatform(t)
	rbac(cs, "create networkpolicies", "create pods/exec")
	_, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err == nil || !strings.Contains(err.Error(), "namespace hr:") || !strings.Contains(err.Error(), "create pods/exec, create networkpolicies.networking.k8s.io") || strings.Contains(err.Error(), "create pods,") {
		t.Errorf("missing rights: %v", err)
	}

	// May not look at namespaces nor make one; the namespace is missing.
	p, cs, _ = fakePlatform(t)
	p.ns = "hr-missing"
	rbac(cs)
	forbid := func(a k8stesting.Action) (bool, kruntime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("namespaces"), "hr-missing", errors.New("RBAC"))
	}
	cs.PrependReactor("get", "namespaces", forbid)
	cs.PrependReactor("create", "namespaces", forbid)
	cs.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, kruntime.Object, error) {
		if len(a.(k8stesting.CreateActionImpl).GetCreateOptions().DryRun) == 0 {
			t.Error("a pod was really created by the check")
		}
		return true, nil, apierrors.NewNotFound(corev1.Resource("namespaces"), "hr-missing")
	})
	if err := p.ensureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	_, err = p.Sandboxes(ctx, runner.SandboxOptions{})
	if err == nil || !strings.Contains(err.Error(), "namespace hr-missing does not exist") {
		t.Errorf("missing namespace: %v", err)
	}

	// Everything allowed: no refusal.
	p, cs, _ = fakePlatform(t)
	rbac(cs)
	if b, err := p.Sandboxes(ctx, runner.SandboxOptions{}); err != nil {
		t.Errorf("allowed: %v", err)
	} else {
		b.Close()
	}
}

// An invalid namespace name is a usage error whose advice is a name
// Kubernetes takes, never `kubectl create namespace Bad_NS`.
func TestInvalidNamespaceAdvice(t *testing.T) {
	err := checkName("Bad_NS")
	var se runner.SettingError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "--namespace bad-ns") || strings.Contains(err.Error(), "kubectl create namespace Bad_NS") {
		t.Fatalf("advice: %v", err)
	}
	if errs := validation.IsDNS1123Label("bad-ns"); len(errs) > 0 {
		t.Errorf("the advice is invalid too: %v", errs)
	}
	for _, ok := range []string{"headroom", "hr-1"} {
		if err := checkName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if _, err := Open(context.Background(), map[string]string{OptNamespace: "Bad_NS", OptKubeconfig: "/nonexistent"}, nil); !errors.As(err, &se) {
		t.Errorf("Open with a bad name: %v", err)
	}
}

// refused is what client-go returns when nothing listens on the API
// server's address.
func refused() error {
	return &url.Error{Op: "Post", URL: "https://127.0.0.1:6443/api/v1/namespaces/hr/pods", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
}

// The API server going away mid-sweep is waited for with backoff (the
// start tried again when it answers); past the bound the start fails
// with runner.ErrPlatformGone, which stops the sweep, interrupted.
func TestAPIServerGoneIsWaitedForThenStopsTheSweep(t *testing.T) {
	ctx := context.Background()
	// Gone for good.
	p, cs, _ := fakePlatform(t)
	p.apiWait, p.host = 300*time.Millisecond, "https://127.0.0.1:6443"
	down := func(k8stesting.Action) (bool, kruntime.Object, error) { return true, nil, refused() }
	cs.PrependReactor("create", "pods", down)
	cs.PrependReactor("create", "networkpolicies", down)
	cs.PrependReactor("get", "version", down)
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var waits []string
	_, err = b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t1", Policy: policy(1)}, Task: builtinTask(),
		Waiting: func(r string) { waits = append(waits, r) }})
	if !errors.Is(err, runner.ErrPlatformGone) || !strings.Contains(err.Error(), "127.0.0.1:6443 did not answer for 300ms") {
		t.Fatalf("gone: %v", err)
	}
	if len(waits) == 0 || !strings.Contains(waits[0], "API server does not answer") {
		t.Errorf("the wait was not said: %q", waits)
	}

	// Back after a moment: the start goes on.
	p, cs, _ = fakePlatform(t)
	runAll(t, cs, "hr")
	var mu sync.Mutex
	cuts := 2
	flaky := func(k8stesting.Action) (bool, kruntime.Object, error) {
		mu.Lock()
		defer mu.Unlock()
		if cuts > 0 {
			cuts--
			return true, nil, refused()
		}
		return false, nil, nil
	}
	cs.PrependReactor("create", "networkpolicies", flaky)
	cs.PrependReactor("get", "version", flaky)
	sb := startOne(t, p, runner.SandboxOptions{}, "t2", builtinTask())
	if f, err := sb.Remove(ctx); err != nil || f.EngineRestarted {
		t.Errorf("after the API came back: %+v %v", f, err)
	}

	// Gone under a running step: the probe's stream is cut; that is the
	// cluster's failure (engine-lost), not the step's exit 137.
	sb = startOne(t, p, runner.SandboxOptions{}, "t3", builtinTask())
	cs.PrependReactor("get", "version", down)
	cs.PrependReactor("get", "pods", down)
	sb.drv.close()
	<-sb.drv.ended
	if res, err := sb.Exec(ctx, []string{"echo"}, nil, "", func(string, string) {}); err == nil || !strings.Contains(err.Error(), "stopped answering") {
		t.Errorf("a step cut off by the API going: %+v %v", res, err)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if f, _ := sb.Remove(rctx); !f.EngineRestarted {
		t.Errorf("removal with the API gone: %+v", f)
	}
}

// The seconds a pod waits unschedulable are the trial's queue time.
func TestUnschedulableWaitIsQueueTime(t *testing.T) {
	p, cs, _ := fakePlatform(t)
	waited := make(chan string, 4)
	scheduler(t, cs, "hr", waited)
	ctx := context.Background()
	tell := func(r string) { waited <- r }
	b, err := p.Sandboxes(ctx, runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Start(ctx, runner.StartRequest{Experiment: "exp1", Trial: model.Trial{ID: "t1", Policy: policy(1)}, Task: builtinTask(), Waiting: tell})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Remove(context.Background())
	ks := sb.(*sandbox)
	q := sb.(runner.QueueWaiter).QueuedFor()
	if q <= 0 || q > ks.StartLatency() {
		t.Errorf("queued for %s of a start of %s", q, ks.StartLatency())
	}
}

// A user who may not list nodes (a namespace-scoped Role) is told what
// one pod may have from the namespace's ResourceQuota and LimitRange, and
// which; with neither, nothing is known and the scheduler decides —
// never "this host can guarantee at most 0B", never "0 CPUs".
func TestNamespaceScopedCapacity(t *testing.T) {
	ctx := context.Background()
	p, cs, _ := fakePlatform(t)
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, kruntime.Object, error) {
		return true, nil, apierrors.NewForbidden(corev1.Resource("nodes"), "", errors.New(`User "eval" cannot list resource "nodes" at the cluster scope`))
	})
	info := p.Describe()
	if info.Host.MemoryBytes != 0 || info.Host.CPUs != 0 || !strings.Contains(info.Details[DetailCapacity], "the scheduler decides") {
		t.Errorf("no quota: %+v %q", info.Host, info.Details[DetailCapacity])
	}

	gi := resource.MustParse("4Gi")
	cs.CoreV1().ResourceQuotas("hr").Create(ctx, &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "evals", Namespace: "hr"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourceRequestsMemory: gi, corev1.ResourceRequestsCPU: resource.MustParse("3")}},
		Status: corev1.ResourceQuotaStatus{Hard: corev1.ResourceList{corev1.ResourceRequestsMemory: gi, corev1.ResourceRequestsCPU: resource.MustParse("3")},
			Used: corev1.ResourceList{corev1.ResourceRequestsMemory: resource.MustParse("1Gi"), corev1.ResourceRequestsCPU: resource.MustParse("500m")}}}, metav1.CreateOptions{})
	info = p.Describe()
	if info.Host.MemoryBytes != 3<<30 || info.Host.CPUs != 3 || !strings.Contains(info.Details[DetailCapacity], "ResourceQuota evals") {
		t.Errorf("quota: %+v %q", info.Host, info.Details[DetailCapacity])
	}
	cs.CoreV1().LimitRanges("hr").Create(ctx, &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Name: "per-pod", Namespace: "hr"},
		Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, Max: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")}}}}}, metav1.CreateOptions{})
	info = p.Describe()
	if info.Host.MemoryBytes != 2<<30 || !strings.Contains(info.Details[DetailCapacity], "LimitRange per-pod (container max)") {
		t.Errorf("limit range: %+v %q", info.Host, info.Details[DetailCapacity])
	}
}
