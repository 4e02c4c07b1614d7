package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/verdict"
)

// trialRun is one trial in flight.
type trialRun struct {
	r     *Runner
	trial model.Trial
	task  model.Task
	emit  func(event.Event)
	res   model.TrialResult
	// outputBudget is what is left of the record's TrialOutputBytes.
	outputBudget int

	mu        sync.Mutex
	step      string // current step name
	stepStart time.Time
	index     int // index of the next step to start
	stepPeak  int64
	lastWS    int64
	// noCache is the step's kernel peak less reclaimable cache.
	noCache   noCachePeak
	kills     int           // OOM kills seen (max over sources)
	oomNotify chan struct{} // closed and replaced on each new kill
	// verdictNote says why a verifier judged by its reward file or its
	// output failed.
	verdictNote string
	// transcript holds the verifier's output for a parser to judge, while
	// the verifier runs (nil otherwise).
	transcript *verdict.Transcript
	// ends are the steps that ended each step's script, in order.
	ends    []stepEnd
	samples int
	firstAt time.Time
	lastAt  time.Time
	// The current step's time at the limit and its major faults so far.
	stepAtLimit      time.Duration
	stepFaultsFirst  int64
	stepFaultsLast   int64
	stepFaultsOpened bool
	// The host over the trial: read from its samples, at most once a second.
	host hostOver
	// peakBeforeKill is the kernel's peak read before headroom killed a
	// step (after the kill the cgroup is gone and reads nothing).
	peakBeforeKill int64
	// engineErr is the engine's failure under the trial, if any.
	engineErr error
	// exited says how the container ended by itself, when a step failed
	// on the engine (ExitWitness).
	exited string
	// The machine's word on a step's ENOSPC (DiskWitness): the full
	// filesystem it found, else the room it saw, and whether it could
	// look; noSpaceLine is the first line that said it.
	diskFull, diskRoom string
	diskLooked         bool
	noSpaceLine        string
	procs              procTracker
	// shows are the trial's steps' commands by step name (stepShow).
	shows map[string]string
	// keepOnTimeout stops only a timed-out step's processes, where the
	// sandbox can, and keeps the container (a multi-step task's agent).
	keepOnTimeout bool
	// separateUse is a separate verifier's container's use.
	separateUse *model.SidecarUsage
	// steps is the trial's steps' CPU wait and the host's pressure over
	// them, for its noise record.
	steps stepNoise
	// stopped frees the trial's slot: called once its container is dead.
	stopped func()
}

// stepNoise sums, over a trial's steps, the CPU its threads waited for,
// their wall time, and the host's CPU pressure while they ran.
type stepNoise struct {
	wait    time.Duration
	waitOK  bool
	wall    time.Duration
	cpuSome int64 // µs of host CPU pressure, some
	psiWall time.Duration
}

// cpuWait reads a sandbox's CPU wait where it can say one.
func cpuWait(sb Sandbox) (time.Duration, bool) {
	if w, ok := sb.(CPUWaiter); ok {
		return w.CPUWait()
	}
	return 0, false
}

func (t *trialRun) base() event.Base { return event.Base{Trial: t.trial.ID, Time: time.Now()} }

