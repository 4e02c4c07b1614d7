package kube

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// Describe says what the cluster is: its version, its largest node as the
// host, and whether that node is this machine.
func (p *Platform) Describe() runner.PlatformInfo {
	info := runner.PlatformInfo{
		Backend:      Name,
		Where:        p.host + " namespace " + p.ns,
		AdmitsItself: true,
		Details:      map[string]string{"namespace": p.ns},
	}
	if v, err := p.cs.Discovery().ServerVersion(); err == nil {
		info.Version, info.APIVersion = v.GitVersion, v.Major+"."+v.Minor
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nodes, err := p.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		// A namespace-scoped user (the normal case on a shared cluster):
		// what one pod can have is what the namespace's quota and limit
		// ranges say, or nothing known (the scheduler decides).
		info.Details["nodes"] = "unreadable: " + err.Error()
		c, _ := p.namespaceCapacity(ctx)
		info.Host = runner.HostInfo{MemoryBytes: c.memory, CPUs: int((c.milliCPU + 999) / 1000)}
		info.Details[DetailCapacity] = c.describe(p.ns)
		return info
	}
	var names []string
	var best *corev1.Node
	for i := range nodes.Items {
		n := &nodes.Items[i]
		names = append(names, n.Name)
		if best == nil || n.Status.Allocatable.Memory().Cmp(*best.Status.Allocatable.Memory()) > 0 {
			best = n
		}
	}
	sort.Strings(names)
	info.Details["nodes"] = strings.Join(names, ",")
	if best == nil {
		return info
	}
	ni := best.Status.NodeInfo
	info.Host = runner.HostInfo{
		Hostname:    best.Name,
		Kernel:      ni.KernelVersion,
		CPUs:        int(best.Status.Allocatable.Cpu().Value()),
		MemoryBytes: best.Status.Allocatable.Memory().Value(),
	}
	info.Details[DetailCapacity] = "node " + best.Name + "'s allocatable memory and CPUs"
	if c, _ := p.namespaceCapacity(ctx); len(c.from) > 0 && (c.memory > 0 && c.memory < info.Host.MemoryBytes || c.milliCPU > 0 && int(c.milliCPU/1000) < info.Host.CPUs) {
		// The namespace bounds a pod below the node.
		if c.memory > 0 {
			info.Host.MemoryBytes = min(info.Host.MemoryBytes, c.memory)
		}
		if c.milliCPU > 0 {
			info.Host.CPUs = min(info.Host.CPUs, max(int(c.milliCPU/1000), 1))
		}
		info.Details[DetailCapacity] = "node " + best.Name + "'s allocatable, bounded by namespace " + p.ns + "'s " + strings.Join(c.from, ", ")
	}
	info.Details["node"] = best.Name
	info.Details["kubelet"] = ni.KubeletVersion
	info.Details["container_runtime"] = ni.ContainerRuntimeVersion
	info.Details["os"] = ni.OSImage
	info.Details["node_capacity_memory"] = best.Status.Capacity.Memory().String()
	info.Details["node_allocatable_memory"] = best.Status.Allocatable.Memory().String()
	info.Details["node_capacity_cpu"] = best.Status.Capacity.Cpu().String()
	info.Local = len(nodes.Items) == 1 && thisHost(*best)
	if info.Local {
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
			info.Details["cgroup"] = "v2"
		} else {
			info.Details["cgroup"] = "v1"
		}
	}
	return info
}

// ownedKinds are what headroom makes in the namespace.
const (
	KindPod           = "pod"
	KindNetworkPolicy = "networkpolicy"
)

