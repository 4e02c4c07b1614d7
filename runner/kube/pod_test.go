package kube

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload/wire"
)

func builtinTask() model.Task {
	return model.Task{
		Name: "builtin/steady-alloc", Image: "headroom/workload:abc", User: "65534:65534",
		IdleCommand: []string{wire.Binary, wire.IdleMode}, Network: "none",
		Env: []string{"A=1", "B=x=y"}, WorkDir: "/work",
	}
}

func policy(k float64) model.ResourcePolicy {
	return model.ResourcePolicy{Ratio: model.Ratio{K: k}, GuaranteeBytes: 128 << 20, HardLimitBytes: int64(k * float64(128<<20)), GuaranteeCPUs: 0.5, LimitCPUs: k * 0.5}
}

func qty(t *testing.T, l corev1.ResourceList, r corev1.ResourceName) string {
	t.Helper()
	q, ok := l[r]
	if !ok {
		return "none"
	}
	return q.String()
}

// The policy becomes the pod: requests the guarantee, limits the hard
// limit, restartPolicy Never, the labels and annotations, the task's
// environment and user, the probe as PID 1 of the built-in image.
func TestPodFromPolicy(t *testing.T) {
	trial := model.Trial{ID: "t0001", Policy: policy(1.5)}
	task := builtinTask()
	c := podConfig{Namespace: "hr", Owner: "host:12:345", Probe: true, Every: 50 * time.Millisecond, Pull: corev1.PullNever}
	pod := Pod("20261130-1430-ab", trial, task, c)
	if pod.Name != "headroom-20261130-1430-ab-t0001" || pod.Namespace != "hr" {
		t.Errorf("name %s/%s", pod.Namespace, pod.Name)
	}
	if errs := validation.IsDNS1123Label(pod.Name); len(errs) > 0 {
		t.Errorf("pod name %q: %v", pod.Name, errs)
	}
	if pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %s", pod.Spec.RestartPolicy)
	}
	ctr := pod.Spec.Containers[0]
	r := ctr.Resources
	if got := qty(t, r.Requests, corev1.ResourceMemory); got != "132352Ki" { // 128 MiB and the probe's 1.25 MiB
		t.Errorf("requests.memory %s", got)
	}
	// 1.5x of 128 MiB, and the probe's own 1.25 MiB beside it
	// (podConfig.containerPolicy): 193.25 MiB.
	if got := qty(t, r.Limits, corev1.ResourceMemory); got != "197888Ki" {
		t.Errorf("limits.memory %s", got)
	}
	if got := qty(t, r.Requests, corev1.ResourceCPU); got != "500m" {
		t.Errorf("requests.cpu %s", got)
	}
	if got := qty(t, r.Limits, corev1.ResourceCPU); got != "750m" {
		t.Errorf("limits.cpu %s", got)
	}
	for k, want := range map[string]string{LabelHeadroom: "1", LabelExperiment: "20261130-1430-ab", LabelTrial: "t0001", LabelTask: "builtin_steady-alloc-" + pod.Labels[LabelTask][len("builtin_steady-alloc-"):], LabelOwner: pod.Labels[LabelOwner]} {
		if pod.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, pod.Labels[k], want)
		}
		if errs := validation.IsValidLabelValue(pod.Labels[k]); len(errs) > 0 {
			t.Errorf("label %s=%q: %v", k, pod.Labels[k], errs)
		}
	}
	if pod.Annotations[LabelTask] != task.Name || pod.Annotations[LabelOwner] != "host:12:345" {
		t.Errorf("annotations %v", pod.Annotations)
	}
	if strings.Join(ctr.Command, " ") != wire.Binary+" probe --every 50ms" || !ctr.Stdin || ctr.StdinOnce {
		t.Errorf("probe command %q stdin %v once %v", ctr.Command, ctr.Stdin, ctr.StdinOnce)
	}
	if len(pod.Spec.InitContainers) != 0 {
		t.Error("the built-in image has the probe already: no init container")
	}
	if ctr.SecurityContext.RunAsUser == nil || *ctr.SecurityContext.RunAsUser != 65534 || *ctr.SecurityContext.RunAsGroup != 65534 {
		t.Errorf("user %+v", ctr.SecurityContext)
	}
	if pe := ctr.SecurityContext.AllowPrivilegeEscalation; pe == nil || *pe {
		t.Error("hardened: privilege escalation allowed")
	}
	if caps := ctr.SecurityContext.Capabilities; caps == nil || len(caps.Drop) != 1 || caps.Drop[0] != "ALL" {
		t.Errorf("hardened caps %+v", caps)
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		env[e.Name] = e.Value
	}
	if env["A"] != "1" || env["B"] != "x=y" || env["HEADROOM_TRIAL"] != "t0001" || ctr.WorkingDir != "/work" {
		t.Errorf("env %v workdir %s", env, ctr.WorkingDir)
	}
	if ctr.ImagePullPolicy != corev1.PullNever {
		t.Errorf("pull %s", ctr.ImagePullPolicy)
	}
}

