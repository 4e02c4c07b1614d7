package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/kmsg"
	"github.com/headroom-eval/headroom/workload"
)

// Sample sources, as recorded on each trial.
const (
	// SourceMetrics: the metrics API (metrics-server), every few seconds.
	SourceMetrics = "k8s-metrics"
	// SourceNone: nothing could read the pod's memory.
	SourceNone = "none"
)

// metricsEvery is how often the metrics API is asked (metrics-server
// itself scrapes every 15 s or so). The first ask is one period after
// the pod runs, not at once: metrics-server has a pod's first figure
// only after two of its scrapes (10–20 s in), so an ask at the start was
// one API request a trial (kube-scale: 4.11 requests a trial with
// metrics-server up, 3.11 without) that never had an answer.
var metricsEvery = 5 * time.Second

// sandbox is one trial's pod.
type sandbox struct {
	b      *backend
	pod    string
	trial  string // the trial's id (phase timings)
	task   model.Task
	policy model.ResourcePolicy

	containerID string
	// pidsEnforced is the pod's pids limit when not the policy's
	// (Final.PidsLimitEnforced).
	pidsEnforced string
	probing      bool // the pod runs the probe
	// besidePID1: the probe was exec'd beside the task's own PID 1; it
	// samples, but steps go by the API server's exec as the task's own
	// harness runs them (the probe takes a step only to switch users, and
	// every step where the pod runs as root for it: stepUser).
	besidePID1 bool
	drv        *probeConn
	stopAttach context.CancelFunc
	// stepUser: the pod runs as root and its probe runs every step as
	// this user, a step naming a user as that one ("" the container's
	// own: stepuser.go). keepHome: the container's environment sets HOME.
	stepUser string
	keepHome bool

	// sub follows the pod on the backend's shared watch.
	sub *podSub

	samples chan event.Sample
	ooms    chan runner.OOMSignal
	quit    chan struct{}
	watched chan struct{} // closed when watchPod has returned
	// watching: watchPod runs; feeders: the metrics sampler runs.
	watching bool
	feeders  sync.WaitGroup

	// When the pod was created and ran (for the record and the report),
	// and what its start waited for that is not the task's time (the
	// scheduler holding it, the API server not answering).
	created, running time.Time
	wait             *startWait

	mu          sync.Mutex
	source, why string
	last        *corev1.Pod // the pod as last seen
	closed      bool
	probeKills  int
	statusKills int
	kernelKills int
	kills       runner.KillCount
	lastCPU     model.CPUUse
	lastAt      time.Time
	haveCPU     bool
	// firstCPU is closed at the probe's first reading.
	firstCPU chan struct{}
	dropped  int
	// maxPeak is the largest usage the kernel's peak or a sample showed.
	maxPeak int64
	// removing: headroom itself is deleting the pod; killedBy: someone
	// else did (Final.KilledBy).
	removing bool
	killedBy string
	// killing: headroom told the probe to kill everything (Kill): its
	// stream's end is headroom's doing. goneBeforeKill: the probe's
	// stream had ended already when Kill came (the kill was not what
	// ended it).
	killing, goneBeforeKill bool
	// driverSaid: the probe's own OOM kill was signalled (once).
	driverSaid bool
	// limitChange says how the task container's memory limit moved away
	// from the policy's (an in-place resize of the pod); "" while it holds.
	limitChange string
	// frozenFor is how long the probe's readings stopped (its container
	// frozen on its node), lastProbeAt its last reading's time.
	frozenFor   time.Duration
	lastProbeAt time.Time
	// Who the pod's exec runs as (execRunsAs), once read.
	execUID, execName string
	execUserRead      bool
}

func newSandbox(b *backend, pod string, task model.Task, policy model.ResourcePolicy) *sandbox {
	return &sandbox{
		b: b, pod: pod, task: task, policy: policy,
		samples:  make(chan event.Sample, 256),
		ooms:     make(chan runner.OOMSignal, 16),
		quit:     make(chan struct{}),
		watched:  make(chan struct{}),
		firstCPU: make(chan struct{}),
	}
}