// Owned lists the pods and network policies headroom made in the
// namespace, by its label.
func (p *Platform) Owned(ctx context.Context) ([]runner.OwnedResource, error) {
	sel := metav1.ListOptions{LabelSelector: LabelHeadroom}
	pods, err := p.cs.CoreV1().Pods(p.ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("list pods in %s: %w", p.ns, err)
	}
	var out []runner.OwnedResource
	for _, pod := range pods.Items {
		o := owned(KindPod, pod.ObjectMeta)
		o.State = string(pod.Status.Phase)
		if pod.DeletionTimestamp != nil {
			o.State = "Terminating"
		}
		out = append(out, o)
	}
	nps, err := p.cs.NetworkingV1().NetworkPolicies(p.ns).List(ctx, sel)
	if err != nil {
		return out, fmt.Errorf("list network policies in %s: %w", p.ns, err)
	}
	for _, np := range nps.Items {
		out = append(out, owned(KindNetworkPolicy, np.ObjectMeta))
	}
	return out, nil
}

func owned(kind string, m metav1.ObjectMeta) runner.OwnedResource {
	pick := func(k string) string {
		if v := m.Annotations[k]; v != "" {
			return v
		}
		return m.Labels[k]
	}
	o := runner.OwnedResource{
		ID: m.Name, Name: m.Name, Kind: kind,
		Experiment: pick(LabelExperiment), Trial: pick(LabelTrial),
		Kept:  m.Labels[LabelKept] != "",
		Owner: pick(LabelOwner),
	}
	o.OwnerCheck = runner.OwnerCheck(o.Owner)
	o.OwnerAlive = o.OwnerCheck.Alive
	return o
}

// Remove deletes one of them at once (gone already is fine).
func (p *Platform) Remove(ctx context.Context, o runner.OwnedResource) error {
	var err error
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	switch o.Kind {
	case KindPod:
		err = p.cs.CoreV1().Pods(p.ns).Delete(ctx, o.ID, now)
	case KindNetworkPolicy:
		err = p.cs.NetworkingV1().NetworkPolicies(p.ns).Delete(ctx, o.ID, now)
	default:
		return fmt.Errorf("%s %s: not something the kubernetes backend makes", o.Kind, o.ID)
	}
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Doctor checks the API server, the namespace, what headroom may do there
// (RBAC) and that a pod with a policy's requests and limits is admitted
// with them.
func (p *Platform) Doctor(ctx context.Context, exe string) []runner.Check {
	var out []runner.Check
	v, err := p.cs.Discovery().ServerVersion()
	if err != nil {
		return append(out, runner.Check{Name: "kubernetes API", Info: err.Error(), Fix: "check --kubeconfig and that the cluster is up"})
	}
	out = append(out, runner.Check{OK: true, Name: "kubernetes API", Info: p.host + " " + v.GitVersion})
	out = append(out, p.namespaceCheck(ctx))
	for _, a := range []struct{ verb, group, resource, sub string }{
		{"create", "", "pods", ""}, {"delete", "", "pods", ""}, {"list", "", "pods", ""}, {"watch", "", "pods", ""},
		{"create", "", "pods", "exec"}, {"create", "", "pods", "attach"}, {"get", "", "pods", "log"},
		{"create", "networking.k8s.io", "networkpolicies", ""}, {"delete", "networking.k8s.io", "networkpolicies", ""},
		{"list", "", "events", ""},
	} {
		r := &authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
			Namespace: p.ns, Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.sub,
		}}}
		name := "may " + a.verb + " " + a.resource
		if a.sub != "" {
			name += "/" + a.sub
		}
		res, err := p.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, r, metav1.CreateOptions{})
		switch {
		case err != nil:
			out = append(out, runner.Check{Name: name, Info: err.Error(), Fix: "grant the service account this verb in namespace " + p.ns})
		case !res.Status.Allowed:
			out = append(out, runner.Check{Name: name, Info: "denied " + res.Status.Reason, Fix: "grant the service account this verb in namespace " + p.ns})
		default:
			out = append(out, runner.Check{OK: true, Name: name, Info: "allowed"})
		}
	}
	out = append(out, p.admissionCheck(ctx))
	if exe != "" {
		ref, built, err := p.WorkloadImageBuilt(ctx, exe)
		switch {
		case err != nil:
			out = append(out, runner.Check{Name: "workload image", Info: err.Error(), Fix: "headroom images build --backend kubernetes"})
		case !built:
			out = append(out, runner.Check{Name: "workload image", Info: ref + " is not on the cluster", Fix: "headroom images build --backend kubernetes"})
		default:
			out = append(out, runner.Check{OK: true, Name: "workload image", Info: ref})
		}
	}
	return out
}

