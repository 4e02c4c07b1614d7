package kube

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

const clusterLong = `
[task]
name = "test/long"
[environment]
image = "builtin"
memory = "64M"
[agent]
timeout_sec = 120
[verifier]
workload = { duration_ms = 100, base_mb = 2 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "first"
  workload = { style = "edit", duration_ms = 300, base_mb = 4 }
  [[agents.steps]]
  name = "long"
  workload = { style = "build", duration_ms = 30000, base_mb = 8 }
`

// A pod deleted from outside mid-step (kubectl delete pod) is infra-error
// · killed-outside, named, as Docker's docker rm -f is: not the agent's
// failure, and rerun by --resume.
func TestClusterPodDeletedOutside(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, clusterLong)
	var once sync.Once
	results := clusterSweep(t, p, []model.Task{task}, []model.Ratio{model.Uncapped}, func(e event.Event) {
		if s, ok := e.(event.StepStarted); ok && s.Step.Name == "long" {
			once.Do(func() {
				pod := PodName(testExperiment, s.TrialID())
				// kubectl delete pod's default: a graceful deletion.
				go func() {
					if err := p.cs.CoreV1().Pods(p.ns).Delete(context.Background(), pod, metav1.DeleteOptions{}); err != nil {
						t.Errorf("delete %s: %v", pod, err)
					}
				}()
			})
		}
	})
	r := results[0]
	if r.Outcome != model.InfraError || r.Cause != model.CauseKilledOutside || !strings.Contains(r.Reason, "deletion of its pod") || !strings.Contains(r.Reason, "step long") {
		t.Fatalf("%s · %s (%s), want infra-error · killed-outside in step long", r.Outcome, r.Cause, r.Reason)
	}
	t.Logf("%s · %s: %s", r.Outcome, r.Cause, r.Reason)
}

// --exec-steps on the built-in image (FROM scratch, no env): every step
// runs, its environment through headroom's env mode; and every step, the
// first too, has its CPU.
func TestClusterExecStepsOnScratchImage(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, enginetest.HeavyInstall)
	for _, opts := range []runner.SandboxOptions{{ExecSteps: true}, {}} {
		r := clusterSweepWith(t, p, opts, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{model.Uncapped}, Concurrency: 1})[0]
		if r.Outcome != model.Passed {
			t.Fatalf("exec steps %v: %s (%s), want passed", opts.ExecSteps, r.Outcome, r.Reason)
		}
		for _, s := range r.Steps {
			if s.CPU == nil {
				t.Errorf("exec steps %v: step %s has no CPU", opts.ExecSteps, s.Name)
			}
		}
		t.Logf("exec steps %v: steps by %s; trial CPU %+v", opts.ExecSteps, r.StepRunner, r.CPU)
	}
}

