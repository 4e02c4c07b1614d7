package kube

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/printable"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

// Labels and annotations: every backend's label names, so `headroom
// clean` and people's selectors read the same. A label value cannot hold
// what an experiment id, a task name or an owner may ("/", ":"), so the
// exact values are annotations and the labels a safe form of them.
const (
	LabelHeadroom   = runner.LabelHeadroom
	LabelExperiment = runner.LabelExperiment
	LabelTrial      = runner.LabelTrial
	LabelTask       = runner.LabelTask
	LabelKept       = runner.LabelKept
	LabelOwner      = runner.LabelOwner
	// LabelIsolated marks the pod of a task without a network: its
	// experiment's NetworkPolicy selects it by this label and the
	// experiment's (ExperimentPolicy).
	LabelIsolated = "headroom.isolated"
)

// annotationKeepHome marks a pod whose steps' user keeps the container's
// HOME (its image's or task's ENV sets one).
const annotationKeepHome = "headroom.step-keep-home"

// Container names in a trial's pod.
const (
	mainContainer  = "task"
	probeInstaller = "headroom-probe"
	probeVolume    = "headroom-probe"
)

// ProbeDir is where the probe's binary is in a task image's container (an
// emptyDir an init container fills from the workload image): the Docker
// backend's mount point of its step driver.
var ProbeDir = path.Dir(runner.TaskDriverPath)

// podConfig is what a pod needs beyond the trial and task.
type podConfig struct {
	// Name is the pod's name; "" for the trial's PodName.
	Name      string
	Namespace string
	Owner     string
	Keep      bool
	// Probe runs the probe as the main container's PID 1: from the image
	// itself (built-in tasks) or copied from ProbeImage.
	Probe bool
	// ProbeExec puts the probe's binary in the container but keeps the
	// task's own PID 1 (its ENTRYPOINT may start the task's services):
	// the probe is exec'd beside it, in the same cgroup.
	ProbeExec bool
	// StepUser: the task's container runs as root, its probe with it, and
	// the probe runs every step as this user (stepuser.go); "" the
	// container runs as its own user, and the probe too.
	StepUser string
	// KeepHome: the container's environment sets HOME (the steps keep it).
	KeepHome bool
	// Entrypoint is the image's ENTRYPOINT, which a pod whose probe is
	// exec'd beside PID 1 runs as StepUser (through the probe's binary's
	// as mode, which becomes it and execs it: PID 1 is the image's own,
	// as its user, as under the task's harness).
	Entrypoint []string
	ProbeImage string
	Every      time.Duration
	// Pull is the image pull policy (Never: images imported by hand).
	Pull corev1.PullPolicy
}

var (
	unsafeName  = regexp.MustCompile(`[^a-z0-9-]+`)
	unsafeLabel = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)
)

// dnsName makes a DNS-1123 label of s (at most 63 characters): lower case,
// letters, digits and '-'.
func dnsName(s string) string { return safeName(s, strings.ToLower(s), unsafeName, "-", "-") }

// labelValue makes a valid label value of s (63 characters of letters,
// digits, '-', '_', '.', starting and ending with a letter or digit).
func labelValue(s string) string { return safeName(s, s, unsafeLabel, "_", "_.-") }

// safeName replaces what unsafe matches in folded with repl and trims
// trim from the ends; when anything had to change or be cut, a short
// digest of the original s keeps two names apart.
func safeName(s, folded string, unsafe *regexp.Regexp, repl, trim string) string {
	n := strings.Trim(unsafe.ReplaceAllString(folded, repl), trim)
	if n == s && len(n) <= 63 {
		return n
	}
	sum := sha256.Sum256([]byte(s))
	h := hex.EncodeToString(sum[:])[:8]
	if len(n) > 54 {
		n = strings.Trim(n[:54], trim)
	}
	if n == "" {
		return "x" + h
	}
	return n + "-" + h
}

// PodName is a trial's pod: headroom-<experiment>-<trial>, made safe.
func PodName(experiment, trialID string) string {
	return dnsName("headroom-" + experiment + "-" + trialID)
}

// podName is the name c gives the trial's pod.
func (c podConfig) podName(experiment string, trial model.Trial) string {
	if c.Name != "" {
		return c.Name
	}
	return PodName(experiment, trial.ID)
}