// admissionCheck makes a pod with a small policy, dry run on the server,
// and reads its requests and limits back: an admission controller (a
// LimitRange, a policy engine) that changes them would change the trials.
func (p *Platform) admissionCheck(ctx context.Context) runner.Check {
	pol := model.ResourcePolicy{GuaranteeBytes: 128 << 20, HardLimitBytes: 192 << 20, GuaranteeCPUs: 0.25, LimitCPUs: 0.5}
	task := model.Task{Name: "doctor", Image: "registry.invalid/headroom-doctor:none", IdleCommand: []string{"sleep", "infinity"}, Network: "none"}
	pod := Pod("doctor", model.Trial{ID: "probe", Policy: pol}, task, podConfig{Namespace: p.ns, Owner: p.owner, Pull: corev1.PullNever})
	got, err := p.cs.CoreV1().Pods(p.ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return runner.Check{Name: "pod admission", Info: err.Error(), Fix: "see what refuses a pod with requests/limits in namespace " + p.ns}
	}
	want := Resources(pol)
	have := got.Spec.Containers[0].Resources
	if !equalResources(want, have) {
		return runner.Check{Name: "pod admission", Info: fmt.Sprintf("asked requests %v limits %v, admitted %v %v", want.Requests, want.Limits, have.Requests, have.Limits),
			Fix: "a LimitRange or admission webhook in " + p.ns + " changes pods' resources: use a namespace without one"}
	}
	return runner.Check{OK: true, Name: "pod admission", Info: "requests and limits admitted as asked (server dry run)"}
}

// equalResources compares requests and limits by quantity.
func equalResources(a, b corev1.ResourceRequirements) bool {
	eq := func(x, y corev1.ResourceList) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || v.Cmp(w) != 0 {
				return false
			}
		}
		return true
	}
	return eq(a.Requests, b.Requests) && eq(a.Limits, b.Limits)
}

// namespaceCheck says whether the namespace exists and headroom may use
// it: read where the user may, else a pod's server dry run says (one the
// user may not read is not "ok" for that alone).
func (p *Platform) namespaceCheck(ctx context.Context) runner.Check {
	name := "namespace " + p.ns
	_, err := p.cs.CoreV1().Namespaces().Get(ctx, p.ns, metav1.GetOptions{})
	switch {
	case err == nil:
		return runner.Check{OK: true, Name: name, Info: "exists"}
	case apierrors.IsNotFound(err):
		return runner.Check{Name: name, Info: "does not exist", Fix: "kubectl create namespace " + p.ns + " (or pass --namespace one that exists)"}
	case !apierrors.IsForbidden(err):
		return runner.Check{Name: name, Info: err.Error(), Fix: "check that the cluster answers"}
	}
	probe := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{GenerateName: "headroom-check-", Namespace: p.ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: mainContainer, Image: "headroom-check"}}}}
	_, derr := p.cs.CoreV1().Pods(p.ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	switch {
	case derr == nil:
		return runner.Check{OK: true, Name: name, Info: "exists (this user may not read namespaces; a pod's server dry run there was admitted)"}
	case apierrors.IsNotFound(derr):
		return runner.Check{Name: name, Info: "does not exist (this user may not read namespaces; a pod's server dry run says so)", Fix: "ask the cluster's admin for it (kubectl create namespace " + p.ns + "), or pass --namespace a namespace you may use"}
	default:
		return runner.Check{Name: name, Info: "this user may neither read it nor create a pod in it: " + derr.Error(), Fix: "grant the Role of docs/KUBERNETES.md in " + p.ns + ", or pass --namespace a namespace you may use"}
	}
}