func (s *sandbox) ID() string                    { return s.pod }
func (s *sandbox) Samples() <-chan event.Sample  { return s.samples }
func (s *sandbox) OOMs() <-chan runner.OOMSignal { return s.ooms }

// SampleSource says where readings come from: "probe-cgroup-v1/v2" (the
// probe in the pod), "k8s-metrics" or "none".
func (s *sandbox) SampleSource() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.source
}

// PeakMode: the probe's samples are instants (cgroup.PeakSamples): a
// pod's cgroup file system is read-only, so its mark cannot be reset per
// sample, and the probe's sample line carries none; a step's peak is the
// probe's answer at its end (TakeKernelPeak). "" without the probe.
func (s *sandbox) PeakMode() string {
	if strings.HasPrefix(s.SampleSource(), "probe-cgroup") {
		return cgroup.PeakSamples
	}
	return ""
}

// SampleSourceWhy says why the probe is not the source, when it is not.
func (s *sandbox) SampleSourceWhy() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.why
}

// StepRunner: "driver" through the probe, else "exec".
func (s *sandbox) StepRunner() string {
	if s.drv != nil && !s.b.opts.ExecSteps && (!s.besidePID1 || s.stepUser != "") {
		return runner.StepsByDriver
	}
	return runner.StepsByExec
}

// QueuedFor is how long the start waited for what is not the task's: the
// scheduler holding the pod (unschedulable), the API server not answering
// (runner.QueueWaiter): the trial's queue time, not its own.
func (s *sandbox) QueuedFor() time.Duration {
	if s.wait == nil {
		return 0
	}
	return s.wait.total()
}

// StartLatency is the time from the pod's creation to its running.
func (s *sandbox) StartLatency() time.Duration { return s.running.Sub(s.created) }

// signal records kills from one source and reports the new total when it
// grew (the largest any one source has seen).
func (s *sandbox) signal(at time.Time, source string, update func()) {
	s.signalKill(at, source, kmsg.Kill{}, update)
}

// signalKill is signal with what the kernel's log says was killed: a
// kill already counted from a faster source is passed on again with it.
func (s *sandbox) signalKill(at time.Time, source string, k kmsg.Kill, update func()) {
	s.signalKills(at, source, k, false, update)
}

// signalKills is signalKill with driver: the kill took the probe, PID 1
// (runner.OOMSignal.Driver), passed on again where a faster source had
// counted it.
func (s *sandbox) signalKills(at time.Time, source string, k kmsg.Kill, driver bool, update func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	update()
	if s.closed {
		return
	}
	before := s.kills.Count()
	n, ok := s.kills.Seen(max(s.probeKills, s.statusKills, s.kernelKills), k.Process != "" || driver)
	if !ok {
		return
	}
	words := 0
	if source == "kernel" {
		words = s.kernelKills // the log's words, one a kill, in order
	}
	for _, o := range runner.KillSignals(runner.OOMSignal{Time: at, Source: source, Count: n, Process: k.Process, PID: k.PID, RSSBytes: k.RSSBytes, UsageBytes: k.UsageBytes, ShmemBytes: k.ShmemBytes, Driver: driver}, before, words) {
		select {
		case s.ooms <- o:
		default:
		}
	}
}

// kernelOOM takes a kill from the kernel's log (a node that is this
// machine): it names the process.
func (s *sandbox) kernelOOM(at time.Time, k kmsg.Kill) {
	s.signalKill(at, "kernel", k, func() { s.kernelKills++ })
}

// probeOOMKilled says whether the pod shows its probe, PID 1 of the task's
// container and the step driver, OOM-killed: the container ended by
// SIGKILL (exit 137) with the runtime's OOMKilled reason, and nobody else
// ended it — not headroom's kill (the probe kills every process and exits
// 137 then, OOMKilled too where a step's process was killed before)
// unless the probe's stream had ended before it, not the pod's deletion
// or eviction. No process in the container can send its PID 1 a SIGKILL
// (the kernel drops it), so the OOM killer is what is left. As Docker's
// process watch names the driver by its pid (runner.RoleDriver), this is
// a kube trial's driver-killed (model.CauseDriverKilled). Called with mu
// held.
func (s *sandbox) probeOOMKilled(pod *corev1.Pod) bool {
	if !s.probing || s.besidePID1 || s.removing || s.killedBy != "" || (s.killing && !s.goneBeforeKill) {
		return false
	}
	t, ok := mainExit(pod)
	return ok && t.ExitCode == 137 && t.Reason == ReasonOOMKilled && deletedFrom(pod) == ""
}

