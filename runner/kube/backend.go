package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	netv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/kmsg"
	"github.com/headroom-eval/headroom/workload"
	"github.com/headroom-eval/headroom/workload/wire"
)

// How long the backend waits, at most, on the cluster.
const (
	// helloWait bounds the wait for the probe's first answer once attached.
	helloWait = 30 * time.Second
	// goneWait bounds the wait for a deleted pod to be gone.
	goneWait = 2 * time.Minute
	// answerWait bounds a probe's answer that needs no step.
	answerWait = 5 * time.Second
)

// backend starts trials' pods.
type backend struct {
	p          *Platform
	opts       runner.SandboxOptions
	probe      bool
	probeImage string // the workload image, for task images' init container

	// On a cluster whose node is this machine, the kernel's log names
	// what each kill killed; kills are matched to pods by container id.
	stop      chan struct{}
	kernelLog bool
	mu        sync.Mutex
	byCID     map[string]*sandbox

	// policies are the experiments' NetworkPolicies (one per experiment
	// with a no-network task), made at the first such start and deleted
	// at Close.
	polMu    sync.Mutex
	policies map[string]*expPolicy

	// watchOnce starts the one watch of the trials' pods (podWatch) at
	// the first start.
	watchOnce sync.Once
	watch     *podWatch

	// metricsAPI: whether the cluster serves metrics.k8s.io, as last
	// asked (once per backend; a "no" is asked again after a while).
	metricsMu    sync.Mutex
	metricsErr   error
	metricsAsked time.Time
}

// podWatch is the backend's shared watch of its pods, started at first use.
func (b *backend) podWatch() *podWatch {
	b.watchOnce.Do(func() { b.watch = b.p.startPodWatch(b.stop) })
	return b.watch
}

// metricsReAsk is how long a cluster's "no metrics API" is believed.
const metricsReAsk = 30 * time.Second

// metricsServed says whether the cluster serves the metrics API (nil) or
// why not: asked once per backend, not per trial.
func (b *backend) metricsServed() error {
	b.metricsMu.Lock()
	defer b.metricsMu.Unlock()
	if !b.metricsAsked.IsZero() && (b.metricsErr == nil || time.Since(b.metricsAsked) < metricsReAsk) {
		return b.metricsErr
	}
	if b.p.metricsServed != nil {
		b.metricsErr = b.p.metricsServed()
	} else {
		_, b.metricsErr = b.p.cs.Discovery().ServerResourcesForGroupVersion("metrics.k8s.io/v1beta1")
	}
	b.metricsAsked = time.Now()
	return b.metricsErr
}

// Sandboxes opens the backend that starts trials' pods. With the probe on
// and headroom's own executable known, task images get the probe too,
// copied from the workload image by an init container.
func (p *Platform) Sandboxes(ctx context.Context, opts runner.SandboxOptions) (runner.Backend, error) {
	if opts.SampleEvery <= 0 {
		opts.SampleEvery = 50 * time.Millisecond
	}
	if err := p.checkRights(ctx); err != nil {
		return nil, err
	}
	b := &backend{p: p, opts: opts, probe: p.set[OptProbe] != "off" && !opts.ForceStats, stop: make(chan struct{}), byCID: map[string]*sandbox{}}
	if p.Describe().Local {
		b.kernelLog = kmsg.Watch("/dev/kmsg", b.stop, b.kernelKill)
	}
	if b.probe && opts.Exe != "" {
		// Task images get the probe from the workload image: made (and
		// put on the cluster) here when no built-in task needed it.
		if ref, err := p.WorkloadImage(ctx, opts.Exe, false, func(string) {}); err == nil {
			b.probeImage = ref
		}
	}
	return b, nil
}

// expPolicy is one experiment's NetworkPolicy: made once, its create
// serialised so the trials starting at once wait for the first's.
type expPolicy struct {
	mu   sync.Mutex
	name string
	made bool
}