// The API server going away mid-sweep: the next start waits for it (with
// backoff, said as the trial's wait), then the sweep stops, interrupted,
// saying why; the trial running when it went is engine-lost, the queued
// ones cancelled — not a sweep "finished" of 0-second infra-errors.
func TestClusterAPIGoneStopsTheSweep(t *testing.T) {
	p, image := clusterPlatform(t)
	task := clusterTask(t, image, clusterLong)
	c := enginetest.NewCutter(t, "tcp", strings.TrimPrefix(p.cfg.Host, "https://"))
	cfg := rest.CopyConfig(p.cfg)
	cfg.Host = "https://" + c.Addr()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cut := newPlatform(cs, cfg, p.set)
	cut.apiWait = 5 * time.Second
	b, err := cut.Sandboxes(context.Background(), runner.SandboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var tasks []model.Task
	for _, n := range []string{"a", "b", "c"} {
		tk := task
		tk.Name = "test/long-" + n
		tasks = append(tasks, tk)
	}
	var once sync.Once
	results, evs := enginetest.Run(t, context.Background(), b, enginetest.Sweep{Experiment: testExperiment, Tasks: tasks, Ratios: []model.Ratio{model.Uncapped}, Concurrency: 1,
		// A remote cluster: no host of headroom's own to read.
		Tune:   func(c *runner.Config) { c.Host, c.HostCPUs = nil, 0 },
		Within: 5 * time.Minute,
		OnEvent: func(e event.Event) {
			if s, ok := e.(event.StepStarted); ok && s.Step.Name == "long" {
				once.Do(c.Cut)
			}
		}})
	var end event.SweepEnded
	waited := false
	for _, e := range evs {
		switch e := e.(type) {
		case event.TrialWaiting:
			waited = waited || strings.Contains(e.Reason, "API server does not answer")
		case event.SweepEnded:
			end = e
		}
	}
	if !end.Interrupted || !strings.Contains(end.Why, "did not answer") {
		t.Errorf("the end: %+v", end)
	}
	if !waited {
		t.Error("the wait for the API server was not said")
	}
	counts := map[string]int{}
	for _, res := range results {
		counts[string(res.Outcome)+" "+string(res.Cause)]++
		t.Logf("%s: %s · %s (%s)", res.Task, res.Outcome, res.Cause, res.Reason)
	}
	if counts["infra-error engine-lost"] != 1 || counts["cancelled "] != 1 || len(results) != 3 {
		t.Errorf("outcomes %v: want the running trial engine-lost, the one that met the wait infra-error, the last cancelled", counts)
	}
	// The running trial's pod could not be removed through the cut path
	// (its record says `headroom clean`); the real path removes it.
	owned, _ := p.Owned(context.Background())
	for _, o := range owned {
		if o.Experiment == testExperiment {
			t.Logf("left by the cut: %s %s", o.Kind, o.ID)
			_ = p.Remove(context.Background(), o)
			if o.Kind == KindPod {
				_ = p.waitGone(context.Background(), o.ID)
			}
		}
	}
	nothingLeft(t, p)
}

// A namespace-scoped user (a ServiceAccount with a Role, no cluster
// rights): it may not list nodes, so one pod's capacity is what the
// namespace's ResourceQuota says, named; with every right it runs a trial;
// a Role without NetworkPolicies is refused before any trial, naming the
// namespace and the rights.
func TestClusterNamespaceScopedUser(t *testing.T) {
	p, image := clusterPlatform(t)
	ctx := context.Background()
	const ns = "headroom-test-scoped"
	core := p.cs.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = core.Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	quota := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "evals"}, Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
		corev1.ResourceRequestsMemory: resource.MustParse("3Gi"), corev1.ResourceRequestsCPU: resource.MustParse("2")}}}
	if _, err := core.ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	rules := func(netpol bool) []rbacv1.PolicyRule {
		r := []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "delete", "get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods/exec", "pods/attach"}, Verbs: []string{"create", "get"}},
			{APIGroups: []string{""}, Resources: []string{"resourcequotas", "limitranges"}, Verbs: []string{"get", "list"}},
		}
		if netpol {
			r = append(r, rbacv1.PolicyRule{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"create", "delete", "list"}})
		}
		return r
	}
	user := func(name string, netpol bool) *Platform {
		t.Helper()
		if _, err := core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		rb := p.cs.RbacV1()
		if _, err := rb.Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules(netpol)}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if _, err := rb.RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: ns}},
			RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		tok, err := core.ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cfg := rest.AnonymousClientConfig(p.cfg)
		cfg.BearerToken = tok.Status.Token
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]string{}
		for k, v := range p.set {
			set[k] = v
		}
		set[OptNamespace] = ns
		up := newPlatform(cs, cfg, set)
		if err := up.ensureNamespace(ctx); err != nil {
			t.Fatal(err)
		}
		return up
	}

	scoped := user("evaluator", true)
	info := scoped.Describe()
	if info.Host.MemoryBytes != 3<<30 || info.Host.CPUs != 2 || !strings.Contains(info.Details[DetailCapacity], "ResourceQuota evals") {
		t.Errorf("capacity %+v from %q, want 3GiB, 2 CPUs from the quota", info.Host, info.Details[DetailCapacity])
	}
	t.Logf("capacity: %s", info.Details[DetailCapacity])
	task := clusterTask(t, image, enginetest.HeavyInstall)
	res := clusterSweepWith(t, scoped, runner.SandboxOptions{}, enginetest.Sweep{Tasks: []model.Task{task}, Ratios: []model.Ratio{model.Uncapped}, Concurrency: 1})
	if res[0].Outcome != model.Passed {
		t.Errorf("the scoped user's trial: %s (%s)", res[0].Outcome, res[0].Reason)
	}

	refused := user("no-netpol", false)
	if _, err := refused.Sandboxes(ctx, runner.SandboxOptions{}); err == nil || !strings.Contains(err.Error(), "namespace "+ns) || !strings.Contains(err.Error(), "create networkpolicies.networking.k8s.io") {
		t.Errorf("a Role without NetworkPolicies: %v", err)
	}
}