// Uncapped: no limits at all; a guarantee above a limit (a ratio under
// one) is lowered to it, as the API server would refuse it.
func TestResourcesUncappedAndBelowGuarantee(t *testing.T) {
	r := Resources(model.ResourcePolicy{GuaranteeBytes: 256 << 20, GuaranteeCPUs: 1})
	if len(r.Limits) != 0 || qty(t, r.Requests, corev1.ResourceMemory) != "256Mi" || qty(t, r.Requests, corev1.ResourceCPU) != "1" {
		t.Errorf("uncapped %+v", r)
	}
	r = Resources(model.ResourcePolicy{GuaranteeBytes: 256 << 20, HardLimitBytes: 128 << 20, GuaranteeCPUs: 1, LimitCPUs: 0.5})
	if qty(t, r.Requests, corev1.ResourceMemory) != "128Mi" || qty(t, r.Limits, corev1.ResourceMemory) != "128Mi" || qty(t, r.Requests, corev1.ResourceCPU) != "500m" {
		t.Errorf("below guarantee %+v", r)
	}
	if !equalResources(r, Resources(model.ResourcePolicy{GuaranteeBytes: 256 << 20, HardLimitBytes: 128 << 20, GuaranteeCPUs: 1, LimitCPUs: 0.5})) {
		t.Error("equalResources of the same policy")
	}
	r2 := r.DeepCopy()
	r2.Limits[corev1.ResourceMemory] = resource.MustParse("129Mi")
	if equalResources(r, *r2) {
		t.Error("equalResources missed a changed limit")
	}
}

// A task image gets the probe from an init container that copies it from
// the workload image into an emptyDir at the Docker backend's driver path;
// a task with a network gets no NetworkPolicy; the harbor profile keeps
// privilege escalation and adds the task's capabilities.
func TestPodTaskImageProbeAndProfile(t *testing.T) {
	task := model.Task{Name: "tb/x", Image: "tb/x:1", IdleCommand: []string{"sleep", "infinity"}, Network: "bridge", Profile: model.ProfileHarbor, Capabilities: []string{"CAP_NET_ADMIN"}, User: "agent"}
	c := podConfig{Namespace: "hr", Probe: true, ProbeImage: "headroom/workload:abc", Pull: corev1.PullIfNotPresent}
	pod := Pod("e", model.Trial{ID: "t1", Policy: policy(1)}, task, c)
	if len(pod.Spec.InitContainers) != 1 {
		t.Fatalf("init containers %+v", pod.Spec.InitContainers)
	}
	ic := pod.Spec.InitContainers[0]
	if ic.Image != "headroom/workload:abc" || strings.Join(ic.Command, " ") != wire.Binary+" copy-self "+ProbeDir {
		t.Errorf("init %s %q", ic.Image, ic.Command)
	}
	ctr := pod.Spec.Containers[0]
	if ctr.Command[0] != runner.TaskDriverPath || ctr.VolumeMounts[0].MountPath != ProbeDir || !ctr.VolumeMounts[0].ReadOnly {
		t.Errorf("main %q mounts %+v", ctr.Command, ctr.VolumeMounts)
	}
	if ctr.SecurityContext.AllowPrivilegeEscalation != nil || ctr.SecurityContext.Capabilities.Add[0] != "NET_ADMIN" || ctr.SecurityContext.RunAsUser != nil {
		t.Errorf("harbor security %+v", ctr.SecurityContext)
	}
	if NetworkPolicy("e", task, c) != nil || pod.Labels[LabelIsolated] != "" {
		t.Error("a task with a network got a NetworkPolicy")
	}
	task.Network = "none"
	pod = Pod("e", model.Trial{ID: "t1", Policy: policy(1)}, task, c)
	np := NetworkPolicy("e", task, c)
	if np == nil || len(np.Spec.Ingress) != 0 || len(np.Spec.Egress) != 0 || len(np.Spec.PolicyTypes) != 2 {
		t.Fatalf("deny-all policy %+v", np)
	}
	for k, v := range np.Spec.PodSelector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("policy selects %s=%s, the pod has %q", k, v, pod.Labels[k])
		}
	}
	if np.Labels[LabelHeadroom] != "1" {
		t.Error("the policy is not labelled headroom (the reaper would miss it)")
	}
	// No probe: the task's own idle command; a foreign harness keeps the
	// image's entrypoint.
	c.Probe = false
	if ctr := Pod("e", model.Trial{ID: "t1"}, task, c).Spec.Containers[0]; strings.Join(ctr.Command, " ") != "sleep infinity" || ctr.Stdin {
		t.Errorf("no probe: %q", ctr.Command)
	}
	// A task from another harness keeps its image's ENTRYPOINT as PID 1;
	// the probe's binary is still copied in, to be exec'd beside it.
	task.Format = model.FormatHarbor
	c.ProbeExec = true
	beside := Pod("e", model.Trial{ID: "t1"}, task, c)
	if ctr := beside.Spec.Containers[0]; ctr.Command != nil || strings.Join(ctr.Args, " ") != "sleep infinity" || ctr.Stdin ||
		len(beside.Spec.InitContainers) != 1 || len(ctr.VolumeMounts) != 1 || ctr.VolumeMounts[0].MountPath != ProbeDir {
		t.Errorf("probe beside PID 1: command %q args %q init %d mounts %+v", ctr.Command, ctr.Args, len(beside.Spec.InitContainers), ctr.VolumeMounts)
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("Exp_", 30)
	for _, in := range []string{"simple", long, "a/b:c", "--", "UPPER.case"} {
		if errs := validation.IsDNS1123Label(dnsName(in)); len(errs) > 0 {
			t.Errorf("dnsName(%q) = %q: %v", in, dnsName(in), errs)
		}
		if errs := validation.IsValidLabelValue(labelValue(in)); len(errs) > 0 {
			t.Errorf("labelValue(%q) = %q: %v", in, labelValue(in), errs)
		}
	}
	if dnsName(long+"1") == dnsName(long+"2") {
		t.Error("two long names cut to the same")
	}
	if got := Reproduce("hr", model.Task{}, "img:1", policy(1)); !strings.Contains(got, `"limits":{"memory":"128Mi","cpu":"500m"}`) || !strings.Contains(got, "kubectl run") {
		t.Errorf("reproduce %s", got)
	}
}