func (t *trialRun) run(ctx context.Context) model.TrialResult {
	res := &t.res
	res.Start = time.Now()
	res.Verdict = t.task.Verdict.String()

	if ctx.Err() != nil {
		res.Outcome, res.Reason, res.End = model.Cancelled, "cancelled before it started", time.Now()
		return *res
	}
	// A platform that places sandboxes itself (a pod the scheduler cannot
	// place yet) says why it waits, as admission does.
	waiting := WithWaiting(ctx, func(reason string) {
		t.emit(event.TrialWaiting{Base: t.base(), Reason: reason})
	})
	defer TimePhase(t.trial.ID, "trial")()
	t.emit(event.TrialCreating{Base: t.base()})
	started := TimePhase(t.trial.ID, "sandbox start")
	sb, err := t.r.backend.Start(waiting, t.r.cfg.Experiment, t.trial, t.task)
	started()
	if err != nil {
		res.End = time.Now()
		switch {
		case errors.Is(err, ErrPlatformGone):
			// Not this trial's doing, nor the next one's: the sweep stops.
			t.r.stopSweep(err)
			res.Outcome, res.Reason = model.InfraError, err.Error()
		case ctx.Err() != nil:
			res.Outcome, res.Reason = model.Cancelled, "cancelled while the container was starting"
		default:
			res.Outcome, res.Reason = model.InfraError, err.Error()
		}
		return *res
	}
	res.ContainerID = sb.ID()
	if qw, ok := sb.(QueueWaiter); ok {
		res.QueuedFor += model.Duration(qw.QueuedFor())
	}
	res.SampleSource = sb.SampleSource()
	res.StepRunner = sb.StepRunner()
	if pm, ok := sb.(PeakModer); ok {
		res.PeakMode = pm.PeakMode()
	}
	t.oomNotify = make(chan struct{})
	t.emit(event.TrialStarted{Base: t.base(), ContainerID: sb.ID(), Image: t.task.Image, SampleSource: sb.SampleSource()})

	monitorDone := make(chan struct{})
	go t.monitor(sb, monitorDone)
	procsDone := make(chan struct{})
	if pw, ok := sb.(ProcessWatcher); ok && pw.ProcessSource() != "" {
		res.ProcessSource = pw.ProcessSource()
		go t.watchProcs(pw, procsDone)
	} else {
		close(procsDone)
	}

	ev := model.Evidence{}
	env := []string{"HEADROOM_SEED=" + strconv.FormatUint(t.trial.Seed, 10), "HEADROOM_TRIAL=" + t.trial.ID}

	// The agent's steps share one deadline; a failing step ends the agent
	// (its later steps would build on nothing) but the verifier still runs.
	agent, _ := t.task.Agent(t.trial.Agent)
	installed, engineErr := t.install(ctx, sb, agent, env, &ev)
	// A multi-step task runs its phases, each with its own agent steps
	// and verifier (phases.go).
	phased := len(t.task.Phases) > 0
	if phased {
		if installed && engineErr == nil {
			engineErr = t.runPhases(ctx, sb, agent, env, &ev)
		}
		agent.Steps = nil
	}
	// The network in force, and the agent's own for its phase.
	netNow := t.task.BaselinePolicy()
	if t.task.AgentNetwork != nil && len(agent.Steps) > 0 && installed && engineErr == nil {
		if netNow, err = t.setNetwork(ctx, sb, t.task.AgentNetwork, &netNow); err != nil {
			engineErr, installed = err, false
		}
	}
	agentCtx, cancelAgent := context.WithTimeout(ctx, t.agentTimeout(agent))
	agentStart := time.Now()
	for _, st := range agent.Steps {
		if !installed {
			break
		}
		sr, err := t.runStep(agentCtx, sb, "agent", st, env)
		if sr.TimedOut {
			ev.TimedOut, ev.TimedOutPhase = true, "agent"
		}
		if err != nil {
			engineErr = fmt.Errorf("step %s: %w", st.Name, err)
		}
		if sr.ExitCode != 0 || sr.TimedOut || ctx.Err() != nil || err != nil {
			break
		}
	}
	cancelAgent()
	if res.Knobs != nil && !t.trial.Ratio.Knobs.Time.IsBase() && installed && len(agent.Steps) > 0 {
		// What the time limit left the agent: its steps' wall time.
		res.Knobs.Measured = append(res.Knobs.Measured, model.Measure{Name: "agent_time", Value: time.Since(agentStart).Seconds(), Unit: "s", Where: "runner"})
	}

	if !phased && !ev.TimedOut && ctx.Err() == nil && engineErr == nil {
		// Collect hooks run under the container's own policy, after the
		// agent's (Harbor's phase override ends with its phase).
		if netNow, err = t.setNetwork(ctx, sb, nil, &netNow); err != nil {
			engineErr = err
		} else {
			engineErr = t.runCollect(ctx, sb, env)
		}
	}
	if !phased && !ev.TimedOut && ctx.Err() == nil && engineErr == nil && t.task.SeparateVerifier != nil {
		got, err := t.runSeparate(ctx, sb, env)
		engineErr = err
		ev.TimedOut = got.sr.TimedOut
		if got.sr.TimedOut {
			ev.TimedOutPhase = "verifier"
		}
		ev.VerifierPassed = got.judged && got.passed && err == nil
	} else if !phased && !ev.TimedOut && ctx.Err() == nil && engineErr == nil {
		if _, err := t.setNetwork(ctx, sb, t.task.VerifierNetwork, &netNow); err != nil {
			engineErr = err
		}
	}
	interfered := false // the task kept headroom from clearing the reward files
	if !phased && !ev.TimedOut && ctx.Err() == nil && engineErr == nil && t.task.SeparateVerifier == nil {
		if rule := t.task.Verdict.Reward; rule != nil {
			// The verdict is the verifier's: a reward file the agent wrote
			// (or a directory in its place) is gone before the verifier
			// runs, as a phase's verifier starts from an empty directory
			// (a separate verifier starts in a fresh container).
			paths := []string{path.Join(rule.Dir, "reward.txt"), path.Join(rule.Dir, "reward.json")}
			if err := t.clear(ctx, sb, paths); errors.Is(err, ErrTaskInterfered) {
				t.verdictNote, interfered = "clearing the reward files: "+err.Error(), true
			} else if err != nil {
				engineErr = fmt.Errorf("clearing the reward files: %w", err)
			}
		}
	}
	if !phased && !ev.TimedOut && ctx.Err() == nil && engineErr == nil && t.task.SeparateVerifier == nil && !interfered {
		vctx, cancelV := context.WithTimeout(ctx, t.task.VerifierTimeout)
		if t.task.Verdict.Parser != "" {
			t.transcript = &verdict.Transcript{}
		}
		sr, err := t.runStep(vctx, sb, "verifier", t.task.Verifier, env)
		if err != nil {
			engineErr = fmt.Errorf("verifier: %w", err)
		}
		ev.TimedOut = sr.TimedOut
		if sr.TimedOut {
			ev.TimedOutPhase = "verifier"
		}
		ev.VerifierPassed = sr.ExitCode == 0 && !sr.TimedOut && ctx.Err() == nil && err == nil
		judged := err == nil && !sr.TimedOut && ctx.Err() == nil
		if rule := t.task.Verdict.Reward; rule != nil && judged {
			// The read has its own bound, not what the verifier left of its time.
			ev.VerifierPassed, t.verdictNote, err = t.readReward(ctx, sb, rule)
			if err != nil {
				engineErr = fmt.Errorf("reading the reward: %w", err)
			}
		}
		if parser := t.task.Verdict.Parser; parser != "" && judged {
			ev.VerifierPassed, t.verdictNote = t.judgeOutput(parser)
		}
		t.transcript = nil
		cancelV()
	}
	ev.Cancelled = ctx.Err() != nil
	// The engine failing under a trial (daemon stopped, connection lost)
	// says nothing about the task: an infrastructure error.
	ev.InfraFailed = engineErr != nil && !ev.Cancelled

	// Remove even when the sweep is cancelled: nothing may be left behind.
	rmCtx, cancelRm := context.WithTimeout(context.Background(), 30*time.Second)
	if w, ok := sb.(ExitWitness); ok && ev.InfraFailed {
		// The engine refusing a step of a container that had ended by
		// itself is the task's doing, not the engine's.
		t.exited = w.ExitedItself(rmCtx)
	}
	if st, ok := sb.(Stopper); ok {
		// Dead before its slot goes to the next trial; removed beside it.
		stopping := TimePhase(t.trial.ID, "stop")
		err := st.Stop(rmCtx)
		stopping()
		if err == nil && t.stopped != nil {
			t.stopped()
		}
	}
	removed := TimePhase(t.trial.ID, "remove")
	final, rmErr := sb.Remove(rmCtx)
	removed()
	cancelRm()
	<-monitorDone
	<-procsDone
	res.End = time.Now()

	t.mu.Lock()
	if final.OOMKilled && t.kills == 0 {
		// The engine saw a kill no live signal caught (e.g. a remote engine).
		t.kills = 1
		res.OOMs = append(res.OOMs, model.OOMEvent{At: res.End, Source: "inspect", WorkingSetBytes: t.lastWS})
	}
	ev.OOMKills = t.kills
	res.Samples = t.samples
	if t.samples > 1 {
		if secs := t.lastAt.Sub(t.firstAt).Seconds(); secs > 0 {
			res.SampleRateHz = float64(t.samples-1) / secs
		}
	}
	t.mu.Unlock()
	res.StateOOMKilled = final.OOMKilled
	if final.Knobs != nil {
		if res.Knobs == nil {
			res.Knobs = &model.KnobRecord{}
		}
		res.Knobs.Applied = append(res.Knobs.Applied, final.Knobs.Applied...)
		res.Knobs.Skipped = append(res.Knobs.Skipped, final.Knobs.Skipped...)
		res.Knobs.Measured = append(res.Knobs.Measured, final.Knobs.Measured...)
		res.Knobs.Neighbours = append(res.Knobs.Neighbours, final.Knobs.Neighbours...)
	}
	res.SamplesDropped = final.DroppedSamples
	res.Sidecars = final.Sidecars
	res.PidsLimitEnforced = final.PidsLimitEnforced
	if t.separateUse != nil {
		res.Sidecars = append(res.Sidecars, *t.separateUse)
		if note := separateNote(t.separateUse, t.task.SeparateVerifier); note != "" && !ev.VerifierPassed {
			t.verdictNote = note
		}
	}
	if final.KernelPeakBytes > res.KernelPeakBytes {
		res.KernelPeakBytes = final.KernelPeakBytes
		t.mu.Lock()
		res.KernelPeakNoCacheBytes = max(res.KernelPeakNoCacheBytes, t.noCache.after(final.KernelPeakBytes))
		t.mu.Unlock()
	}
	if len(res.OOMs) > 0 {
		res.KilledInStep = res.OOMs[0].Step
	}
	if p, ok := model.SummarizePhase(res.Steps, model.PhaseInstall); ok {
		res.Install = &p
	}
	t.engineErr = engineErr
	t.attributionEvidence(&ev, final)
	res.Outcome, res.Cause = model.Classify(ev)
	res.Stall = ev.Stall
	res.Reason = t.reason(ev)
	switch {
	case ev.ContainerExited != "" && res.Outcome == model.Failed && res.Cause == model.CauseNone:
		res.Reason = fmt.Sprintf("the task's container exited by itself (%s) during step %s: the task's own failure, not the engine's", ev.ContainerExited, t.lastStep())
	case res.Cause == model.CauseNone && ev.InfraFailed && res.Outcome == model.InfraError:
		res.Reason = "the engine failed: " + engineErr.Error()
	}
	if t.noSpaceLine != "" && !ev.DiskFull && t.diskLooked && !res.Outcome.Success() {
		res.Reason += fmt.Sprintf("; its output said %q, but no filesystem of its container was full when it said it or when the step ended (%s): the task's words, not a full disk", clip(t.noSpaceLine, 200), t.diskRoom)
	}
	res.Reason = t.r.redact(res.Reason)
	if rmErr != nil {
		res.Reason += fmt.Sprintf(" (removing the container failed: %v; run `headroom clean`)", rmErr)
	}
	return *res
}

