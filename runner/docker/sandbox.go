package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
	"github.com/headroom-eval/headroom/runner/kmsg"
	"github.com/headroom-eval/headroom/workload"
	"golang.org/x/sys/unix"
)

// sandbox is one trial's container.
type sandbox struct {
	trial string // for phase timings (runner.TimePhase)
	b     *Backend
	id    string
	// before is the container's processes as its first step starts (pid
	// → start time): its entrypoint's, which StopSteps leaves running
	// with all they start (preSteps).
	before     map[int]int64
	beforeOnce sync.Once
	// discard: the container never ran a step (its start failed), so it
	// is removed even under --keep: there is nothing in it to inspect,
	// and a start tried again makes a container of the same name.
	discard bool

	source  string
	cg      *cgroup.Reader
	samples chan event.Sample
	ooms    chan runner.OOMSignal
	quit    chan struct{}
	sampled chan struct{} // closed when the stats stream's reader has stopped
	// The cgroup sampler's own (see sampler.sampleOnce).
	lastCPU int64
	lastAt  time.Time
	// wait follows the CPU time the container's threads wanted and did
	// not get (read about once a second by the sampler, and at each step's
	// ends); waitAt is when it was last read.
	waitMu  sync.Mutex
	wait    cgroup.WaitTracker
	waitAt  time.Time
	dropped int     // samples the runner was too slow to take
	drv     *driver // the step driver, where steps go through one
	// kept are the exec streams of ended steps read on (keepReading);
	// keptClosed: the sandbox is being removed, none is kept more.
	keptMu     sync.Mutex
	kept       []keptStream
	keptClosed bool
	// execWhy says why a task image's steps take the engine's exec and
	// not the step driver ("" where the driver runs them).
	execWhy string
	// stepUser is who a step that names no user runs as, where the
	// driver runs as root ("" where it runs as the container's user).
	stepUser string
	// spared: the driver started at model.DriverOOMScoreAdj; driverAdj
	// is the adjustment it started at, nil where unknown. A kill at one
	// it never has says the task raised it (model.ForeignDriverScore).
	spared    bool
	driverAdj *int
	// driverPID is the step driver's pid on this host, 0 where unknown
	// (noteDriver).
	driverPID int
	side      *sidecars
	kit       *knobKit // the knobs' helper, neighbours, volume
	logs      []string // its volumes at the task's harness mounts
	// disk is the task's storage and the bound the engine was asked to
	// hold (storage.go); what it wrote is read at the end.
	disk model.DiskUse
	pw   procWatch

	// Who stopped the container (faults.go).
	stops stopWitness

	// name and labels are the container's; its helpers carry them too.
	name   string
	labels map[string]string
	help   helpers
	// The network policy in force (netpolicy.go): the networks a
	// no-network phase disconnected, and whether an allowlist is set.
	netMu    sync.Mutex
	detached map[string]*network.EndpointSettings
	filtered bool

	mu          sync.Mutex
	closed      bool
	eventKills  int
	cgroupKills int
	// words is how many kills of the container the kernel's log has
	// described so far, in order (it logs one report at a time): a count
	// of its own, and each word's kill by its number. wordsIn is closed
	// and replaced at each (awaitKernelWords).
	words   int
	wordsIn chan struct{}
	kills   runner.KillCount
	// limitHits as read at the latest kill (the cgroup may be gone by
	// the end); limitHitsKnown when it could be read.
	limitHits      int64
	limitHitsKnown bool
	// The memory limit the kernel enforced at the first sample, and how
	// it moved from there when someone else changed it (docker update):
	// "" while it holds. limitChange under mu.
	limitFirst  int64
	limitRead   bool
	limitChange string
	// The CPU and pids limits at the first reading (the ratio sets
	// them too), watched as memory's is.
	cpuFirst  float64
	cpuRead   bool
	pidsFirst int64
	pidsRead  bool
	// otherFirst are the other limits' first readings (cgroup
	// OtherLimits), nil until read.
	otherFirst map[string]string

	// ended is what the container said as it ended (readEnd), once read.
	ended *sandboxEnd
}

func newSandbox(b *Backend, id string) *sandbox {
	return &sandbox{
		b: b, id: id,
		samples: make(chan event.Sample, 256),
		ooms:    make(chan runner.OOMSignal, 16),
		quit:    make(chan struct{}),
		sampled: make(chan struct{}),
		stops:   stopWitness{destroyed: make(chan struct{})},
	}
}

func (s *sandbox) ID() string           { return s.id }
func (s *sandbox) SampleSource() string { return s.source }

// PeakMode: the cgroup reader's (cgroup.PeakReset where the kernel's mark
// can be reset); the stats stream has no mark.
func (s *sandbox) PeakMode() string {
	if s.cg == nil {
		return cgroup.PeakSamples
	}
	return s.cg.PeakMode()
}
func (s *sandbox) Samples() <-chan event.Sample  { return s.samples }
func (s *sandbox) OOMs() <-chan runner.OOMSignal { return s.ooms }

// WritesOutputFiles: the step driver writes a traced step's output file.
func (s *sandbox) WritesOutputFiles() bool { return s.drv != nil }

// StepRunnerWhy says why the steps take the engine's exec, where a task
// image's could have been the driver's (runner.ExecReasoner).
func (s *sandbox) StepRunnerWhy() string { return s.execWhy }