// meta is a trial's object metadata: the labels to select by and the
// annotations that keep the exact values.
func meta(name, experiment string, trial model.Trial, task model.Task, c podConfig) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:      name,
		Namespace: c.Namespace,
		Labels: map[string]string{
			LabelHeadroom:   "1",
			LabelExperiment: labelValue(experiment),
			LabelTrial:      labelValue(trial.ID),
			LabelTask:       labelValue(task.Name),
		},
		Annotations: map[string]string{
			LabelExperiment: experiment,
			LabelTrial:      trial.ID,
			LabelTask:       task.Name,
		},
	}
	if c.Owner != "" {
		m.Labels[LabelOwner] = labelValue(c.Owner)
		m.Annotations[LabelOwner] = c.Owner
	}
	if c.Keep {
		m.Labels[LabelKept] = "1"
	}
	return m
}

// containerPolicy is the policy the task's container is given: with the
// probe in it (PID 1 in place of the image's idle command, or beside it),
// the memory limit is the policy's plus the probe's own
// (model.DriverMemoryBytes), so that the task's processes have the whole
// limit, as the Docker backend's step driver gives them; and the request
// too, so that a pod whose request was its limit keeps the Guaranteed
// QoS class (the kubelet's -997 OOM score for all its processes, which
// the probe's raise of the steps reckons with): raised alone, the limit
// made it Burstable, the probe scored near 1000 beside its steps, and
// the kernel took it before a child at the limit (TestClusterChildKillSeen).
func (c podConfig) containerPolicy(p model.ResourcePolicy) model.ResourcePolicy {
	if (c.Probe || c.ProbeExec) && p.HardLimitBytes > 0 {
		p.HardLimitBytes += model.DriverMemoryBytes
		p.GuaranteeBytes += model.DriverMemoryBytes
	}
	return p
}

// Resources are the policy's: requests.memory the guarantee, limits.memory
// the hard limit (none uncapped), CPU the same way. A request above its
// limit is refused by the API server, so it is lowered to the limit.
func Resources(p model.ResourcePolicy) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	guarantee := p.GuaranteeBytes
	if p.HardLimitBytes > 0 {
		r.Limits[corev1.ResourceMemory] = *resource.NewQuantity(p.HardLimitBytes, resource.BinarySI)
		guarantee = min(guarantee, p.HardLimitBytes)
	}
	if guarantee > 0 {
		r.Requests[corev1.ResourceMemory] = *resource.NewQuantity(guarantee, resource.BinarySI)
	}
	cpuReq := p.GuaranteeCPUs
	if p.LimitCPUs > 0 {
		r.Limits[corev1.ResourceCPU] = *resource.NewMilliQuantity(milli(p.LimitCPUs), resource.DecimalSI)
		cpuReq = min(cpuReq, p.LimitCPUs)
	}
	if cpuReq > 0 {
		r.Requests[corev1.ResourceCPU] = *resource.NewMilliQuantity(max(milli(cpuReq), 1), resource.DecimalSI)
	}
	return r
}

func milli(cpus float64) int64 { return int64(cpus*1000 + 0.5) }

// userIDs reads a numeric "uid[:gid]"; a name cannot be a pod's
// runAsUser (the probe runs steps as it instead).
func userIDs(user string) (uid, gid *int64, ok bool) {
	u, g, hasG := strings.Cut(user, ":")
	n, err := strconv.ParseInt(u, 10, 64)
	if err != nil || n < 0 {
		return nil, nil, false
	}
	uid = &n
	if hasG {
		m, err := strconv.ParseInt(g, 10, 64)
		if err != nil || m < 0 {
			return nil, nil, false
		}
		gid = &m
	}
	return uid, gid, true
}

// builtinImage says the task runs in headroom's own image, whose binary
// is the probe.
func builtinImage(task model.Task) bool {
	return slices.Equal(task.IdleCommand, []string{wire.Binary, wire.IdleMode})
}

// probeCommand is the main container's command when the probe is PID 1.
func probeCommand(task model.Task, c podConfig) []string {
	bin := runner.TaskDriverPath
	if builtinImage(task) {
		bin = wire.Binary
	}
	every := c.Every
	if every <= 0 {
		every = 50 * time.Millisecond
	}
	return []string{bin, workload.ProbeMode, "--every", every.String()}
}