func (t *trialRun) reason(ev model.Evidence) string {
	res := &t.res
	if why := t.causeReason(ev); why != "" {
		return why
	}
	switch outcome, _ := model.Classify(ev); outcome {
	case model.Cancelled:
		return "cancelled"
	case model.PassedAfterOOM:
		return fmt.Sprintf("verifier passed after %d OOM kill(s), first in step %s", ev.OOMKills, res.KilledInStep)
	case model.PassedAfterTimeout:
		return "the agent ran past its time limit; the verifier, run after it as Harbor and terminal-bench run it, passed"
	case model.OOMKilled:
		return fmt.Sprintf("OOM-killed in step %s at limit %s", res.KilledInStep, res.Policy.LimitString())
	case model.Timeout:
		return "ran past its time limit"
	case model.Failed:
		// A traced script's commands may fail on the way (a grep in an
		// if); what ended the script is what failed the trial.
		// The verifier's verdict first, as the task's harness reports the
		// trial; an agent step that failed on the way is said after it.
		var agentEnd string
		for _, e := range t.ends {
			if s := res.Steps[e.step]; e.code != 0 && (s.Phase == model.PhaseAgent || s.Phase == model.PhaseInstall) {
				agentEnd = fmt.Sprintf("step %s exited %d", s.Name, e.code)
				break
			}
		}
		switch {
		case t.verdictNote != "" && agentEnd != "":
			return t.verdictNote + "; the agent's " + agentEnd
		case agentEnd != "":
			return agentEnd
		case t.verdictNote != "":
			return t.verdictNote
		}
		for _, e := range t.ends {
			if e.code != 0 {
				return fmt.Sprintf("step %s exited %d", res.Steps[e.step].Name, e.code)
			}
		}
		return "verifier failed"
	}
	return ""
}