func (s *sandbox) StepRunner() string {
	if s.drv != nil {
		return runner.StepsByDriver
	}
	return runner.StepsByExec
}

// signal records kills from one source and reports the new total, if it
// grew: the total is the largest count any one source has seen. A kill the
// kernel's log described carries what was killed.
func (s *sandbox) signal(at time.Time, source string, update func()) {
	s.signalKill(at, source, kmsg.Kill{}, update)
}

func (s *sandbox) signalKill(at time.Time, source string, k kmsg.Kill, update func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	update()
	word := source == "kernel" // the kernel's log describing one kill
	if word {
		s.words++
		if s.wordsIn != nil {
			close(s.wordsIn)
		}
		s.wordsIn = make(chan struct{})
	}
	if s.closed {
		return
	}
	before := s.kills.Count()
	n, ok := s.kills.Seen(max(s.eventKills, s.cgroupKills, s.words), word)
	if !ok {
		return
	}
	// A new kill (not one already counted from a faster source, now
	// named): its container's own limit hits as read now.
	if n != before && s.cg != nil {
		if h, ok := s.cg.LimitHits(); ok {
			s.limitHits, s.limitHitsKnown = max(s.limitHits, h), true
		}
	}
	sig := runner.OOMSignal{Time: at, Source: source, Count: n}
	words := 0
	if word {
		sig.Process, sig.PID, sig.RSSBytes, sig.UsageBytes, sig.ShmemBytes = k.Process, k.PID, k.RSSBytes, k.UsageBytes, k.ShmemBytes
		sig.RaisedScoreAdj = s.raisedScore(k)
		sig.Driver = k.PID > 0 && k.PID == s.driverPID
		words = s.words
	}
	for _, o := range runner.KillSignals(sig, before, words) {
		select {
		case s.ooms <- o:
		default: // the runner reads promptly; a full buffer still has a newer count coming
		}
	}
}

// kernelWordsWait bounds awaitKernelWords.
const kernelWordsWait = 2 * time.Second

// awaitKernelWords waits, up to d, until the kernel's log has described
// every kill counted in the container, where that log is read: its
// reader can trail the engine's event and the cgroup's counter, and the
// sandbox's end closes what the reports would go to (a step driver's
// kill without its report's tmpfs figures reads as headroom's failure,
// model.OOMEvent.DriverByTmpfs). Reports the kernel dropped never come
// (it logs ten in five seconds; the kill's last reading stands in for
// them, runner's attributionEvidence): those cost the whole wait, once,
// at the end. It says whether every kill was described.
func (s *sandbox) awaitKernelWords(d time.Duration) bool {
	if !s.b.kernelLog {
		return false
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if s.words >= s.kills.Count() {
			s.mu.Unlock()
			return true
		}
		if s.wordsIn == nil {
			s.wordsIn = make(chan struct{})
		}
		ch := s.wordsIn
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// noteDriver records, once the container runs, what a kill of its step
// driver is told by: the driver's pid on this host (a kill the kernel's
// log names at that pid took the driver, whatever the process watcher
// has read by then: a task that fills its limit in its first second is
// killed before the watcher's first look), and the OOM score adjustment
// it started at: headroom's own where the engine took it (spared), else
// read from its /proc (an engine's default: 0 where rootful, the daemon's
// own where rootless). Both unknown where the engine is another
// machine's (the pid is not this host's).
//
// It also leaves the driver's own threads out of the trial's CPU wait,
// on cgroup v1 where that is summed over threads: the driver relays every
// trace line, and its threads' waits on a busy loop's run queue were
// 2.5 s of an 8 s loop's 3.6 s "wait for a CPU" (1.1 s under
// --exec-steps, with no driver), which made the task's own timeout a
// contended host's (the fourteenth attacker's 2). On v2 the cgroup's
// pressure cannot be split so.
func (s *sandbox) noteDriver(spared bool, pid func() int) {
	var adj *int
	p := pid()
	owned := p > 0 && s.ownsPID(p)
	if spared {
		n := model.DriverOOMScoreAdj
		adj = &n
	} else if owned {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/oom_score_adj", p)); err == nil {
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				adj = &n
			}
		}
	}
	if !owned {
		p = 0
	}
	s.mu.Lock()
	s.spared, s.driverAdj, s.driverPID = spared, adj, p
	s.mu.Unlock()
	if p > 0 {
		s.waitMu.Lock()
		s.wait.Skip = p
		s.waitMu.Unlock()
	}
}

// ownsPID says whether the process p of this host's /proc is the
// container's (its cgroup names the container): the engine's pid is its
// host's, which is not this one's where headroom runs in a container.
func (s *sandbox) ownsPID(p int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", p))
	return err == nil && strings.Contains(string(b), s.id)
}

// raisedScore is the killed process's OOM score adjustment from the
// kernel's log where it is none headroom gives its step driver; nil when
// it is one, or when the log or the driver's own start did not say.
// Called with mu held.
func (s *sandbox) raisedScore(k kmsg.Kill) *int {
	if !k.HasOOMScoreAdj || s.driverAdj == nil || !model.ForeignDriverScore(k.OOMScoreAdj, *s.driverAdj, s.spared) {
		return nil
	}
	adj := k.OOMScoreAdj
	return &adj
}