// probeSample turns one of the probe's readings into a sample.
func (s *sandbox) probeSample(l workload.ProbeLine) {
	now := time.Now()
	at := l.Time
	if d := now.Sub(at); d < -5*time.Second || d > 5*time.Second {
		at = now // a node whose clock is off
	}
	m := l.Reading
	if m.OOMKills > 0 {
		s.signal(at, "probe", func() { s.probeKills = max(s.probeKills, m.OOMKills) })
	}
	ws := max(m.Usage-m.InactiveFile, 0)
	sm := event.Sample{Time: at, UsageBytes: m.Usage, WorkingSetBytes: ws, CacheBytes: m.Usage - ws, MajorFaults: m.MajorFaults, ShmemBytes: m.Shmem, CPU: m.CPU}
	s.mu.Lock()
	if !s.lastAt.IsZero() && m.CPU.UsageNanos > 0 && at.After(s.lastAt) {
		sm.CPUCores = float64(m.CPU.UsageNanos-s.lastCPU.UsageNanos) / float64(at.Sub(s.lastAt).Nanoseconds())
	}
	if !s.haveCPU {
		close(s.firstCPU)
	}
	if !s.lastProbeAt.IsZero() && l.Time.Sub(s.lastProbeAt) > probeFreezeGap {
		// The probe reads every period: readings this far apart mean its
		// container was frozen (paused on its node) in between.
		s.frozenFor += l.Time.Sub(s.lastProbeAt)
	}
	s.lastProbeAt = l.Time
	s.lastCPU, s.lastAt, s.haveCPU = m.CPU, at, true
	s.maxPeak = max(s.maxPeak, m.Usage)
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return
	}
	select {
	case s.samples <- sm:
	case <-s.quit:
	default:
		s.mu.Lock()
		s.dropped++
		s.mu.Unlock()
	}
}

// watchPod follows the pod's status (on the backend's shared watch) for
// its PID 1's OOM kill and a deletion from outside until the sandbox is
// removed.
func (s *sandbox) watchPod() {
	defer close(s.watched)
	var last *corev1.Pod
	for {
		pod, gone, changed := s.sub.latest()
		if pod != nil && pod != last {
			last = pod
			s.seen(pod)
		}
		if gone {
			s.outside(deletedOutside)
		}
		select {
		case <-s.quit:
			return
		case <-changed:
		}
	}
}

// seen takes a newer state of the pod.
func (s *sandbox) seen(pod *corev1.Pod) {
	s.mu.Lock()
	s.last = pod
	if s.limitChange == "" {
		if now, ok := memoryLimit(pod); ok && now != s.policy.HardLimitBytes {
			s.limitChange = limitText(s.policy.HardLimitBytes) + " to " + limitText(now) + " (the pod resized in place)"
		}
	}
	s.mu.Unlock()
	if by := deletedFrom(pod); by != "" {
		s.outside(by)
	}
	if OOMKilled(pod) {
		at := time.Now()
		if t, ok := mainExit(pod); ok && !t.FinishedAt.IsZero() {
			at = t.FinishedAt.Time
		}
		s.mu.Lock()
		driver := !s.driverSaid && s.probeOOMKilled(pod)
		s.driverSaid = s.driverSaid || driver
		s.mu.Unlock()
		s.signalKills(at, "pod-status", kmsg.Kill{}, driver, func() {
			n := 1
			if driver {
				// The probe counted the kills before its own: its own is
				// one more (the kernel's log, where read, counts both).
				n = s.probeKills + 1
			}
			s.statusKills = max(s.statusKills, n)
		})
	}
}