// isolate makes sure the experiment's NetworkPolicy exists before a
// no-network pod of it is created: made by the first such start (an
// AlreadyExists is this run's own, from a create retried: the name is
// the run's), the others waiting on it. A failed create fails the start,
// and the next start tries again.
func (b *backend) isolate(ctx, cctx context.Context, experiment string, np *netv1.NetworkPolicy) error {
	b.polMu.Lock()
	if b.policies == nil {
		b.policies = map[string]*expPolicy{}
	}
	ep := b.policies[experiment]
	if ep == nil {
		ep = &expPolicy{}
		b.policies[experiment] = ep
	}
	b.polMu.Unlock()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.made {
		return nil
	}
	p := b.p
	err := p.slowCall(ctx, "creating network policy "+np.Name, func() error {
		_, err := p.cs.NetworkingV1().NetworkPolicies(p.ns).Create(cctx, np, metav1.CreateOptions{})
		return err
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create network policy %s: %w", np.Name, err)
	}
	ep.name, ep.made = np.Name, true
	return nil
}

// dropPolicies deletes the experiments' NetworkPolicies at the end of the
// run (all its trials removed), unless kept: a policy whose experiment
// still has a pod of this run (one whose removal failed) stays for it,
// and the reaper removes both once this run is gone.
func (b *backend) dropPolicies() error {
	b.polMu.Lock()
	eps := b.policies
	b.policies = nil
	b.polMu.Unlock()
	var errs []error
	for experiment, ep := range eps {
		ep.mu.Lock()
		name, made := ep.name, ep.made
		ep.mu.Unlock()
		if !made {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		sel := labels.Set{LabelExperiment: labelValue(experiment), LabelIsolated: "1", LabelOwner: labelValue(b.p.owner)}.String()
		pods, err := b.p.cs.CoreV1().Pods(b.p.ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil && len(pods.Items) == 0 {
			err = b.p.Remove(ctx, runner.OwnedResource{ID: name, Kind: KindNetworkPolicy})
		}
		cancel()
		if err != nil {
			errs = append(errs, fmt.Errorf("network policy %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// Close ends the pods' watch and deletes the experiments' NetworkPolicies
// (kept with --keep, as the pods are).
func (b *backend) Close() error {
	close(b.stop)
	if b.opts.Keep {
		return nil
	}
	return b.dropPolicies()
}

// ReadsKernelLog says whether kills will carry the killed process's name.
func (b *backend) ReadsKernelLog() bool { return b.kernelLog }

// kernelKill hands a kill from the kernel's log to its pod.
func (b *backend) kernelKill(k kmsg.Kill) {
	if k.ContainerID == "" {
		return
	}
	b.mu.Lock()
	sb := b.byCID[k.ContainerID]
	b.mu.Unlock()
	if sb != nil {
		sb.kernelOOM(k.At(time.Now()), k)
	}
}

// idleCommands are the idle commands the probe may replace: a task that
// names its own (a service as PID 1) keeps it.
var idleCommands = [][]string{{"sleep", "infinity"}, {"sh", "-c", "sleep infinity"}}

// usesProbe says whether a task's pod runs the probe as its PID 1 and,
// when it cannot (a task from another harness keeps its image's
// ENTRYPOINT, a task names its own idle command), whether the probe is
// exec'd beside PID 1 instead: it reads the same container cgroup either
// way, so a real task's trial is sampled as finely as a built-in one.
//
// A task granted SYS_PTRACE (or ALL) gets no probe: its processes could
// read the probe's channel and answer for it (forge a step's exit, a
// reward read), so its steps go by exec and its memory by the metrics
// API, as on Docker, where such a task's steps go by the engine's exec.
func (b *backend) usesProbe(task model.Task) (pid1, exec bool) {
	if !b.probe || runner.TracingCapability(task) != "" {
		return false, false
	}
	if builtinImage(task) {
		return true, false
	}
	if b.probeImage == "" {
		return false, false
	}
	if !task.ForeignHarness() && slices.ContainsFunc(idleCommands, func(c []string) bool { return slices.Equal(c, task.IdleCommand) }) {
		return true, false
	}
	return false, true
}

// Start creates the trial's pod (and, at its experiment's first
// no-network trial, the experiment's NetworkPolicy), waits until it
// runs — telling req.Waiting why it does not yet — and attaches
// to its probe. Whatever it made is deleted when it fails or ctx ends.
// An API server that does not answer is waited for, with backoff, and
// the start tried again; past the bound the error wraps
// runner.ErrPlatformGone (the sweep stops, to be resumed).
func (b *backend) Start(ctx context.Context, req runner.StartRequest) (runner.Sandbox, error) {
	experiment, trial, task := req.Experiment, req.Trial, req.Task
	// What the start waits for that is not the task's: said, and kept as
	// the trial's queue time (QueuedFor; a failed start's WaitedError).
	w := &startWait{tell: req.Wait}
	ctx = withStartWait(ctx, w)
	n := 1
	name := keptName(experiment, trial.ID, n)
	for try := 1; ; try++ {
		sb, err := b.start(ctx, name, experiment, trial, task)
		if errors.Is(err, errKeptName) && n < maxKeptNames {
			n++
			name, try = keptName(experiment, trial.ID, n), try-1
			continue
		}
		if err == nil {
			return sb, nil
		}
		if ctx.Err() != nil || !unreachable(err) || errors.Is(err, runner.ErrPlatformGone) {
			return nil, w.wrap(err)
		}
		if try == 5 {
			// It answers a ping but no start (a server that flaps).
			return nil, w.wrap(fmt.Errorf("the kubernetes API server %s answers but cut off %d starts (%v): %w", b.p.host, try, err, runner.ErrPlatformGone))
		}
		if werr := b.p.waitAPI(ctx, err); werr != nil {
			return nil, w.wrap(werr)
		}
		// Back: what the failed start may have left goes first.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		if b.p.Remove(cctx, runner.OwnedResource{ID: name, Kind: KindPod}) == nil {
			_ = b.p.waitGone(cctx, name)
		}
		cancel()
	}
}

func (b *backend) start(ctx context.Context, name, experiment string, trial model.Trial, task model.Task) (runner.Sandbox, error) {
	p := b.p
	if err := sidecarRefusal(task); err != nil {
		return nil, err
	}
	if len(task.AllowedHosts) > 0 || task.AgentNetwork != nil || task.VerifierNetwork != nil || task.SeparateVerifier != nil {
		// Never silently open: an allowlist and a phase's own network
		// are enforced by the Docker backend's helpers only.
		return nil, fmt.Errorf("task %s: allowed_hosts, a phase's own network_mode and a separate verifier are run on the docker backend only; use --backend docker", task.Name)
	}
	pid1, execd := b.usesProbe(task)
	stepUser, keepHome, entrypoint := b.stepUser(ctx, task, pid1, execd)
	c := podConfig{Name: name, Namespace: p.ns, Owner: p.owner, Keep: b.opts.Keep, Probe: pid1, ProbeExec: execd, StepUser: stepUser, KeepHome: keepHome, Entrypoint: entrypoint, ProbeImage: b.probeImage, Every: b.opts.SampleEvery, Pull: p.pullPolicy()}
	pod := Pod(experiment, trial, task, c)
	np := NetworkPolicy(experiment, task, c)
	// Creation runs to completion even when ctx ends, so that what it made
	// is known and removed.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	// The container's own limit (the probe's memory beside it): what a
	// resize is told from, and what its peak reaches at a kill.
	sb := newSandbox(b, pod.Name, task, c.containerPolicy(trial.Policy))
	sb.trial = trial.ID
	sb.probing, sb.besidePID1 = c.Probe || c.ProbeExec, c.ProbeExec
	sb.stepUser, sb.keepHome = stepUser, keepHome
	// Followed from before its creation to its removal (Remove ends it).
	sb.sub = b.podWatch().subscribe(pod.Name)
	if np != nil {
		made := runner.TimePhase(trial.ID, "create: network policy")
		err := b.isolate(ctx, cctx, experiment, np)
		made()
		if err != nil {
			sb.sub.close()
			return nil, err
		}
	}
	var created *corev1.Pod
	podMade := runner.TimePhase(trial.ID, "create: pod")
	err := p.slowCall(ctx, "creating pod "+pod.Name, func() (err error) {
		created, err = p.cs.CoreV1().Pods(p.ns).Create(cctx, pod, metav1.CreateOptions{})
		return err
	})
	kept := false
	if apierrors.IsAlreadyExists(err) {
		var removed bool
		if removed, kept = p.removeDeadNamesake(cctx, pod.Name); removed {
			// A headroom killed mid-trial left it (a resume runs the trial
			// again under the same name).
			created, err = p.cs.CoreV1().Pods(p.ns).Create(cctx, pod, metav1.CreateOptions{})
		}
	}
	if apierrors.IsAlreadyExists(err) {
		// The namesake is not this trial's to remove (kept, or a live
		// headroom's).
		sb.sub.close()
		if kept {
			return nil, errKeptName
		}
		return nil, fmt.Errorf("create pod %s in %s: %w", pod.Name, p.ns, err)
	}
	if err != nil {
		sb.deleteAll(context.WithoutCancel(ctx))
		sb.sub.close()
		return nil, fmt.Errorf("create pod %s in %s: %w", pod.Name, p.ns, err)
	}
	podMade()
	sb.created = time.Now()
	sb.sub.follow(created.UID)
	sb.wait = waitOf(ctx)
	ran := runner.TimePhase(trial.ID, "create → running")
	running, err := b.waitRunning(ctx, trial.ID, created, sb.sub, &sb.wait.held)
	if err == nil && len(task.Sidecars) > 0 {
		running, err = b.waitSidecars(ctx, running, sb.sub, task)
	}
	ran()
	if err != nil {
		_, _ = sb.Remove(context.WithoutCancel(ctx))
		return nil, err
	}
	sb.running = time.Now()
	pidsRead := runner.TimePhase(trial.ID, "pids limit")
	sb.pidsEnforced = p.pidsLimitEnforced(ctx, running.Spec.NodeName, trial.Policy.PidsLimit)
	pidsRead()
	sb.containerID = containerID(running)
	sb.last = running
	if sb.containerID != "" {
		b.mu.Lock()
		b.byCID[sb.containerID] = sb
		b.mu.Unlock()
	}
	sb.watching = true
	go sb.watchPod()
	if c.Probe || c.ProbeExec {
		var probe []string // attach to PID 1
		if c.ProbeExec {
			probe = probeCommand(task, c)
		}
		attached := runner.TimePhase(trial.ID, "attach")
		err := sb.attach(probe)
		attached()
		if err != nil && stepUser != "" {
			// The pod runs as root for its probe: without it, a step
			// would run as root, not as the container's user.
			_, _ = sb.Remove(context.WithoutCancel(ctx))
			return nil, fmt.Errorf("%w: its steps run as %s through the probe, and without it would run as root", err, stepUser)
		}
		if err != nil {
			sb.source = "none"
			sb.why = err.Error()
		}
		if err == nil && stepUser != "" {
			// A user the image does not know ends the start, in the
			// runtime's words, as it ends a container whose USER it is.
			if err := sb.checkStepUser(ctx); err != nil {
				_, _ = sb.Remove(context.WithoutCancel(ctx))
				return nil, fmt.Errorf("start pod %s: %w", pod.Name, err)
			}
		}
	}
	if sb.drv == nil {
		sb.startMetrics()
	}
	if task.Healthcheck != nil {
		// Harbor runs the task's check before the agent's setup, as the
		// Docker backend does; a failure is the environment's.
		if err := runner.WaitHealthy(ctx, sb, *task.Healthcheck, runner.HealthWait()); err != nil {
			err = sb.killedStarting(err, "the task's [environment.healthcheck] ("+strings.Join(task.Healthcheck.Argv(), " ")+")")
			_, _ = sb.Remove(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return sb, nil
}

// startingUp are the waits of every pod's start: not worth an event.
var startingUp = map[string]bool{"pending": true, "ContainerCreating": true, "PodInitializing": true}

// waitRunning follows the pod until its main container runs, reporting
// why it waits (each change once) and failing at what it will not recover
// from.
// unscheduled adds up the time the scheduler held the pod (unschedulable
// or not yet scheduled).
func (b *backend) waitRunning(ctx context.Context, trial string, pod *corev1.Pod, sub *podSub, unscheduled *time.Duration) (*corev1.Pod, error) {
	said := ""
	var heldSince time.Time
	// Phase timings: the scheduler's part (placed on a node), then the
	// kubelet's (sandbox, network, container started, its status back).
	scheduled := runner.TimePhase(trial, "create → scheduled")
	var started func()
	defer func() {
		if !heldSince.IsZero() {
			*unscheduled += time.Since(heldSince)
		}
	}()
	check := func(pod *corev1.Pod) (bool, error) {
		if started == nil && pod.Spec.NodeName != "" {
			scheduled()
			started = runner.TimePhase(trial, "scheduled → running")
		}
		pr := Progress(pod)
		held := strings.HasPrefix(pr.Waiting, "unschedulable") || strings.HasPrefix(pr.Waiting, "not scheduled")
		switch {
		case held && heldSince.IsZero():
			heldSince = time.Now()
		case !held && !heldSince.IsZero():
			*unscheduled += time.Since(heldSince)
			heldSince = time.Time{}
		}
		if pr.Err != nil {
			return false, pr.Err
		}
		if pr.Running {
			if started != nil {
				started()
			}
			return true, nil
		}
		if pr.Waiting != "" && pr.Waiting != said && !startingUp[pr.Waiting] {
			said = pr.Waiting
			waitOf(ctx).say("waiting: " + pr.Waiting)
		}
		return false, nil
	}
	return b.watchUntil(ctx, pod, sub, "before it ran", check)
}

// waitSidecars follows the pod, whose task's container runs, until the
// compose services it waits for have reached their conditions, bounded
// as the Docker backend bounds its wait.
func (b *backend) waitSidecars(ctx context.Context, pod *corev1.Pod, sub *podSub, task model.Task) (*corev1.Pod, error) {
	ctx, cancel := context.WithTimeout(ctx, sidecarWaitLimit)
	defer cancel()
	said := false
	got, err := b.watchUntil(ctx, pod, sub, "before its services were ready", func(p *corev1.Pod) (bool, error) {
		if st := containerStatus(p, mainContainer); st == nil || st.State.Running == nil {
			return false, fmt.Errorf("pod %s: the task's container ended while its services started", p.Name)
		}
		ok, err := sidecarsReady(p, task)
		if !ok && err == nil && !said {
			said = true
			waitOf(ctx).tell("waiting: the task's compose services")
		}
		return ok, err
	})
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("pod %s: its compose services were not ready after %s", pod.Name, sidecarWaitLimit)
	}
	return got, err
}

// watchUntil follows a pod on the shared watch until check says it is
// done (or fails): what a pod deleted meanwhile fails with says what it
// was deleted before. The shared watch tells each change (subscribed
// before the pod was made: none is missed); with no news for a while and
// the watch not open, or broken since the last look, the pod is looked
// at directly. A look that fails (an API server restarting, a timeout, a
// 5xx) is tried again with the backoff of an API server gone
// (apiwait.go), the watch still heard meanwhile; only past its bound
// does the start fail: with runner.ErrPlatformGone when the server did
// not answer at all, else with the last error.
func (b *backend) watchUntil(ctx context.Context, pod *corev1.Pod, sub *podSub, before string, check func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	pods := b.p.cs.CoreV1().Pods(b.p.ns)
	name := pod.Name
	if ok, err := check(pod); ok || err != nil {
		return pod, err
	}
	poll := time.NewTimer(pollAfter)
	defer poll.Stop()
	last := pod
	var bo *apiBackoff // while looks fail
	var failing time.Time
	for {
		cur, gone, changed := sub.latest()
		if gone {
			return nil, fmt.Errorf("pod %s was deleted %s", name, before)
		}
		if cur != nil && cur != last {
			last = cur
			if ok, err := check(cur); ok || err != nil {
				return cur, err
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-changed:
		case <-poll.C:
			// A look that failed is tried again on its backoff.
			if bo == nil && !sub.mustLook() {
				poll.Reset(pollEvery)
				continue
			}
			cur, err := pods.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if apierrors.IsNotFound(err) {
					return nil, fmt.Errorf("pod %s was deleted %s", name, before)
				}
				if bo == nil {
					bo, failing = b.p.backoff(), time.Now()
				}
				wait, ok := bo.next()
				switch {
				case !ok && unreachable(err):
					return nil, b.p.gone(bo.bound, err)
				case !ok:
					return nil, fmt.Errorf("pod %s: looked at for %s, the API server failed every time: %w", name, bo.bound, err)
				}
				if unreachable(err) {
					waitOf(ctx).say("waiting: the kubernetes API server does not answer")
				}
				poll.Reset(wait)
				continue
			}
			if bo != nil {
				// The looks failed this long: the API server's time.
				w := waitOf(ctx)
				w.since(failing, &w.api)
			}
			bo = nil
			if ok, err := check(cur); ok || err != nil {
				return cur, err
			}
			poll.Reset(pollEvery)
		}
	}
}

// removeDeadNamesake deletes the pod of that name when the headroom that
// made it is gone and it was not kept, waiting until it is gone; kept
// says it is one a run kept (--keep), left alone.
func (p *Platform) removeDeadNamesake(ctx context.Context, name string) (removed, kept bool) {
	pod, err := p.cs.CoreV1().Pods(p.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, false
	}
	o := owned(KindPod, pod.ObjectMeta)
	if pod.Labels[LabelHeadroom] == "" || o.Kept || o.OwnerAlive {
		return false, pod.Labels[LabelHeadroom] != "" && o.Kept
	}
	if err := p.Remove(ctx, o); err != nil {
		return false, false
	}
	return p.waitGone(ctx, name) == nil, false
}

// waitGoneSub waits, on the shared watch, until the pod no longer exists,
// looking at it directly when the watch is silent for a while and not
// open, or broken since.
func (p *Platform) waitGoneSub(ctx context.Context, sub *podSub) error {
	ctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	poll := time.NewTimer(pollAfter)
	defer poll.Stop()
	for {
		_, gone, changed := sub.latest()
		if gone {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pod %s is still there after %s", sub.name, goneWait)
		case <-changed:
		case <-poll.C:
			if !sub.mustLook() {
				poll.Reset(pollEvery)
				continue
			}
			if _, err := p.cs.CoreV1().Pods(p.ns).Get(ctx, sub.name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return nil
			} else if err != nil && ctx.Err() == nil {
				return fmt.Errorf("pod %s: %w", sub.name, err)
			}
			poll.Reset(pollEvery)
		}
	}
}

// waitGone waits until the pod no longer exists (a pod no trial follows).
func (p *Platform) waitGone(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, goneWait)
	defer cancel()
	pods := p.cs.CoreV1().Pods(p.ns)
	sel := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()}
	for {
		w, err := pods.Watch(ctx, sel)
		if err != nil {
			return fmt.Errorf("pod %s is not gone: %w", name, err)
		}
		gone, err := func() (bool, error) {
			defer w.Stop()
			if _, err := pods.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				return true, nil
			} else if err != nil {
				return true, fmt.Errorf("pod %s: %w", name, err)
			}
			for {
				select {
				case <-ctx.Done():
					return true, fmt.Errorf("pod %s is still there after %s", name, goneWait)
				case ev, ok := <-w.ResultChan():
					if !ok {
						return false, nil
					}
					if got, ok := ev.Object.(*corev1.Pod); ok && got.Name == name && ev.Type == watch.Deleted {
						return true, nil
					}
				}
			}
		}()
		if gone {
			return err
		}
	}
}

// probeBinary is where the probe's binary is in the sandbox ("" without).
func (s *sandbox) probeBinary() string {
	switch {
	case builtinImage(s.task):
		return wire.Binary
	case s.probing:
		return runner.TaskDriverPath
	}
	return ""
}

// attach connects to the probe and waits for its hello: PID 1's stdin and
// stdout, or with argv, a probe exec'd beside PID 1.
func (s *sandbox) attach(argv []string) error {
	pr, pw := io.Pipe()
	or, ow := io.Pipe()
	d := newProbeConn(pw)
	d.onSample = s.probeSample
	d.onHello = func(l workload.ProbeLine) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if l.Version > 0 {
			s.source = fmt.Sprintf("probe-cgroup-v%d", l.Version)
		} else {
			s.source, s.why = "none", "the probe found no cgroup: "+l.Text
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stopAttach = cancel
	go d.read(or)
	go func() {
		var err error
		if argv != nil {
			_, err = s.b.p.streams().Exec(ctx, s.pod, mainContainer, argv, pr, ow, io.Discard)
		} else {
			err = s.b.p.streams().Attach(ctx, s.pod, mainContainer, pr, ow, io.Discard)
		}
		ow.CloseWithError(err)
		pr.CloseWithError(io.EOF)
	}()
	if _, err := d.quick(workload.OpHello, helloWait); err != nil {
		cancel()
		<-d.ended
		return fmt.Errorf("the probe in pod %s did not answer: %w", s.pod, err)
	}
	s.drv = d
	return nil
}