// kernelOOM handles a kill read from the kernel's log: logged as it
// happens, it usually comes first, and it names the process.
func (s *sandbox) kernelOOM(at time.Time, k kmsg.Kill) {
	s.mu.Lock()
	cg := s.cg
	s.mu.Unlock()
	if cg != nil {
		if n, err := cg.OOMKills(); err == nil && n > 0 {
			s.signalKill(at, "kernel", k, func() { s.cgroupKills = max(s.cgroupKills, n) })
			return
		}
	}
	s.signalKill(at, "kernel", k, func() {}) // a word counts itself
}

// eventOOM handles the engine's oom event: the fastest signal. Where the
// cgroup is readable its kill counter is the count (the engine may report
// one OOM condition more than once); elsewhere each event counts one.
func (s *sandbox) eventOOM(at time.Time, _ int64) {
	s.mu.Lock()
	cg := s.cg
	s.mu.Unlock()
	if cg != nil {
		if n, err := cg.OOMKills(); err == nil && n > 0 {
			s.signal(at, "events", func() { s.cgroupKills = max(s.cgroupKills, n) })
			return
		}
	}
	s.signal(at, "events", func() { s.eventKills++ })
}

func (s *sandbox) startSampling(pid func() int) {
	defer s.startProcs()
	if !s.b.opts.ForceStats {
		cg, err := cgroup.Find(s.b.opts.CgroupRoot, s.id, 0)
		if err != nil {
			cg, err = cgroup.Find(s.b.opts.CgroupRoot, s.id, pid())
		}
		if err == nil {
			s.mu.Lock()
			s.cg = cg
			s.mu.Unlock()
			s.source = fmt.Sprintf("cgroup-v%d", cg.Version())
			s.b.sampler.add(s)
			return
		}
	}
	s.source = "docker-stats"
	go s.sampleStats()
}

func (s *sandbox) emit(sm event.Sample) bool {
	select {
	case s.samples <- sm:
		return true
	case <-s.quit:
		return false
	}
}

// sampleStats is the fallback when the cgroup files cannot be read (a
// remote engine): the engine's 1 Hz stats stream, which misses short spikes.
func (s *sandbox) sampleStats() {
	defer close(s.sampled)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-s.quit
		cancel()
	}()
	resp, err := s.b.cli.ContainerStats(ctx, s.id, true)
	if err != nil {
		<-s.quit
		return
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var st container.StatsResponse
		if err := dec.Decode(&st); err != nil {
			<-s.quit
			return
		}
		inactive := st.MemoryStats.Stats["total_inactive_file"]
		if v, ok := st.MemoryStats.Stats["inactive_file"]; ok {
			inactive = v
		}
		usage := int64(st.MemoryStats.Usage)
		ws := max(usage-int64(inactive), 0)
		sm := event.Sample{Time: st.Read, UsageBytes: usage, WorkingSetBytes: ws, CacheBytes: usage - ws}
		if d := st.Read.Sub(st.PreRead); d > 0 && st.PreCPUStats.CPUUsage.TotalUsage > 0 {
			sm.CPUCores = float64(st.CPUStats.CPUUsage.TotalUsage-st.PreCPUStats.CPUUsage.TotalUsage) / float64(d.Nanoseconds())
		}
		if !s.emit(sm) {
			return
		}
	}
}