// outside records that the pod was ended by someone other than headroom
// (the first word on it wins), unless headroom is removing it itself.
func (s *sandbox) outside(by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.removing && s.killedBy == "" {
		s.killedBy = by
	}
}

// startMetrics samples through the metrics API where the cluster has one.
func (s *sandbox) startMetrics() {
	s.mu.Lock()
	why := s.why
	s.mu.Unlock()
	if err := s.b.metricsServed(); err != nil {
		s.mu.Lock()
		s.source = SourceNone
		s.why = strings.TrimPrefix(why+"; no metrics API (metrics.k8s.io): "+err.Error(), "; ")
		s.mu.Unlock()
		return
	}
	s.mu.Lock()
	s.source = SourceMetrics
	if why == "" {
		s.why = "the probe does not run in this pod (a task image with its own idle command, or --probe off)"
	}
	s.mu.Unlock()
	s.feeders.Add(1)
	go func() {
		defer s.feeders.Done()
		tick := time.NewTicker(metricsEvery)
		defer tick.Stop()
		for {
			select {
			case <-s.quit:
				return
			case <-tick.C:
			}
			if b, ok := s.metricsUsage(); ok {
				sm := event.Sample{Time: time.Now(), UsageBytes: b, WorkingSetBytes: b}
				select {
				case s.samples <- sm:
				case <-s.quit:
					return
				default:
				}
			}
		}
	}()
}

// podMetrics is the part of metrics.k8s.io's PodMetrics read here.
type podMetrics struct {
	Containers []struct {
		Name  string            `json:"name"`
		Usage map[string]string `json:"usage"`
	} `json:"containers"`
}

// metricsUsage reads the main container's working set from the metrics API.
func (s *sandbox) metricsUsage() (int64, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var raw []byte
	var err error
	if s.b.p.readPodMetrics != nil {
		raw, err = s.b.p.readPodMetrics(ctx, s.pod)
	} else {
		raw, err = s.b.p.cs.Discovery().RESTClient().Get().AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces", s.b.p.ns, "pods", s.pod).DoRaw(ctx)
	}
	if err != nil {
		return 0, false
	}
	var pm podMetrics
	if json.Unmarshal(raw, &pm) != nil {
		return 0, false
	}
	for _, c := range pm.Containers {
		if c.Name != mainContainer {
			continue
		}
		q, err := resource.ParseQuantity(c.Usage["memory"])
		if err != nil {
			return 0, false
		}
		return q.Value(), true
	}
	return 0, false
}