// Pod is a trial's pod: one container of the task's image with the
// policy's resources, restartPolicy Never, the task's environment, user
// and profile; with the probe, its binary as PID 1 (attached stdin); a
// compose task's other services as more containers (sidecars.go).
func Pod(experiment string, trial model.Trial, task model.Task, c podConfig) *corev1.Pod {
	name := c.podName(experiment, trial)
	ctr := corev1.Container{
		Name:            mainContainer,
		Image:           task.Image,
		ImagePullPolicy: c.Pull,
		Resources:       Resources(c.containerPolicy(trial.Policy)),
		WorkingDir:      task.WorkDir,
	}
	for _, kv := range append(task.HeadroomEnv(trial, false), task.Env...) {
		k, v, _ := strings.Cut(kv, "=")
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: k, Value: v})
	}
	ctr.SecurityContext = securityContext(task)
	if c.StepUser != "" && (c.Probe || c.ProbeExec) {
		// The probe is root, to run each step as its user (a pod's exec
		// has no user of its own to give).
		uid, gid := int64(0), int64(0)
		ctr.SecurityContext.RunAsUser, ctr.SecurityContext.RunAsGroup = &uid, &gid
	}
	spec := corev1.PodSpec{
		RestartPolicy:                 corev1.RestartPolicyNever,
		Containers:                    nil,
		AutomountServiceAccountToken:  new(bool),
		EnableServiceLinks:            new(bool),
		TerminationGracePeriodSeconds: new(int64),
	}
	if task.Hostname != "" && len(validation.IsDNS1123Label(task.Hostname)) == 0 {
		// The pod's host name is its containers' (compose's hostname:);
		// one that is no DNS label the API refuses, and the pod keeps its
		// own name.
		spec.Hostname = task.Hostname
	}
	if (c.Probe || c.ProbeExec) && !builtinImage(task) {
		// The probe's static binary, copied from the workload image by an
		// init container into an emptyDir the main container mounts.
		spec.Volumes = []corev1.Volume{{Name: probeVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		mount := corev1.VolumeMount{Name: probeVolume, MountPath: ProbeDir}
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: probeVolume, MountPath: ProbeDir, ReadOnly: true})
		no := false
		spec.InitContainers = []corev1.Container{{
			Name:            probeInstaller,
			Image:           c.ProbeImage,
			ImagePullPolicy: c.Pull,
			Command:         []string{wire.Binary, workload.CopySelfMode, ProbeDir},
			VolumeMounts:    []corev1.VolumeMount{mount},
			Resources:       ctr.Resources,
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		}}
	}
	probeMounted := len(spec.InitContainers) > 0
	ctr.VolumeMounts = append(ctr.VolumeMounts, volumeMounts(task.Volumes)...)
	spec.Volumes = append(spec.Volumes, trialVolumes(task)...)
	for i, at := range task.HarnessMounts {
		// A mount point where the task's harness bind-mounts its host's
		// directory (model.Task.HarnessMounts), as the Docker backend's
		// empty volumes there.
		name := fmt.Sprintf("harness-logs-%d", i+1)
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: at})
	}
	spec.HostAliases = hostAliases(task)
	switch {
	case c.Probe:
		ctr.Command, ctr.Args = probeCommand(task, c), nil
		ctr.Stdin, ctr.StdinOnce = true, false
	case task.ForeignHarness():
		// As the task's harness runs it: the image's ENTRYPOINT, the
		// idle command its argument (the probe, if any, is exec'd beside).
		ctr.Args = task.IdleCommand
		if c.StepUser != "" && c.ProbeExec {
			// The container runs as root for its probe: PID 1 becomes
			// the container's user first.
			ctr.Command = workload.AsArgv(runner.TaskDriverPath, c.StepUser, c.KeepHome, c.Entrypoint)
		}
	default:
		ctr.Command = task.IdleCommand
		if c.StepUser != "" && c.ProbeExec {
			ctr.Command = workload.AsArgv(runner.TaskDriverPath, c.StepUser, c.KeepHome, task.IdleCommand)
		}
	}
	if c.StepUser != "" && c.ProbeExec {
		// A user PID 1 cannot become ends it before the trial runs: its
		// words ("unable to find user ghost") are the start's error.
		ctr.TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	}
	spec.Containers = append([]corev1.Container{ctr}, sidecarContainers(task, c, probeMounted)...)
	m := meta(name, experiment, trial, task, c)
	if c.StepUser != "" && (c.Probe || c.ProbeExec) {
		// The console's shell opens as the steps' user too (Shell).
		m.Annotations[runner.LabelStepUser] = c.StepUser
		if c.KeepHome {
			m.Annotations[annotationKeepHome] = "1"
		}
	}
	if isolated(task) {
		m.Labels[LabelIsolated] = "1"
	}
	return &corev1.Pod{ObjectMeta: m, Spec: spec}
}