// Exec runs argv in the container and streams its output line by line:
// through the step driver where there is one, else the engine's exec.
func (s *sandbox) Exec(ctx context.Context, argv, env []string, user string, line func(stream, text string)) (runner.ExecResult, error) {
	s.beforeOnce.Do(func() { s.before = s.processesNow() })
	if s.drv != nil {
		// The driver runs the step as its user where the task names one
		// ([agent] user, [verifier] user), as the engine's exec does: it
		// ran every step as the container's (root), so an agent meant to
		// be nobody read a root-only answer key and passed.
		if user == "" {
			user = s.stepUser
		}
		return s.drv.run(ctx, argv, env, user, line)
	}
	// The engine's exec gives the step pipes, not its terminal
	// (model.Step.Terminal): a terminal of its own would hang up, and
	// SIGHUP what the step left in the background, as the step ended.
	env, _ = runner.SplitTerminal(env)
	env, hold := runner.SplitHold(env)
	h := &execHold{}
	if hold && s.readsFDs() {
		h.on = true
		env = append(env, runner.TraceHoldVar+"=1")
	}
	cli := s.b.cli
	ex, err := cli.ContainerExecCreate(ctx, s.id, container.ExecOptions{Cmd: argv, Env: env, User: user, AttachStdout: true, AttachStderr: true})
	if err != nil {
		return runner.ExecResult{}, fmt.Errorf("exec create: %w", err)
	}
	// headroom's own: its exec_start event is not someone else's.
	s.stops.ownExec(ex.ID)
	att, err := cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return runner.ExecResult{}, fmt.Errorf("exec attach: %w", err)
	}
	kept := false // the stream is read on past the step (keepReading)
	defer func() {
		if !kept {
			att.Close()
		}
	}()
	var mu sync.Mutex
	ended := false // the step has ended: what comes later is dropped
	emit := func(stream string) io.WriteCloser {
		return runner.LineWriter(func(text string) {
			mu.Lock()
			if !ended {
				line(stream, text)
			}
			mu.Unlock()
		})
	}
	stdout, stderr := emit("stdout"), emit("stderr")
	copied := make(chan error, 1)
	read := &lastRead{r: att.Reader}
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, read)
		stdout.Close()
		stderr.Close()
		copied <- err
	}()
	// The step ends as under the step driver: once its process has and
	// its output is quiet (workload.DrainQuiet), at most
	// workload.DrainWait after. The stream lasts while any process holds
	// it, and a job the script left in the background holds it (the
	// trace's descriptor too, where its own output went to /dev/null):
	// output it printed, or a reward it wrote, half a second after the
	// script's end counted under --exec-steps and not under the driver,
	// nor under terminal-bench, which reads the pane when the script
	// ends, nor Harbor, whose exec has no such descriptor (the fifteenth
	// attacker's 7).
	var exited time.Time
	// code is the exit code the inspect that saw the end read; an
	// inspect a tick: a step of minutes asks the engine 20 times a
	// second, not 200.
	code := 0
	h.start(ctx, s, ex.ID)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-copied:
			break wait
		case <-ctx.Done():
			if h.ended && h.held && !h.sent {
				// Held to its timeout by what it left: the hold ends,
				// they run on, their output read on (keepReading).
				mu.Lock()
				ended = true
				mu.Unlock()
				if kept = s.keepReading(att, copied); !kept {
					att.Close()
					<-copied
				}
				return runner.ExecResult{ExitCode: code, Released: true}, ctx.Err()
			}
			att.Close()
			<-copied
			return runner.ExecResult{}, ctx.Err()
		case now := <-tick.C:
			if exited.IsZero() {
				ins, err := cli.ContainerExecInspect(ctx, ex.ID)
				switch {
				case err != nil:
				case !ins.Running:
					exited, code = now, ins.ExitCode
				case h.on:
					h.step(s, ins.Pid)
				}
				continue
			}
			if now.Sub(read.at()) >= workload.DrainQuiet || now.Sub(exited) >= workload.DrainWait {
				mu.Lock()
				ended = true
				mu.Unlock()
				kept = s.keepReading(att, copied)
				if !kept {
					att.Close()
					<-copied
				}
				break wait
			}
		}
	}
	if !exited.IsZero() {
		return runner.ExecResult{ExitCode: code}, nil // read as the end was seen
	}
	// The stream ends when the process does; its exit code follows shortly.
	for {
		ins, err := cli.ContainerExecInspect(context.Background(), ex.ID)
		if err != nil {
			return runner.ExecResult{}, fmt.Errorf("exec inspect: %w", err)
		}
		if !ins.Running {
			return runner.ExecResult{ExitCode: ins.ExitCode}, nil
		}
		select {
		case <-ctx.Done():
			return runner.ExecResult{}, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func (s *sandbox) CPUUse() (model.CPUUse, bool) {
	if s.cg == nil {
		return model.CPUUse{}, false
	}
	return s.cg.CPUUse()
}

// CPUWait is the CPU time the container's threads have waited for so far
// (runner.CPUWaiter).
func (s *sandbox) CPUWait() (time.Duration, bool) {
	if s.cg == nil {
		return 0, false
	}
	s.waitMu.Lock()
	defer s.waitMu.Unlock()
	n, ok := s.wait.Read(s.cg)
	s.waitAt = time.Now()
	return time.Duration(n), ok
}

func (s *sandbox) TakeKernelPeak() (int64, bool) {
	if s.cg == nil {
		return 0, false
	}
	return s.cg.TakePeak()
}

func (s *sandbox) Kill(ctx context.Context) error {
	s.stops.ours()
	return s.b.cli.ContainerKill(ctx, s.id, "KILL")
}

// Stop reads what the container's cgroup says at its end, kills the
// container and returns once it is dead (runner.Stopper): every process
// of its cgroup gone, their memory freed. The engine answers the kill
// only once it has handled the exit (the shim, the mounts, the network:
// 70-250 ms here, the processes dead after the first 1-20); where the
// cgroup is readable the death is seen there and the engine's answer is
// awaited by Remove. Without a cgroup (a remote engine) the engine's
// answer is the death.
func (s *sandbox) Stop(ctx context.Context) error {
	if s.ended != nil {
		return nil
	}
	e := s.readEnd(ctx)
	e.killed = make(chan struct{})
	go func() {
		e.killErr = s.killAndWait(ctx)
		close(e.killed)
	}()
	if s.cg != nil && s.emptiedBefore(e.killed) {
		return nil
	}
	<-e.killed
	return e.killErr
}

// emptiedBefore watches the container's cgroup until it holds no process
// (or is gone), and says whether that came before done.
func (s *sandbox) emptiedBefore(done <-chan struct{}) bool {
	procs := filepath.Join(s.cg.Dir(), "cgroup.procs")
	var buf []byte
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if b, err := cgroup.ReadFresh(procs, &buf); err != nil || len(strings.TrimSpace(string(b))) == 0 {
			return true
		}
		select {
		case <-done:
			return false
		case <-tick.C:
		}
	}
}

// killAndWait kills the container and waits until the engine has it
// stopped; nil too when it had stopped already or is gone.
func (s *sandbox) killAndWait(ctx context.Context) error {
	err := s.b.cli.ContainerKill(ctx, s.id, "KILL")
	if err != nil && !cerrdefs.IsConflict(err) && !strings.Contains(err.Error(), "is not running") {
		if cerrdefs.IsNotFound(err) {
			return nil // removed by someone (rm -f): nothing runs
		}
		return err
	}
	// Stopped already (a kill from outside, its main process's end) or
	// now stopping: the wait answers once the engine has it stopped.
	waitCh, errCh := s.b.cli.ContainerWait(ctx, s.id, container.WaitConditionNotRunning)
	select {
	case <-waitCh:
		return nil
	case err := <-errCh:
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		return err
	}
}

// sandboxEnd is what a container said as it ended, read while its cgroup
// still existed (readEnd): the first part of its Final.
type sandboxEnd struct {
	f          runner.Final
	killsKnown bool
	kitErr     error
	// killed is closed when the engine has answered Stop's kill, with
	// killErr; nil when Stop did not run.
	killed  chan struct{}
	killErr error
}

// readEnd marks headroom's own stop from now on and reads what the
// container says only while it lives, once.
func (s *sandbox) readEnd(ctx context.Context) *sandboxEnd {
	if s.ended != nil {
		return s.ended
	}
	e := &sandboxEnd{}
	s.ended = e
	f := &e.f
	s.stops.ours()
	// The knobs' own containers go first: the helper undoes its shaping
	// and says what it did, the neighbours' use is read.
	if s.kit != nil {
		f.Knobs, e.kitErr = s.kit.remove(ctx)
	}
	if s.cg != nil {
		f.LimitHits, f.LimitHitsKnown = s.cg.LimitHits() // before the peak's reset
		f.KernelPeakBytes, _ = s.cg.TakePeak()
		s.mu.Lock()
		f.LimitHits = max(f.LimitHits, s.limitHits)
		f.LimitHitsKnown = f.LimitHitsKnown || s.limitHitsKnown
		s.mu.Unlock()
		f.PidsLimitHits = s.cg.PidsLimitHits()
		s.waitMu.Lock()
		s.checkLimit()
		s.waitMu.Unlock()
		s.mu.Lock()
		f.LimitChanged = model.Witness(s.limitChange)
		s.mu.Unlock()
		// The kernel's own counter is what State.OOMKilled reports (some
		// process in the cgroup was killed); read it while the cgroup
		// exists and spare the stop-wait-inspect round trips.
		if n, err := s.cg.OOMKills(); err == nil {
			f.OOMKilled, e.killsKnown = n > 0, true
		}
	}
	return e
}

// Remove reads the last kernel peak and the engine's verdict (unless Stop
// did), then removes the container and closes the sandbox's channels.
func (s *sandbox) Remove(ctx context.Context) (runner.Final, error) {
	e := s.readEnd(ctx)
	dead := false
	if e.killed != nil {
		// The engine has it stopped, its exit handled, once it answers.
		<-e.killed
		dead = e.killErr == nil
	}
	f, killsKnown, kitErr := e.f, e.killsKnown, e.kitErr
	keep := s.b.opts.Keep && !s.discard
	if !killsKnown || keep {
		// The engine records State.OOMKilled when the container exits, so
		// stop it and wait for the exit before asking (and a kept
		// container is left stopped); Stop may have done both.
		if !dead {
			_ = s.killAndWait(ctx)
		}
		if info, err := s.b.cli.ContainerInspect(ctx, s.id); err == nil && info.State != nil {
			f.OOMKilled = f.OOMKilled || info.State.OOMKilled
		}
	}
	if !s.discard {
		// What it wrote, while the container is still there.
		f.Disk = s.diskWritten(ctx)
	}
	var err error
	if !keep {
		if s.b.beforeRemove != nil {
			s.b.beforeRemove(s.id)
		}
		removed := runner.TimePhase(s.trial, "remove: engine")
		err = s.b.retryEngine(ctx, func() error {
			return s.b.cli.ContainerRemove(ctx, s.id, removeOptions)
		})
		removed()
		if err != nil && IsGone(err) {
			err = nil
		}
	}
	if s.drv != nil {
		s.drv.close()
	}
	s.closeKept()
	if err == nil && !keep {
		// Every event before the destroy has arrived by then.
		destroyed := runner.TimePhase(s.trial, "remove: destroy event")
		s.stops.awaitDestroy(ctx, destroyWait)
		destroyed()
	}
	f.Frozen = model.Witness(s.stops.frozen(time.Now()))
	f.KilledBy = model.Witness(s.stops.outside())
	if f.KilledBy.Seen() && s.b.shutdownKill(ctx, &s.stops) {
		// The engine stopped the container as it shut down.
		f.KilledBy, f.EngineRestarted = "", true
	}
	s.removeHelpers()
	if s.side != nil {
		var serr error
		f.Sidecars, serr = s.side.remove(ctx)
		err = errors.Join(err, serr)
	}
	if s.kit != nil {
		err = errors.Join(err, kitErr, s.kit.removeVolume(ctx))
	}
	if !keep {
		err = errors.Join(err, s.b.removeVolumes(ctx, s.logs))
	}
	// While the kernel's log can still find the sandbox by its id.
	s.awaitKernelWords(kernelWordsWait)
	s.b.forget(s.id)
	if s.cg != nil {
		s.b.sampler.remove(s)
		s.cg.Close()
	}
	s.stopProcs()
	close(s.quit)
	if s.source == "docker-stats" {
		<-s.sampled
	}
	f.DroppedSamples = s.dropped // the sampler has let go of s
	s.mu.Lock()
	s.closed = true
	close(s.samples)
	close(s.ooms)
	s.mu.Unlock()
	return f, err
}

// execHold holds an exec'd step past its script's end while another
// process of the container holds its output (runner.HoldOutputVar:
// Harbor's oracle, whose tee waits for them). The engine ends an exec's
// output two seconds after its process, so the exec's process must last:
// the wrapper's first bash stays once the script has ended
// (runner.TraceHoldVar), letting go of the output, and headroom reads
// from the host, as the step driver reads in the container
// (workload.PipeHeld), who else holds it, the trace's descriptor not
// counted; once none does it sends the wrapper SIGUSR1, and the exec ends
// with the script's status. Held to the step's timeout, the wrapper is
// left waiting: the exec, and its output's reader, stay until the
// container goes, as Harbor's tee stays when it cancels its exec.
type execHold struct {
	on    bool   // the wrapper stays (TraceHoldVar given)
	pid   int    // the exec's process on the host: the wrapper's first bash
	pipe  string // its output, as /proc names it
	ended bool   // the script has ended: the wrapper let go of the output
	held  bool   // another process held it since
	clear int    // readings in a row without one
	sent  bool   // SIGUSR1 sent
}

// readsFDs says whether headroom can read the container's processes'
// descriptors from here (root on the host, the cgroup readable): without
// it a wrapper told to stay would never be told the script had ended.
func (s *sandbox) readsFDs() bool {
	if s.cg == nil || os.Geteuid() != 0 {
		return false
	}
	for pid := range s.processesNow() {
		if _, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid)); err == nil {
			return true
		}
	}
	return false
}