// tracedName names a step after the command it ran, short.
func tracedName(cmd string) string {
	cmd = strings.Join(strings.Fields(cmd), " ")
	if r := []rune(cmd); len(r) > 48 {
		cmd = string(r[:47]) + "…"
	}
	if cmd == "" {
		cmd = "(empty)"
	}
	return cmd
}

// openStep is a step being recorded.
type openStep struct {
	sr model.StepResult
	// head is the step's first lines of output, lines its latest.
	head      []string
	cpuBefore model.CPUUse
	cpuOK     bool
	// The container's CPU wait and the host's pressure when it opened.
	waitBefore  time.Duration
	waitOK      bool
	psiBefore   pressure
	lines       []string
	killsBefore int
	// settled says a traced command's exit status is known.
	settled bool
}

// openStep starts recording a step: its own kernel peak, peak and kills.
func (t *trialRun) openStep(sb Sandbox, phase string, st model.Step) *openStep {
	sb.TakeKernelPeak() // reset, so the next reading is this step's own
	cpu, cpuOK := sb.CPUUse()
	wait, waitOK := cpuWait(sb)
	psi := t.r.readPressure()
	// A traced command's text is the command line the shell ran: a
	// 50 MB argument is a 50 MB name, in every event and the record.
	st.Name, st.Show = clip(st.Name, OutputLineBytes), clip(st.Show, OutputLineBytes)
	t.mu.Lock()
	t.step, t.stepPeak, t.stepStart = st.Name, 0, time.Now()
	t.noCache.open()
	t.stepAtLimit, t.stepFaultsOpened = 0, false
	o := &openStep{killsBefore: t.kills, cpuBefore: cpu, cpuOK: cpuOK, waitBefore: wait, waitOK: waitOK, psiBefore: psi, sr: model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, Start: time.Now()}}
	t.mu.Unlock()
	t.emit(event.StepStarted{Base: t.base(), Index: t.index, Phase: phase, Step: st})
	t.index++
	return o
}

// The record's bounds on output: a line is cut at OutputLineBytes (the
// rest counted as dropped), a step keeps its first StepHeadLines lines and
// its last OutputTailLines (Config), and a trial's record holds at most
// TrialOutputBytes of its steps' output: a task that prints a gigabyte
// gets a record of the same size as one that prints a page, and says how
// much it left out.
const (
	OutputLineBytes  = 2000
	StepHeadLines    = 50
	TrialOutputBytes = 1 << 20
)

func (o *openStep) add(text string, keep int) {
	if len(o.head) < StepHeadLines {
		o.head = append(o.head, text)
		return
	}
	o.lines = append(o.lines, text)
	if len(o.lines) > 4*keep {
		cut := len(o.lines) - keep
		for _, l := range o.lines[:cut] {
			o.sr.OutputDroppedBytes += int64(len(l)) + 1
		}
		o.lines = append(o.lines[:0:0], o.lines[cut:]...)
		o.sr.OutputDropped += cut
	}
}