// Exec runs a step: through the probe where there is one (as user, when
// not the container's own; every step where the pod runs as root for its
// probe, as the container's user unless it names one), else the API
// server's exec.
func (s *sandbox) Exec(ctx context.Context, argv, env []string, user string, line func(stream, text string)) (runner.ExecResult, error) {
	if user == s.task.User {
		user = ""
	}
	if s.drv != nil && !s.b.opts.ExecSteps && (!s.besidePID1 || user != "" || s.stepUser != "") {
		if user == "" {
			user = s.stepUser
		}
		res, err := s.drv.run(ctx, argv, env, user, s.keepHome, line)
		if err == nil && res.ExitCode == 137 && s.drv.gone() {
			// The probe's stream ended under the step: the pod died, or
			// the API server carrying the stream went away (then it is
			// the cluster's failure, not the step's).
			if _, perr := s.b.p.cs.Discovery().ServerVersion(); unreachable(perr) {
				return runner.ExecResult{}, fmt.Errorf("the kubernetes API server stopped answering under the step: %w", perr)
			}
			// Or the probe died by itself (a pids limit the task
			// filled): said, not a silent 137.
			note, err := s.probeDeath(ctx)
			if err != nil {
				return runner.ExecResult{}, err
			}
			if note != "" {
				line("stderr", note)
			}
		}
		return res, err
	}
	if user != "" {
		// An exec runs as the container's user: a step whose user is that
		// one runs as it is (a task directory's verifier runs as 0 in an
		// image that runs as root).
		who, same := s.execRunsAs(ctx, user)
		if !same {
			// The task's own step this pod cannot run: its failure, said,
			// as a program it lacks is (126), not the cluster's.
			line("stderr", fmt.Sprintf("headroom: this step runs as %s, but a pod's exec runs as the container's user (%s) and this pod has no probe to switch users: run it with --pod-probe on", user, who))
			return runner.ExecResult{ExitCode: 126}, nil
		}
		user = ""
	}
	// The exec's stream gives the step pipes, not its terminal
	// (model.Step.Terminal).
	env, _ = runner.SplitTerminal(env)
	env, _ = runner.SplitHold(env) // not held (docs/PARITY.md)
	if len(env) > 0 {
		// An exec takes no environment: env(1) adds it, or where the pod
		// has headroom's binary (the built-in image is FROM scratch, with
		// no env), its env mode.
		if bin := s.probeBinary(); bin != "" {
			argv = workload.EnvArgv(bin, env, argv)
		} else {
			argv = append(append([]string{"env"}, env...), argv...)
		}
	}
	var mu sync.Mutex
	emit := func(stream string) io.WriteCloser {
		return runner.LineWriter(func(text string) {
			mu.Lock()
			line(stream, text)
			mu.Unlock()
		})
	}
	stdout, stderr := emit("stdout"), emit("stderr")
	code, err := s.b.p.streams().Exec(ctx, s.pod, mainContainer, argv, nil, stdout, stderr)
	stdout.Close()
	stderr.Close()
	if err != nil {
		if ctx.Err() != nil {
			return runner.ExecResult{}, ctx.Err()
		}
		if code, ok := notStarted(err); ok {
			// The runtime could not start the step's command: the task's
			// doing (a missing program), as a shell's 127, not the
			// cluster's.
			line("stderr", err.Error())
			return runner.ExecResult{ExitCode: code}, nil
		}
		return runner.ExecResult{}, err
	}
	return runner.ExecResult{ExitCode: code}, nil
}

// execRunsAs says who the pod's exec runs as (id(1)'s "uid=0(root)", read
// once) and whether user ("0", "root", "0:0") is that one. Where the
// image has no id, who says so and user is not known to be it.
func (s *sandbox) execRunsAs(ctx context.Context, user string) (who string, same bool) {
	s.mu.Lock()
	uid, name, read := s.execUID, s.execName, s.execUserRead
	s.mu.Unlock()
	if !read {
		var out, errb bytes.Buffer
		code, err := s.b.p.streams().Exec(ctx, s.pod, mainContainer, []string{"id"}, nil, &out, &errb)
		if err == nil && code == 0 {
			uid, name = parseID(out.String())
		}
		s.mu.Lock()
		s.execUID, s.execName, s.execUserRead = uid, name, true
		s.mu.Unlock()
	}
	if uid == "" {
		return "unknown: the image has no id(1)", false
	}
	who = "uid " + uid
	if name != "" {
		who += " (" + name + ")"
	}
	u, g, hasGroup := strings.Cut(user, ":")
	if hasGroup && g != u {
		// A group of its own: not known to be the container's.
		return who, false
	}
	return who, u == uid || (name != "" && u == name)
}

// parseID reads id(1)'s "uid=0(root) gid=0(root) groups=0(root)".
func parseID(out string) (uid, name string) {
	f, _, _ := strings.Cut(strings.TrimSpace(out), " ")
	v, ok := strings.CutPrefix(f, "uid=")
	if !ok {
		return "", ""
	}
	uid, rest, _ := strings.Cut(v, "(")
	return uid, strings.TrimSuffix(rest, ")")
}

// notStarted says whether an exec's error is the runtime refusing to
// start the command (its program missing or not executable), with the
// exit code a shell gives it.
func notStarted(err error) (int, bool) {
	msg := err.Error()
	switch {
	case strings.Contains(msg, "executable file not found"), strings.Contains(msg, "no such file or directory") && strings.Contains(msg, "exec"):
		return 127, true
	case strings.Contains(msg, "permission denied") && strings.Contains(msg, "exec"):
		return 126, true
	}
	return 0, false
}