// The task's container gets the probe's own memory beside the policy's
// limit only where the probe is in it (as PID 1 or beside it); with no
// probe (--pod-probe off) and uncapped, the policy's alone.
func TestContainerLimitHoldsTheProbe(t *testing.T) {
	for _, c := range []struct {
		cfg   podConfig
		ratio float64
		want  string
	}{
		{podConfig{Probe: true}, 1.5, "197888Ki"},
		{podConfig{ProbeExec: true}, 1.5, "197888Ki"},
		{podConfig{}, 1.5, "192Mi"},
	} {
		c.cfg.Namespace, c.cfg.Pull = "hr", corev1.PullNever
		pod := Pod("e", model.Trial{ID: "t1", Policy: policy(c.ratio)}, builtinTask(), c.cfg)
		if got := qty(t, pod.Spec.Containers[0].Resources.Limits, corev1.ResourceMemory); got != c.want {
			t.Errorf("probe %v, beside %v: limits.memory %s, want %s", c.cfg.Probe, c.cfg.ProbeExec, got, c.want)
		}
	}
	// At 1x the pod's requests are its limits (the Guaranteed QoS class,
	// the kubelet's -997 OOM score): the probe's memory is in both.
	at1 := Pod("e", model.Trial{ID: "t1", Policy: policy(1)}, builtinTask(), podConfig{Namespace: "hr", Probe: true})
	r := at1.Spec.Containers[0].Resources
	if !equalResources(corev1.ResourceRequirements{Requests: r.Limits, Limits: r.Limits}, r) {
		t.Errorf("1x with the probe: requests %v, limits %v: not the Guaranteed class", r.Requests, r.Limits)
	}
	uncapped := Pod("e", model.Trial{ID: "t1", Policy: model.ResourcePolicy{GuaranteeBytes: 128 << 20, GuaranteeCPUs: 0.5}}, builtinTask(), podConfig{Namespace: "hr", Probe: true})
	if _, ok := uncapped.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]; ok {
		t.Errorf("uncapped: a memory limit %v", uncapped.Spec.Containers[0].Resources.Limits)
	}
}

// Where the task's harness bind-mounts a directory of its host (Harbor's
// /logs/verifier, /logs/agent, /logs/artifacts), the pod has an emptyDir
// mounted: a mount point, as the Docker backend's empty volumes are.
func TestPodHarnessMountsAreEmptyDirs(t *testing.T) {
	task := model.Task{Name: "hb/x", Image: "hb/x:1", IdleCommand: []string{"sleep", "infinity"}, Format: model.FormatHarbor,
		HarnessMounts: []string{"/logs/verifier", "/logs/agent", "/logs/artifacts"}}
	pod := Pod("e", model.Trial{ID: "t1", Policy: policy(1)}, task, podConfig{Namespace: "hr"})
	vols := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v.EmptyDir != nil
	}
	var got []string
	for _, m := range pod.Spec.Containers[0].VolumeMounts {
		if !vols[m.Name] {
			t.Errorf("mount %s at %s is no emptyDir of the pod's", m.Name, m.MountPath)
		}
		got = append(got, m.MountPath)
	}
	if !slices.Equal(got, task.HarnessMounts) {
		t.Errorf("mounts %q, want %q", got, task.HarnessMounts)
	}
}