// start reads the exec's process and its output as it starts: the engine
// says its pid a moment after (0 before).
func (h *execHold) start(ctx context.Context, s *sandbox, execID string) {
	if !h.on {
		return
	}
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline) && h.pipe == ""; time.Sleep(2 * time.Millisecond) {
		ins, err := s.b.cli.ContainerExecInspect(ctx, execID)
		if err != nil || !ins.Running {
			return
		}
		if ins.Pid > 0 {
			h.step(s, ins.Pid)
		}
	}
}

// step reads the wrapper (pid, the exec's process) while its exec runs.
func (h *execHold) step(s *sandbox, pid int) {
	if h.pid == 0 {
		h.pid = pid
	}
	if h.pid == 0 || h.sent {
		return
	}
	out, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/1", h.pid))
	switch {
	case err != nil:
		// Gone: the engine says so at the next inspect.
	case strings.HasPrefix(out, "pipe:["):
		if h.pipe == "" {
			h.pipe = out
		}
	case out == "/dev/null":
		// The script has ended and the wrapper waits only where traceHold
		// put its output there after keeping it on runner.HoldFD (after
		// its trap): a shell's output is /dev/null for a moment too while
		// it runs a builtin with >/dev/null (the wrapper's own start under
		// sh), and one read so was sent SIGUSR1 and died of it, exit 138
		// (TestTracedScriptStatusesInAContainer/traced-statuses-sh, and
		// before it graded-exit, in CI rehearsals). The kept pipe also
		// names the output however late headroom first looked (a script
		// that ended before it was first read left a job held to the
		// agent's timeout let go of). Held while another process holds
		// it; released once none has for workload.ReleaseReadings
		// readings in a row.
		kept, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%d", h.pid, runner.HoldFD))
		if err != nil || !strings.HasPrefix(kept, "pipe:[") {
			return
		}
		h.ended, h.pipe = true, kept
		var pids []int
		for p := range s.processesNow() {
			if p != h.pid { // the wrapper, which keeps it
				pids = append(pids, p)
			}
		}
		if workload.PipeHeld(pids, h.pipe, runner.TraceFD) {
			h.held, h.clear = true, 0
			return
		}
		if h.clear++; h.clear >= workload.ReleaseReadings {
			h.sent = true
			signalPid(h.pid, syscall.SIGUSR1)
		}
	}
}