// clip cuts s to at most n bytes, at a rune's start, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// kept is the step's output as its record keeps it: its head, a line
// saying what was left out, its last keep lines, within budget (what is
// left of the trial's TrialOutputBytes; the oldest lines go first, the
// end being what says how a step failed), which it lowers.
func (o *openStep) kept(keep int, budget *int) string {
	tail := o.lines
	if len(tail) > keep {
		cut := len(tail) - keep
		for _, l := range tail[:cut] {
			o.sr.OutputDroppedBytes += int64(len(l)) + 1
		}
		o.sr.OutputDropped += cut
		tail = tail[cut:]
	}
	kept := append(slices.Clone(o.head), tail...)
	nHead := len(o.head)
	size := 0
	for _, l := range kept {
		size += len(l) + 1
	}
	for len(kept) > 0 && size > *budget {
		size -= len(kept[0]) + 1
		o.sr.OutputDroppedBytes += int64(len(kept[0])) + 1
		o.sr.OutputDropped++
		kept = kept[1:]
		nHead = max(nHead-1, 0)
	}
	*budget = max(*budget-size, 0)
	if o.sr.OutputDropped > 0 || o.sr.OutputDroppedBytes > 0 {
		note := fmt.Sprintf("[headroom: %d line(s) and %s of this step's output not kept in the record (it keeps a step's first %d and last %d lines, each up to %d bytes, and %s a trial); the trial's log.txt keeps more]",
			o.sr.OutputDropped, model.FormatBytes(o.sr.OutputDroppedBytes), StepHeadLines, keep, OutputLineBytes, model.FormatBytes(TrialOutputBytes))
		kept = slices.Insert(kept, nHead, note)
	}
	return strings.Join(kept, "\n")
}

// closeStep finishes a step's record and reports it.
func (t *trialRun) closeStep(sb Sandbox, o *openStep) model.StepResult {
	out := o.kept(t.r.cfg.OutputTailLines, &t.outputBudget)
	sr := o.sr
	sr.End = time.Now()
	sr.Output = out
	t.res.OutputDroppedBytes += sr.OutputDroppedBytes
	kp, ok := sb.TakeKernelPeak()
	if p := t.r.readPressure(); p.ok && o.psiBefore.ok {
		t.steps.cpuSome += p.cpuSome - o.psiBefore.cpuSome
		t.steps.psiWall += p.at.Sub(o.psiBefore.at)
	}
	t.steps.wall += sr.End.Sub(sr.Start)
	if cpu, cpuOK := sb.CPUUse(); cpuOK && o.cpuOK {
		use := cpu.Sub(o.cpuBefore)
		sr.CPU = &use
		total := use
		if t.res.CPU != nil {
			total = t.res.CPU.Add(use)
		}
		t.res.CPU = &total
	}
	if w, ok := cpuWait(sb); ok && o.waitOK {
		// A thread its own CPU limit holds back waits too: that time is
		// the limit's (throttling), not the host's.
		wait := w - o.waitBefore
		if sr.CPU != nil {
			wait -= time.Duration(sr.CPU.ThrottledNanos)
		}
		wait = max(wait, 0)
		sr.CPUWait = model.Duration(wait)
		t.steps.wait += wait
		t.steps.waitOK = true
	}
	t.mu.Lock()
	if ok {
		sr.KernelPeakBytes = kp
	}
	sr.KernelPeakBytes = max(sr.KernelPeakBytes, t.peakBeforeKill)
	t.peakBeforeKill = 0
	sr.KernelPeakNoCacheBytes = t.noCache.close(sr.KernelPeakBytes)
	t.res.KernelPeakNoCacheBytes = max(t.res.KernelPeakNoCacheBytes, sr.KernelPeakNoCacheBytes)
	sr.PeakWorkingSetBytes = t.stepPeak
	sr.OOMKills = t.kills - o.killsBefore
	sr.AtLimit = model.Duration(t.stepAtLimit)
	if t.stepFaultsOpened {
		sr.MajorFaults = t.stepFaultsLast - t.stepFaultsFirst
	}
	// Under the lock: a late kill's notice finds its step here (killedIn).
	t.res.Steps = append(t.res.Steps, sr)
	t.mu.Unlock()
	if sr.KernelPeakBytes > t.res.KernelPeakBytes {
		t.res.KernelPeakBytes = sr.KernelPeakBytes
	}
	t.emit(event.StepEnded{Base: t.base(), Result: sr})
	return sr
}