// CopyIn unpacks the uploads in the pod, as a tar stream through exec:
// the probe's untar where the pod has the probe's binary, else the
// image's tar (Harbor's GKE environment does the same).
func (s *sandbox) CopyIn(ctx context.Context, uploads []model.Upload) error {
	argv := []string{"tar", "-xf", "-", "-C", "/"}
	if bin := s.probeBinary(); bin != "" {
		argv = []string{bin, workload.UntarMode, "/"}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(runner.WriteUploads(pw, uploads)) }()
	var stderr bytes.Buffer
	code, err := s.b.p.streams().Exec(ctx, s.pod, mainContainer, argv, pr, io.Discard, &stderr)
	pr.CloseWithError(io.EOF)
	if err == nil && code != 0 {
		err = fmt.Errorf("%s exited %d: %s", strings.Join(argv, " "), code, strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		return fmt.Errorf("copying files into pod %s: %w", s.pod, err)
	}
	return nil
}

// maxReadFile bounds what ReadFile takes from a pod (a verifier's
// reward: model.MaxRewardFileBytes says why so much).
const maxReadFile = model.MaxRewardFileBytes

// ReadFile reads one file from the pod through exec (fs.ErrNotExist when
// it is missing).
func (s *sandbox) ReadFile(ctx context.Context, p string) ([]byte, error) {
	argv := []string{"cat", p}
	if bin := s.probeBinary(); bin != "" {
		argv = []string{bin, workload.CatMode, p}
	}
	var out model.RewardBuffer
	var stderr bytes.Buffer
	code, err := s.b.p.streams().Exec(ctx, s.pod, mainContainer, argv, nil, &out, &stderr)
	if err != nil {
		return nil, fmt.Errorf("reading %s from pod %s: %w", p, s.pod, err)
	}
	if code != 0 {
		msg := strings.TrimSpace(stderr.String())
		if code == workload.CatMissing || strings.Contains(msg, "No such file") {
			return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
		}
		if code == workload.CatNotReadable && s.probeBinary() != "" {
			return nil, fmt.Errorf("reading %s from pod %s: %s: %w", p, s.pod, msg, runner.ErrNotReadable)
		}
		return nil, fmt.Errorf("reading %s from pod %s: exit %d: %s", p, s.pod, code, msg)
	}
	if out.Len() > maxReadFile {
		return nil, fmt.Errorf("%s is larger than %s: %w", p, model.FormatBytes(maxReadFile), runner.ErrNotReadable)
	}
	data, err := out.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%s %v: %w", p, err, runner.ErrNotReadable)
	}
	return data, nil
}