// signalPid sends sig to pid through a pidfd where the kernel has them
// (the process itself, whatever later takes its number).
func signalPid(pid int, sig syscall.Signal) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		_ = syscall.Kill(pid, sig)
		return
	}
	defer unix.Close(fd)
	_ = unix.PidfdSendSignal(fd, sig, nil, 0)
}

// keepReading reads a step's exec stream on past the step's end, and drops
// what comes, until the stream ends (copied: the engine closes it two
// seconds after the exec's process, or when every holder has let go) or
// the sandbox is removed. A job the step left in the background holds
// it: closed by headroom at the step's end, the job's next write was
// EPIPE. With the wrapper left waiting past a held oracle's timeout
// (execHold), the exec lives on, and so does this reader: a server
// solve.sh started with `cmd &` logs the verifier's requests as beside
// Harbor's tee (the nineteenth attacker's 2). False when the sandbox is
// being removed: the caller closes the stream.
func (s *sandbox) keepReading(att types.HijackedResponse, copied <-chan error) bool {
	s.keptMu.Lock()
	defer s.keptMu.Unlock()
	if s.keptClosed {
		return false
	}
	done := make(chan struct{})
	s.kept = append(s.kept, keptStream{att: att, done: done})
	go func() {
		<-copied
		close(done)
	}()
	return true
}

// closeKept ends the streams keepReading reads on, once the container is
// gone (or kept, stopped), and waits for their copies to end.
func (s *sandbox) closeKept() {
	s.keptMu.Lock()
	s.keptClosed = true
	kept := s.kept
	s.kept = nil
	s.keptMu.Unlock()
	for _, k := range kept {
		k.att.Close()
		<-k.done
	}
}