// runStep runs one step and records it; a traced step is recorded as the
// commands its script ran, each with its own exit status. The result
// carries the step's (the whole script's) exit code and whether it timed
// out. The error is the engine's, not the step's: the step's own failure
// is its exit code.
func (t *trialRun) runStep(ctx context.Context, sb Sandbox, phase string, st model.Step, env []string) (model.StepResult, error) {
	if len(st.Files) > 0 {
		copied := TimePhase(t.trial.ID, "copy in")
		err := sb.CopyIn(ctx, st.Files)
		copied()
		if err != nil {
			t.emit(event.OutputLine{Base: t.base(), Step: st.Name, Stream: "stderr", Text: "headroom: " + err.Error()})
			return model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, ExitCode: -1}, err
		}
	}
	defer TimePhase(t.trial.ID, phase+" step")()
	env = append(append([]string(nil), env...), st.Env...)
	for _, entry := range append(append([]string(nil), t.task.PassEnv...), st.PassEnv...) {
		env = append(env, passEnvValue(entry, t.r.cfg.Secrets))
	}
	argv := st.Argv
	var cur *openStep
	var tr *tracedRun
	saidNoSpace := false
	first := len(t.res.Steps)
	if st.Trace {
		argv = traceArgv(st.Argv)
		tr = &tracedRun{book: newStatusBook(), closed: map[int]int{}, cur: -1, nonce: newTraceNonce()}
		env = append(env, TraceNonceVar+"="+tr.nonce)
		// Until the script's first command the step is the whole script;
		// it is opened only if something happens before that command.
		t.mu.Lock()
		t.step = st.Name
		t.mu.Unlock()
	} else {
		cur = t.openStep(sb, phase, st)
	}
	output := func(stream, text string) {
		full := len(text)
		text = clip(text, OutputLineBytes)
		if cur == nil {
			cur = t.openStep(sb, phase, st)
		}
		if full > OutputLineBytes {
			cur.sr.OutputDroppedBytes += int64(full - OutputLineBytes)
		}
		if model.NoSpaceInOutput(text) {
			cur.sr.NoSpace, saidNoSpace = true, true
			if t.noSpaceLine == "" {
				t.noSpaceLine = text
				t.lookAtDisks(sb) // while the write that failed may still fill it
			}
		}
		if m, ok := model.ParseMeasure(text); ok {
			// A knob's effect as the task measured it inside the container
			// (in a plain column too: its baseline).
			m.Step = cur.sr.Name
			t.mu.Lock()
			if t.res.Knobs == nil {
				t.res.Knobs = &model.KnobRecord{}
			}
			t.res.Knobs.Measured = append(t.res.Knobs.Measured, m)
			t.mu.Unlock()
		}
		cur.add(text, t.r.cfg.OutputTailLines)
		t.emit(event.OutputLine{Base: t.base(), Step: cur.sr.Name, Stream: stream, Text: text})
	}
	// partial is output whose line a trace line ended: for the parser it
	// continues on the next line of output, as without the trace.
	var partial string
	res, err := sb.Exec(ctx, argv, env, t.stepUser(phase, st), func(stream, text string) {
		text = t.r.redact(text)
		if tr == nil {
			t.transcript.Add(text) // whole, before output shortens it
			output(stream, text)
			return
		}
		text, m := splitTrace(text, tr.nonce)
		if m == nil {
			t.transcript.Add(partial + text)
			partial = ""
		} else {
			partial += text // the trace never reaches the parser
		}
		if text != "" || m == nil {
			output(stream, text) // a command's last line, unterminated
		}
		switch {
		case m == nil:
		case m.depth > 1:
			output(stream, nestedTrace(*m))
		default:
			n, joined := tr.book.mark(*m)
			if joined && cur != nil {
				// Another command of the running pipeline.
				cur.sr.Show = tr.book.show(n)
				cur.sr.Name = tracedName(cur.sr.Show)
				return
			}
			t.settle(tr, cur)
			if cur != nil {
				tr.close(t, sb, cur)
			}
			cur = nil
			if n >= 0 {
				cur = t.openStep(sb, phase, model.Step{Name: tracedName(m.cmd), Show: m.cmd})
				tr.cur = n
			}
		}
	})
	code := res.ExitCode
	var engineErr error
	if err != nil && !errorsIsCtx(err) && !errors.Is(err, ErrTaskInterfered) {
		engineErr = err // a reply the task garbled is the step's failure
	}
	if saidNoSpace && t.diskFull == "" {
		t.lookAtDisks(sb) // and when the step ended
	}
	timedOut := false
	if err != nil {
		timedOut = ctx.Err() == context.DeadlineExceeded
		// Stop what is still running: on timeout the container is done
		// for, on cancellation it is about to be removed. Its peak first:
		// the kill takes the cgroup with it.
		if kp, ok := sb.TakeKernelPeak(); ok {
			t.mu.Lock()
			t.peakBeforeKill = kp
			t.mu.Unlock()
		}
		killCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if ss, ok := sb.(StepStopper); !ok || !t.keepOnTimeout || !timedOut || ss.StopSteps(killCtx) != nil {
			_ = sb.Kill(killCtx)
		}
		cancel()
		if code == 0 {
			code = -1
		}
	}
	if partial != "" {
		t.transcript.Add(partial)
	}
	if tr != nil {
		tr.book.finish(code)
		t.settle(tr, cur)
	}
	if cur == nil && (tr == nil || tr.book.next == 0) {
		cur = t.openStep(sb, phase, st) // the script ran no command
	}
	if cur != nil && (tr == nil || tr.cur < 0) {
		// Not traced, or no command of the script: the step is the script.
		cur.sr.ExitCode, cur.sr.ExitUnknown, cur.settled = code, "", true
	}
	var errLine string
	if err != nil && !errorsIsCtx(err) {
		errLine = "headroom: " + t.r.redact(err.Error())
	}
	if cur != nil {
		cur.sr.TimedOut = timedOut
		if errLine != "" {
			cur.lines = append(cur.lines, errLine)
		}
		killsBefore := cur.killsBefore
		switch {
		case code == 137:
			t.awaitOOM(killsBefore, t.r.cfg.OOMSettle)
		case code != 0 && !timedOut:
			// A step that fails because a child was killed exits at once;
			// give the kernel's notice a moment to catch up.
			t.awaitOOM(killsBefore, t.r.cfg.OOMSettle/4)
		}
		if tr != nil {
			tr.close(t, sb, cur)
		} else {
			t.closeStep(sb, cur)
		}
	} else if last := &t.res.Steps[len(t.res.Steps)-1]; timedOut || errLine != "" {
		// The script had ended (its EXIT trap ran) when the step was
		// stopped: the stop belongs to its last command.
		last.TimedOut = last.TimedOut || timedOut
		if errLine != "" {
			last.Output = strings.TrimPrefix(last.Output+"\n"+errLine, "\n")
		}
	}
	t.ends = append(t.ends, stepEnd{step: t.endingStep(first, code), code: code})
	return model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, ExitCode: code, TimedOut: timedOut}, engineErr
}