// isolated says whether a task's pod is shut off the network.
func isolated(task model.Task) bool {
	return task.Network == "none" || task.Network == model.NetworkTrialOnly
}

// ExperimentPolicyName is the name of the NetworkPolicy an experiment's
// run (its owner, this process) makes for its no-network pods: one per
// process, so a resumed run makes its own and the dead run's goes to the
// reaper with that run's pods.
func ExperimentPolicyName(experiment, owner string) string {
	return dnsName("headroom-" + experiment + "-no-network-" + owner)
}

// NetworkPolicy shuts a no-network task's pods off: no ingress, no egress
// (a compose task's services, in the pod, are on its localhost still).
// One per experiment and run, made before its first such pod: it selects
// every pod of the experiment labelled isolated (LabelIsolated), which
// only a no-network task's pod is; a pod of a task with a network is not
// selected. nil for a task with a network.
func NetworkPolicy(experiment string, task model.Task, c podConfig) *netv1.NetworkPolicy {
	if !isolated(task) {
		return nil
	}
	m := meta(ExperimentPolicyName(experiment, c.Owner), experiment, model.Trial{}, model.Task{}, c)
	for _, k := range []string{LabelTrial, LabelTask} {
		delete(m.Labels, k)
		delete(m.Annotations, k)
	}
	return &netv1.NetworkPolicy{
		ObjectMeta: m,
		Spec: netv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				LabelExperiment: labelValue(experiment),
				LabelIsolated:   "1",
			}},
			PolicyTypes: []netv1.PolicyType{netv1.PolicyTypeIngress, netv1.PolicyTypeEgress},
		},
	}
}

// securityContext is the trial container's: the task's user, its
// capabilities, and under the hardened profile every other capability
// dropped and no privilege gain.
func securityContext(task model.Task) *corev1.SecurityContext {
	sc := &corev1.SecurityContext{}
	if uid, gid, ok := userIDs(task.User); ok {
		sc.RunAsUser, sc.RunAsGroup = uid, gid
	}
	caps := &corev1.Capabilities{}
	for _, cp := range task.Capabilities {
		caps.Add = append(caps.Add, corev1.Capability(strings.TrimPrefix(strings.ToUpper(cp), "CAP_")))
	}
	if task.Hardened() {
		no := false
		sc.AllowPrivilegeEscalation = &no
		caps.Drop = []corev1.Capability{"ALL"}
	}
	if len(caps.Add) > 0 || len(caps.Drop) > 0 {
		sc.Capabilities = caps
	}
	return sc
}

// PolicyArgs are a policy's pod resources, for people.
func PolicyArgs(p model.ResourcePolicy) []string {
	r := Resources(p)
	var out []string
	for _, part := range []struct {
		name string
		l    corev1.ResourceList
	}{{"requests", r.Requests}, {"limits", r.Limits}} {
		for _, k := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU} {
			if v, ok := part.l[k]; ok {
				out = append(out, fmt.Sprintf("%s.%s=%s", part.name, k, v.String()))
			}
		}
	}
	return out
}

// Reproduce is the one line that runs image under p on a cluster outside
// headroom: kubectl run with the pod's resources.
func Reproduce(namespace string, t model.Task, image string, p model.ResourcePolicy) string {
	r := Resources(p)
	q := func(l corev1.ResourceList) string {
		var parts []string
		for _, k := range []corev1.ResourceName{corev1.ResourceMemory, corev1.ResourceCPU} {
			if v, ok := l[k]; ok {
				parts = append(parts, fmt.Sprintf("%q:%q", k, v.String()))
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	security := ""
	if t.Name != "" {
		if sc, err := json.Marshal(securityContext(t)); err == nil && string(sc) != "{}" {
			security = `,"securityContext":` + string(sc)
		}
	}
	overrides := fmt.Sprintf(`{"spec":{"containers":[{"name":"repro","image":%q,"stdin":true,"tty":true,"resources":{"requests":%s,"limits":%s}%s}]}}`,
		image, q(r.Requests), q(r.Limits), security)
	return fmt.Sprintf("kubectl run repro -n %s --rm -it --restart=Never --image=%s --overrides=%s -- sh", printable.ShellWord(namespace), printable.ShellWord(image), printable.ShellWord(overrides))
}