// keptStream is a step's exec stream read on past its end.
type keptStream struct {
	att  types.HijackedResponse
	done chan struct{} // closed when its copy has ended
}

// ExitedItself says how the container ended by itself before headroom
// first killed it (or before now), by the engine's word (runner.ExitWitness;
// "" when the engine does not answer, the container still runs, or it
// ended after headroom's kill): its main process exited (the idle
// command, the image's entrypoint), with no OOM kill. A kill by someone
// else is told apart by its event (Final.KilledBy).
func (s *sandbox) ExitedItself(ctx context.Context) string {
	s.stops.mu.Lock()
	killedAt := s.stops.oursAt
	s.stops.mu.Unlock()
	if killedAt.IsZero() {
		killedAt = time.Now()
	}
	info, err := s.b.cli.ContainerInspect(ctx, s.id)
	if err != nil || info.State == nil || info.State.Running || info.State.Restarting || info.State.OOMKilled || info.State.Status != "exited" {
		return ""
	}
	// An exit code above 128 is not by itself a signal: `exit 137` is the
	// process's own word, and the engine reports a SIGKILL the same way.
	// What tells them apart is the engine's events: a kill or stop by
	// someone (Final.KilledBy, which the record puts first: attribution),
	// the engine going away (Final.EngineRestarted; here, any break of
	// the event stream since the container started), an OOM kill (here).
	// A host `kill -9` of PID 1 that no engine event shows cannot be told
	// from `exit 137` (docs/RELIABILITY.md, "a third round").
	started, _ := time.Parse(time.RFC3339Nano, info.State.StartedAt)
	if info.State.ExitCode > 128 && (s.oomKilled() || s.b.brokeSince(started)) {
		return ""
	}
	ended, err := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	if err != nil || ended.IsZero() || !ended.Before(killedAt) {
		return ""
	}
	main := strings.Join(append([]string{info.Path}, info.Args...), " ")
	return fmt.Sprintf("its main process `%s` ended, exit %d", main, info.State.ExitCode)
}

// DriverOOMKilled says whether the container's step driver (its PID 1)
// was OOM-killed (runner.DriverKillWitness): the container exited by
// SIGKILL (137), OOM kills were seen in it, the engine's event stream
// never broke since it started, and no one killed or stopped it from
// outside (the record's KilledBy, which outranks this). From inside its
// namespace the task cannot SIGKILL its PID 1; the kernel's OOM killer
// can.
func (s *sandbox) DriverOOMKilled(ctx context.Context) bool {
	if s.drv == nil || !s.oomKilled() {
		return false
	}
	s.stops.mu.Lock()
	oursAt := s.stops.oursAt
	s.stops.mu.Unlock()
	info, err := s.b.cli.ContainerInspect(ctx, s.id)
	if err != nil || info.State == nil || info.State.Running || info.State.Status != "exited" || info.State.ExitCode != 137 {
		return false
	}
	started, _ := time.Parse(time.RFC3339Nano, info.State.StartedAt)
	ended, err := time.Parse(time.RFC3339Nano, info.State.FinishedAt)
	if s.b.brokeSince(started) || err != nil {
		return false
	}
	// Ended before headroom stopped it, if it did.
	return oursAt.IsZero() || ended.Before(oursAt)
}

// oomKilled says whether an OOM kill in the container was seen (its
// cgroup's count, the engine's event, the kernel's log).
func (s *sandbox) oomKilled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.eventKills, s.cgroupKills, s.words) > 0
}

// StopSteps kills the processes of the steps and keeps the container:
// every process of its cgroup but its first (the idle command or the
// step driver), without a driver that process's own children (an idle
// `sh -c` and its `sleep`; steps are the engine's execs, not its
// children), and the processes from before the first step with all they
// start (preSteps). It needs the cgroup's process list, read on this
// host.
func (s *sandbox) StopSteps(ctx context.Context) error {
	if s.cg == nil {
		return errors.New("the container's processes cannot be read here")
	}
	info, err := s.b.cli.ContainerInspect(ctx, s.id)
	if err != nil || info.State == nil || info.State.Pid == 0 {
		return fmt.Errorf("stopping the steps: the container's first process: %v", err)
	}
	first := info.State.Pid
	data, err := os.ReadFile(filepath.Join(s.cg.Dir(), "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("stopping the steps: %w", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil && pid != first {
			pids = append(pids, pid)
		}
	}
	killListed(pids, s.cg.Holds, func(pid int) bool {
		return s.drv == nil && parentPID(pid) == first || s.preSteps(pid, first)
	})
	return nil
}

// processesNow is the container's processes (pid → start time), nil
// where its cgroup cannot be read here.
func (s *sandbox) processesNow() map[int]int64 {
	if s.cg == nil {
		return nil
	}
	data, err := os.ReadFile(filepath.Join(s.cg.Dir(), "cgroup.procs"))
	if err != nil {
		return nil
	}
	out := map[int]int64{}
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			continue
		}
		if st, ok := statOf(pid); ok {
			out[pid] = st.ticks
		}
	}
	return out
}