// limitedBuffer keeps at most max bytes and notes more.
type limitedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); len(p) > room {
		b.over = true
		b.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// firstSampleWait bounds the wait for the probe's first reading when a
// step opens before it: a period or two, more on a loaded node.
const firstSampleWait = 3 * time.Second

// CPUUse is the latest reading's cumulative CPU accounting. Before the
// probe's first reading (the first step opens right after the attach,
// the probe reads once a period) it waits for that reading, so the first
// step has a baseline too; a probe that found no cgroup is not waited on.
func (s *sandbox) CPUUse() (model.CPUUse, bool) {
	s.mu.Lock()
	have, drv, reads := s.haveCPU, s.drv, strings.HasPrefix(s.source, "probe-cgroup")
	s.mu.Unlock()
	if !have && drv != nil && reads {
		t := time.NewTimer(firstSampleWait)
		select {
		case <-s.firstCPU:
		case <-drv.ended:
		case <-s.quit:
		case <-t.C:
		}
		t.Stop()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastCPU, s.haveCPU
}

// TakeKernelPeak asks the probe for the peak since the last ask.
func (s *sandbox) TakeKernelPeak() (int64, bool) {
	if s.drv == nil {
		return 0, false
	}
	l, err := s.drv.quick(workload.OpPeak, answerWait)
	if err != nil || !l.Known {
		return 0, false
	}
	s.mu.Lock()
	s.maxPeak = max(s.maxPeak, l.Peak)
	s.mu.Unlock()
	return l.Peak, true
}

// probeFreezeGap is how far apart two of the probe's readings (by its own
// clock, every period) must be for its container to count as frozen: far
// above any scheduling delay a busy node gives (runner's freezeGap).
const probeFreezeGap = 3 * time.Second

// memoryLimit is the task container's memory limit as the pod says it now
// (0: none): its status's where the kubelet reports what it applied (an
// in-place resize), else its spec's.
func memoryLimit(pod *corev1.Pod) (int64, bool) {
	if st := containerStatus(pod, mainContainer); st != nil && st.Resources != nil {
		if q, ok := st.Resources.Limits[corev1.ResourceMemory]; ok {
			return q.Value(), true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == mainContainer {
			q, ok := c.Resources.Limits[corev1.ResourceMemory]
			if !ok {
				return 0, true
			}
			return q.Value(), true
		}
	}
	return 0, false
}

func limitText(b int64) string {
	if b == 0 {
		return "no limit"
	}
	return model.FormatBytes(b)
}

// podSlack is how far under its own limit a container's usage can stop
// when the charge that failed was its pod's: the pod cgroup's limit is the
// sum of its containers' and also holds the sandbox (pause) process.
const podSlack = 1 << 20

// podLimitHit says whether the container's peak came within podSlack of
// its limit: the pod cgroup above it (unreadable from inside the
// container, where the probe counts failed charges) then hit its limit,
// which is this container's.
func (s *sandbox) podLimitHit() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.policy.HardLimitBytes > 0 && s.maxPeak >= s.policy.HardLimitBytes-podSlack
}

// killedStarting is err, a failed wait for the pod's health, as
// runner.StartOOMError when the kernel OOM-killed processes in the
// container meanwhile, as on Docker: a check killed at the ratio's limit
// was an infra error of a failed check here. The probe reads the
// container's counters; without it, err stays as it is.
func (s *sandbox) killedStarting(err error, during string) error {
	if s.drv == nil || errors.Is(err, context.Canceled) {
		return err
	}
	l, qerr := s.drv.quick(workload.OpFinal, answerWait)
	if qerr != nil || l.OOMKills == 0 {
		return err
	}
	atLimit := l.LimitHits > 0
	if p, perr := s.drv.quick(workload.OpPeak, answerWait); perr == nil && p.Known {
		s.mu.Lock()
		s.maxPeak = max(s.maxPeak, p.Peak)
		s.mu.Unlock()
	}
	atLimit = atLimit || s.podLimitHit()
	return &runner.StartOOMError{Kills: l.OOMKills, AtLimit: atLimit, During: during, Err: err}
}

// StopSteps kills a timed-out step's processes and keeps the pod for the
// verifier (runner.StepStopper): the probe, its container's first
// process, kills every other one.
func (s *sandbox) StopSteps(context.Context) error {
	if s.drv == nil {
		return errors.New("this pod has no probe to stop a step alone (--pod-probe off)")
	}
	l, err := s.drv.quick(workload.OpStopSteps, answerWait)
	if err != nil {
		return fmt.Errorf("stopping the steps: %w", err)
	}
	if l.Code != 0 {
		return errors.New("the probe is not its container's first process, so it cannot reach every step's process")
	}
	return nil
}

var _ runner.StepStopper = (*sandbox)(nil)

// Kill stops every process in the pod: the probe kills them and ends
// (the container ends with it); without the probe, the pod is deleted.
func (s *sandbox) Kill(ctx context.Context) error {
	s.mu.Lock()
	s.killing = true
	s.goneBeforeKill = s.drv != nil && s.drv.gone()
	s.mu.Unlock()
	if s.drv != nil {
		if err := s.drv.kill(); err == nil {
			return nil
		}
	}
	s.mu.Lock()
	s.removing = true
	s.mu.Unlock()
	return s.b.p.Remove(ctx, runner.OwnedResource{ID: s.pod, Kind: KindPod})
}

// Remove reads the final counters and status, then deletes the pod
// (unless kept) and waits until it is gone.
func (s *sandbox) Remove(ctx context.Context) (runner.Final, error) {
	f := runner.Final{PidsLimitEnforced: s.pidsEnforced}
	finals := runner.TimePhase(s.trial, "remove: probe's final counters")
	if s.drv != nil {
		if l, err := s.drv.quick(workload.OpFinal, answerWait); err == nil {
			f.LimitHits, f.LimitHitsKnown, f.PidsLimitHits = l.LimitHits, l.Known, l.PidsHits
			if l.OOMKills > 0 {
				s.signal(time.Now(), "probe", func() { s.probeKills = max(s.probeKills, l.OOMKills) })
			}
		}
		if l, err := s.drv.quick(workload.OpPeak, answerWait); err == nil && l.Known {
			f.KernelPeakBytes = l.Peak
			s.mu.Lock()
			s.maxPeak = max(s.maxPeak, l.Peak)
			s.mu.Unlock()
		}
		if f.LimitHitsKnown && f.LimitHits == 0 && s.podLimitHit() {
			f.LimitHits = 1
		}
	}
	finals()
	looked := runner.TimePhase(s.trial, "remove: pod's status")
	pod, err := s.b.p.cs.CoreV1().Pods(s.b.p.ns).Get(ctx, s.pod, metav1.GetOptions{})
	looked()
	if err == nil {
		s.seen(pod)
		if len(s.task.Sidecars) > 0 {
			f.Sidecars = s.sidecarUsage(ctx, pod)
		}
	} else if apierrors.IsNotFound(err) {
		// Gone before headroom deleted it.
		s.outside(deletedOutside)
	} else if unreachable(err) {
		// The API server went away under the trial: its steps' ends
		// (the attach cut) are the cluster's, not the task's.
		f.EngineRestarted = true
	}
	s.mu.Lock()
	f.OOMKilled = s.probeKills > 0 || s.statusKills > 0 || s.kernelKills > 0
	f.KilledBy = model.Witness(s.killedBy)
	f.LimitChanged = model.Witness(s.limitChange)
	if s.frozenFor > 0 {
		f.Frozen = model.Witness("its container was frozen (paused on its node: the probe's readings stopped) for " + s.frozenFor.Round(100*time.Millisecond).String())
	}
	s.removing = true
	s.mu.Unlock()
	s.b.forget(s.containerID)
	err = nil
	if s.b.opts.Keep {
		if s.drv != nil {
			_ = s.drv.kill()
		}
	} else {
		err = s.deleteAll(ctx)
	}
	closing := runner.TimePhase(s.trial, "remove: streams closed")
	close(s.quit)
	if s.stopAttach != nil {
		s.stopAttach()
	}
	if s.drv != nil {
		s.drv.close()
		<-s.drv.ended
	}
	if s.watching {
		<-s.watched
	}
	s.feeders.Wait()
	if s.sub != nil {
		s.sub.close()
	}
	closing()
	s.mu.Lock()
	f.DroppedSamples = s.dropped
	s.closed = true
	close(s.samples)
	close(s.ooms)
	s.mu.Unlock()
	return f, err
}

// deleteAll deletes the pod and waits for it to be gone (its
// experiment's NetworkPolicy goes at the backend's Close).
func (s *sandbox) deleteAll(ctx context.Context) error {
	p := s.b.p
	deleted := runner.TimePhase(s.trial, "remove: pod delete")
	err := p.Remove(ctx, runner.OwnedResource{ID: s.pod, Kind: KindPod})
	deleted()
	if err == nil {
		gone := runner.TimePhase(s.trial, "remove: pod gone")
		if s.sub != nil {
			err = p.waitGoneSub(ctx, s.sub)
		} else {
			err = p.waitGone(ctx, s.pod)
		}
		gone()
	}
	if apierrors.IsNotFound(err) {
		err = nil
	}
	return err
}

func (b *backend) forget(cid string) {
	if cid == "" {
		return
	}
	b.mu.Lock()
	delete(b.byCID, cid)
	b.mu.Unlock()
}