// lookAtDisks reads the room of the sandbox's filesystems, where the
// platform can: a step's ENOSPC is a full disk only if one of them had
// none (model.FSRoom.Full).
func (t *trialRun) lookAtDisks(sb Sandbox) {
	w, ok := sb.(DiskWitness)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rooms, err := w.DiskRoom(ctx)
	if err != nil {
		return
	}
	t.diskLooked = true
	if full := model.FullDisk(rooms); full != "" {
		t.diskFull = full
		return
	}
	var parts []string
	for i, r := range rooms {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("%d more with room", len(rooms)-i))
			break
		}
		parts = append(parts, r.String())
	}
	t.diskRoom = strings.Join(parts, ", ")
}

// tracedRun is a traced step's state: the trace split from the output,
// the statuses worked out, and where each command's step is.
type tracedRun struct {
	book *statusBook
	// closed maps a command's number to its step's index in the result.
	closed map[int]int
	cur    int // the open step's command number, -1 for none
	// nonce is in this step's trace lines only (see TraceNonceVar).
	nonce string
}

// notYet is a closed step's status while its shell has not reported it.
const notYet = "not reported yet: its shell reports it when its next command starts"

// close records the open step, with its status or notYet.
func (tr *tracedRun) close(t *trialRun, sb Sandbox, o *openStep) {
	if tr.cur >= 0 && !o.settled {
		o.sr.ExitCode, o.sr.ExitUnknown = -1, notYet
	}
	if tr.cur < 0 && !o.settled {
		// Output before the script's first command: not a command.
		o.sr.ExitCode, o.sr.ExitUnknown = -1, "not a command: what the script printed before its first command"
	}
	t.closeStep(sb, o)
	if tr.cur >= 0 {
		tr.closed[tr.cur] = len(t.res.Steps) - 1
	}
	tr.cur = -1
}

// settle applies the statuses the book has learnt: to the open step, or
// to a recorded one (whose live event said notYet).
func (t *trialRun) settle(tr *tracedRun, cur *openStep) {
	for _, s := range tr.book.take() {
		if s.step == tr.cur && cur != nil {
			cur.sr.ExitCode, cur.sr.PipeStatus, cur.sr.ExitUnknown, cur.settled = s.code, s.pipe, s.unknown, true
			continue
		}
		if i, ok := tr.closed[s.step]; ok {
			r := &t.res.Steps[i]
			r.ExitCode, r.PipeStatus, r.ExitUnknown = s.code, s.pipe, s.unknown
		}
	}
}

// stepEnd is a step's end as the trial's reason names it: the step that
// ended the script, and the script's exit code.
type stepEnd struct {
	step int // index in the result's steps
	code int
}

// endingStep is the step, of those recorded from first on, that ended a
// script with code: the last whose own status is code, else the last.
func (t *trialRun) endingStep(first, code int) int {
	last := len(t.res.Steps) - 1
	for i := last; i >= first; i-- {
		if s := t.res.Steps[i]; s.ExitUnknown == "" && s.ExitCode == code {
			return i
		}
	}
	return last
}

// awaitOOM waits, with a deadline, for the OOM signal that explains an exit
// 137: the kernel's notice can trail the process's death by a few ms.
func (t *trialRun) awaitOOM(killsBefore int, settle time.Duration) {
	deadline := time.NewTimer(settle)
	defer deadline.Stop()
	for {
		t.mu.Lock()
		if t.kills > killsBefore {
			t.mu.Unlock()
			return
		}
		ch := t.oomNotify
		t.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return
		}
	}
}