// preSteps says whether pid is a process of the container from before
// its first step (s.before, the same pid and start time) or started by
// one, at any depth: the task's environment (an image's ENTRYPOINT that
// started a server, and the workers that server forks later), which the
// harness's execs never stop. StopSteps killed them with the steps': a
// server an entrypoint started was gone when the verifier asked it,
// where Harbor's, which cuts only its exec's client at a timeout, passed
// (the eleventh attacker's 4). A process a step left behind, reparented
// to the container's first, started after the first step: it is the
// steps'.
func (s *sandbox) preSteps(pid, first int) bool {
	for depth := 0; depth < 64 && pid > 1 && pid != first; depth++ {
		st, ok := statOf(pid)
		if !ok {
			return false
		}
		if was, in := s.before[pid]; in && was == st.ticks {
			return true
		}
		pid = st.ppid
	}
	return false
}

// statOf reads a host process's /proc/<pid>/stat (parseProcStat).
func statOf(pid int) (procStat, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, false
	}
	return parseProcStat(data)
}

// killListed sends SIGKILL to each pid read from a cgroup's process list
// that is still in the cgroup (holds, given its /proc/<pid>/cgroup) and
// that skip does not keep. The list is read before the kill: a process
// that ended since may have left its pid to one outside the trial. So
// each is opened as a pidfd first (the process itself, whatever is later
// given its number), its cgroup read after the open, and the signal sent
// through the pidfd: a pid taken again before the open is seen in its
// own cgroup and left alone, after it the signal finds the pidfd's
// process gone. Where the kernel has no pidfd (before Linux 5.3: ENOSYS),
// the cgroup is checked just before a kill by pid, which narrows the
// window to those two calls but cannot close it. It returns the pids
// signalled.
func killListed(pids []int, holds func(procCgroup []byte) bool, skip func(pid int) bool) (killed []int) {
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case err == unix.ENOSYS:
			fd = -1 // no pidfd here: by pid, as before
		case err != nil:
			continue // gone (ESRCH)
		}
		if inCgroup(pid, holds) && !skip(pid) {
			if fd >= 0 {
				err = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
			} else {
				err = syscall.Kill(pid, syscall.SIGKILL)
			}
			if err == nil {
				killed = append(killed, pid)
			}
		}
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	return killed
}

// inCgroup reads a host process's /proc/<pid>/cgroup (a few hundred
// bytes; at most 64 KiB are read) and asks holds.
func inCgroup(pid int, holds func([]byte) bool) bool {
	b, _, err := readAtMost(fmt.Sprintf("/proc/%d/cgroup", pid), 64<<10)
	return err == nil && holds(b)
}

// parentPID reads a host process's parent (0 when gone).
func parentPID(pid int) int {
	st, _ := statOf(pid)
	return st.ppid
}

var _ runner.StepStopper = (*sandbox)(nil)

// checkLimit reads the limits the kernel enforces — memory, CPU, pids,
// each of which the ratio sets — and notes the first time one differs
// from its first reading: someone else changed it (docker update
// --memory, --cpus, --pids-limit) while the trial ran. Called with
// waitMu held: by the sampler about once a second, and at the trial's
// end.
func (s *sandbox) checkLimit() {
	var changed []string
	if limit, ok := s.cg.MemoryLimit(); ok {
		switch {
		case !s.limitRead:
			s.limitFirst, s.limitRead = limit, true
		case limit != s.limitFirst:
			changed = append(changed, "memory "+limitText(s.limitFirst)+" to "+limitText(limit))
		}
	}
	if cpus, ok := s.cg.CPULimit(); ok {
		switch {
		case !s.cpuRead:
			s.cpuFirst, s.cpuRead = cpus, true
		case math.Abs(cpus-s.cpuFirst) > 0.001:
			changed = append(changed, "CPUs "+cpuText(s.cpuFirst)+" to "+cpuText(cpus))
		}
	}
	if pids, ok := s.cg.PidsMax(); ok {
		switch {
		case !s.pidsRead:
			s.pidsFirst, s.pidsRead = pids, true
		case pids != s.pidsFirst:
			changed = append(changed, "pids "+countText(s.pidsFirst)+" to "+countText(pids))
		}
	}
	// The rest the ratio or the task sets, and what it does not but an
	// update may (cpuset: the CPUs it may run on), as the files say.
	other := s.cg.OtherLimits()
	if s.otherFirst == nil {
		s.otherFirst = other
	} else {
		for _, name := range slices.Sorted(maps.Keys(s.otherFirst)) {
			if now, ok := other[name]; ok && now != s.otherFirst[name] {
				changed = append(changed, fmt.Sprintf("%s %s to %s", name, fileText(s.otherFirst[name]), fileText(now)))
			}
		}
	}
	if len(changed) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limitChange == "" {
		s.limitChange = strings.Join(changed, ", ")
	}
}

// fileText is a cgroup file's value as said in a change: an empty file
// (v2's cpuset.cpus: its parent's) named.
func fileText(v string) string {
	if v == "" {
		return "unset (all)"
	}
	return strconv.Quote(v)
}

func cpuText(c float64) string {
	if c == 0 {
		return "no limit"
	}
	return strconv.FormatFloat(c, 'f', -1, 64)
}

func countText(n int64) string {
	if n == 0 {
		return "no limit"
	}
	return strconv.FormatInt(n, 10)
}

func limitText(b int64) string {
	if b == 0 {
		return "no limit"
	}
	return model.FormatBytes(b)
}

// lastRead is a reader that says when it last returned data.
type lastRead struct {
	r    io.Reader
	mu   sync.Mutex
	last time.Time
}

func (l *lastRead) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if n > 0 {
		l.mu.Lock()
		l.last = time.Now()
		l.mu.Unlock()
	}
	return n, err
}

func (l *lastRead) at() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}