// monitor turns the sandbox's readings into events and peaks.
func (t *trialRun) monitor(sb Sandbox, done chan<- struct{}) {
	defer close(done)
	samples, ooms := sb.Samples(), sb.OOMs()
	for samples != nil || ooms != nil {
		select {
		case s, ok := <-samples:
			if !ok {
				samples = nil
				continue
			}
			t.host.see(s.Time, t.r.cfg.Host)
			t.mu.Lock()
			if t.samples == 0 {
				t.firstAt = s.Time
			}
			t.samples++
			if !t.lastAt.IsZero() && model.AtLimit(s.UsageBytes, s.WorkingSetBytes, t.trial.Policy.HardLimitBytes) {
				t.stepAtLimit += s.Time.Sub(t.lastAt)
			}
			if !t.stepFaultsOpened {
				t.stepFaultsFirst, t.stepFaultsOpened = s.MajorFaults, true
			}
			t.stepFaultsLast = s.MajorFaults
			t.lastAt = s.Time
			t.lastWS = s.WorkingSetBytes
			t.noCache.sample(s)
			if s.WorkingSetBytes > t.stepPeak {
				t.stepPeak = s.WorkingSetBytes
			}
			if s.WorkingSetBytes > t.res.PeakWorkingSetBytes {
				t.res.PeakWorkingSetBytes = s.WorkingSetBytes
			}
			t.mu.Unlock()
			t.emit(event.MemorySample{Base: event.Base{Trial: t.trial.ID, Time: s.Time}, Sample: s})
		case o, ok := <-ooms:
			if !ok {
				ooms = nil
				continue
			}
			t.mu.Lock()
			if o.Count <= t.kills {
				// The kernel's word on a kill already counted: fill in
				// what was killed, once.
				if n := len(t.res.OOMs); o.Process != "" && n > 0 && t.res.OOMs[n-1].Process == "" {
					oe := &t.res.OOMs[n-1]
					oe.Process, oe.PID, oe.RSSBytes = o.Process, o.PID, o.RSSBytes
					t.nameKill(n - 1)
					detail := *oe
					t.mu.Unlock()
					t.emit(event.OOMKill{Base: event.Base{Trial: t.trial.ID, Time: time.Now()}, OOM: detail, LimitBytes: t.trial.Policy.HardLimitBytes, Detail: true})
					continue
				}
				t.mu.Unlock()
				continue
			}
			t.kills = o.Count
			oe := model.OOMEvent{At: o.Time, Step: t.killedIn(o.Time), Source: o.Source, WorkingSetBytes: t.lastWS, Process: o.Process, PID: o.PID, RSSBytes: o.RSSBytes}
			t.res.OOMs = append(t.res.OOMs, oe)
			t.nameKill(len(t.res.OOMs) - 1)
			oe = t.res.OOMs[len(t.res.OOMs)-1]
			close(t.oomNotify)
			t.oomNotify = make(chan struct{})
			t.mu.Unlock()
			t.emit(event.OOMKill{Base: event.Base{Trial: t.trial.ID, Time: time.Now()}, OOM: oe, LimitBytes: t.trial.Policy.HardLimitBytes})
		}
	}
}

// killedIn names the step a kill at `at` landed in: the running one, or,
// when the kill's notice came late (a loaded host: the step already
// closed), the recorded step whose time holds it, whose kill count it
// joins. Called with t.mu held.
func (t *trialRun) killedIn(at time.Time) string {
	if at.IsZero() || !at.Before(t.stepStart) {
		return t.step
	}
	for i := len(t.res.Steps) - 1; i >= 0; i-- {
		s := &t.res.Steps[i]
		if !at.Before(s.Start) && !at.After(s.End) {
			s.OOMKills++
			return s.Name
		}
	}
	return t.step
}

// clear removes paths in the sandbox (through its FileRemover where it
// has one, else an exec'd rm -rf) under SandboxOpTimeout; an error
// wrapping ErrTaskInterfered is the task's doing, any other the engine's
// (nil when the trial was cancelled).
func (t *trialRun) clear(ctx context.Context, sb Sandbox, paths []string) error {
	cctx, cancel := context.WithTimeout(ctx, SandboxOpTimeout)
	defer cancel()
	done, err := false, error(nil)
	if fr, ok := sb.(FileRemover); ok {
		// No process of its own: one exec more was a step's worth of a
		// trivial task-directory trial (docs/PERFORMANCE.md).
		done, err = fr.RemoveFiles(cctx, paths)
	}
	if !done && err == nil {
		_, err = sb.Exec(cctx, append([]string{"rm", "-rf", "--"}, paths...), nil, "0", func(string, string) {})
	}
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrTaskInterfered):
		return fmt.Errorf("removing %s did not end within %s though the engine answered: %w", strings.Join(paths, " "), SandboxOpTimeout, ErrTaskInterfered)
	}
	return err
}

// readReward reads the verifier's reward file and says whether it passes,
// and if not, why. The error is the engine's.
func (t *trialRun) readReward(ctx context.Context, sb Sandbox, rule *model.RewardRule) (bool, string, error) {
	defer TimePhase(t.trial.ID, "reward read")()
	ctx, cancel := context.WithTimeout(ctx, SandboxOpTimeout)
	defer cancel()
	for _, name := range []string{"reward.txt", "reward.json"} {
		p := path.Join(rule.Dir, name)
		data, err := sb.ReadFile(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if errors.Is(err, ErrNotReadable) || errors.Is(err, ErrTaskInterfered) {
			return false, fmt.Sprintf("the verifier's %s: %v", p, err), nil // the task's doing
		}
		if err != nil {
			return false, "", err
		}
		r, err := model.ParseReward(name, data)
		if err != nil {
			return false, fmt.Sprintf("the verifier's %s: %v", p, err), nil
		}
		t.res.Reward = &r
		if r >= rule.Pass {
			return true, "", nil
		}
		return false, fmt.Sprintf("reward %g < %g (%s)", r, rule.Pass, p), nil
	}
	return false, fmt.Sprintf("the verifier wrote no reward (%s/reward.txt or reward.json)", rule.Dir), nil
}

// judgeOutput reads the verifier's output with the task's parser, as
// terminal-bench's harness does, and says whether it passed and, if not,
// why.
func (t *trialRun) judgeOutput(parser string) (bool, string) {
	j, err := verdict.Judge(parser, t.transcript.String())
	if err != nil {
		return false, err.Error()
	}
	t.res.Tests = j.Tests
	if !j.Passed && t.transcript.Dropped > 0 {
		j.Reason += fmt.Sprintf(" (the output was longer than terminal-bench's pane keeps: its first %d line(s) were not read)", t.transcript.Dropped)
	}
	return j.Passed, j.Reason
}
