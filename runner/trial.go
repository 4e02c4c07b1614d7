package runner

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// trialRun is one trial in flight.
type trialRun struct {
	r     *Runner
	trial model.Trial
	task  model.Task
	emit  func(Event)
	res   model.TrialResult

	mu        sync.Mutex
	step      string // current step name
	stepPeak  int64
	lastWS    int64
	kills     int           // OOM kills seen (max over sources)
	oomNotify chan struct{} // closed and replaced on each new kill
	samples   int
	firstAt   time.Time
	lastAt    time.Time
}

func (t *trialRun) base() Base { return Base{Trial: t.trial.ID, Time: time.Now()} }

func (t *trialRun) run(ctx context.Context) model.TrialResult {
	res := &t.res
	res.Start = time.Now()

	if ctx.Err() != nil {
		res.Outcome, res.Reason, res.End = model.Cancelled, "cancelled before it started", time.Now()
		return *res
	}
	sb, err := t.r.backend.Start(ctx, t.r.cfg.Experiment, t.trial, t.task)
	if err != nil {
		res.End = time.Now()
		if ctx.Err() != nil {
			res.Outcome, res.Reason = model.Cancelled, "cancelled while the container was starting"
		} else {
			res.Outcome, res.Reason = model.InfraError, err.Error()
		}
		return *res
	}
	res.ContainerID = sb.ID()
	res.SampleSource = sb.SampleSource()
	t.oomNotify = make(chan struct{})
	t.emit(TrialStarted{Base: t.base(), ContainerID: sb.ID(), Image: t.task.Image, SampleSource: sb.SampleSource()})

	monitorDone := make(chan struct{})
	go t.monitor(sb, monitorDone)

	ev := model.Evidence{}
	env := []string{"HEADROOM_SEED=" + strconv.FormatUint(t.trial.Seed, 10), "HEADROOM_TRIAL=" + t.trial.ID}

	// The agent's steps share one deadline; a failing step ends the agent
	// (its later steps would build on nothing) but the verifier still runs.
	agent, _ := t.task.Agent(t.trial.Agent)
	agentCtx, cancelAgent := context.WithTimeout(ctx, t.task.AgentTimeout)
	var engineErr error
	for i, st := range agent.Steps {
		sr, err := t.runStep(agentCtx, sb, i, "agent", st, env)
		if sr.TimedOut {
			ev.TimedOut = true
		}
		if err != nil {
			engineErr = fmt.Errorf("step %s: %w", st.Name, err)
		}
		if sr.ExitCode != 0 || sr.TimedOut || ctx.Err() != nil || err != nil {
			break
		}
	}
	cancelAgent()

	if !ev.TimedOut && ctx.Err() == nil && engineErr == nil {
		vctx, cancelV := context.WithTimeout(ctx, t.task.VerifierTimeout)
		sr, err := t.runStep(vctx, sb, len(agent.Steps), "verifier", t.task.Verifier, env)
		cancelV()
		if err != nil {
			engineErr = fmt.Errorf("verifier: %w", err)
		}
		ev.TimedOut = sr.TimedOut
		ev.VerifierPassed = sr.ExitCode == 0 && !sr.TimedOut && ctx.Err() == nil && err == nil
	}
	ev.Cancelled = ctx.Err() != nil
	// The engine failing under a trial (daemon stopped, connection lost)
	// says nothing about the task: an infrastructure error.
	ev.InfraFailed = engineErr != nil && !ev.Cancelled

	// Remove even when the sweep is cancelled: nothing may be left behind.
	rmCtx, cancelRm := context.WithTimeout(context.Background(), 30*time.Second)
	final, rmErr := sb.Remove(rmCtx)
	cancelRm()
	<-monitorDone
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
	if final.KernelPeakBytes > res.KernelPeakBytes {
		res.KernelPeakBytes = final.KernelPeakBytes
	}
	if len(res.OOMs) > 0 {
		res.KilledInStep = res.OOMs[0].Step
	}
	res.Outcome = model.Classify(ev)
	res.Reason = t.reason(ev)
	if ev.InfraFailed {
		res.Reason = "the engine failed: " + engineErr.Error()
	}
	if rmErr != nil {
		res.Reason += fmt.Sprintf(" (removing the container failed: %v; run `headroom clean`)", rmErr)
	}
	return *res
}

func (t *trialRun) reason(ev model.Evidence) string {
	res := &t.res
	switch model.Classify(ev) {
	case model.Cancelled:
		return "cancelled"
	case model.PassedAfterOOM:
		return fmt.Sprintf("verifier passed after %d OOM kill(s), first in step %s", ev.OOMKills, res.KilledInStep)
	case model.OOMKilled:
		return fmt.Sprintf("OOM-killed in step %s at limit %s", res.KilledInStep, res.Policy.LimitString())
	case model.Timeout:
		return "ran past its time limit"
	case model.Failed:
		for _, s := range res.Steps {
			if s.ExitCode != 0 {
				return fmt.Sprintf("step %s exited %d", s.Name, s.ExitCode)
			}
		}
		return "verifier failed"
	}
	return ""
}

// runStep runs one step and records it. The error is the engine's, not the
// step's: the step's own failure is its exit code.
func (t *trialRun) runStep(ctx context.Context, sb Sandbox, index int, phase string, st model.Step, env []string) (model.StepResult, error) {
	sb.TakeKernelPeak() // reset, so the next reading is this step's own
	t.mu.Lock()
	t.step, t.stepPeak = st.Name, 0
	killsBefore := t.kills
	t.mu.Unlock()
	sr := model.StepResult{Name: st.Name, Show: st.Show, Phase: phase, Start: time.Now()}
	t.emit(StepStarted{Base: t.base(), Index: index, Phase: phase, Step: st})

	var lines []string
	res, err := sb.Exec(ctx, st.Argv, append(append([]string(nil), env...), st.Env...), func(stream, text string) {
		if len(text) > 2000 {
			text = text[:2000] + "…"
		}
		lines = append(lines, text)
		if len(lines) > 4*t.r.cfg.OutputTailLines {
			lines = append(lines[:0:0], lines[len(lines)-t.r.cfg.OutputTailLines:]...)
			sr.OutputDropped += 3 * t.r.cfg.OutputTailLines
		}
		t.emit(OutputLine{Base: t.base(), Step: st.Name, Stream: stream, Text: text})
	})
	sr.ExitCode = res.ExitCode
	var engineErr error
	if err != nil && !errorsIsCtx(err) {
		engineErr = err
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			sr.TimedOut = true
		}
		// Stop what is still running: on timeout the container is done
		// for, on cancellation it is about to be removed.
		killCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = sb.Kill(killCtx)
		cancel()
		if sr.ExitCode == 0 {
			sr.ExitCode = -1
		}
		if !errorsIsCtx(err) {
			lines = append(lines, "headroom: "+err.Error())
		}
	}
	switch {
	case sr.ExitCode == 137:
		t.awaitOOM(killsBefore, t.r.cfg.OOMSettle)
	case sr.ExitCode != 0 && !sr.TimedOut:
		// A step that fails because a child was killed exits at once;
		// give the kernel's notice a moment to catch up.
		t.awaitOOM(killsBefore, t.r.cfg.OOMSettle/4)
	}
	sr.End = time.Now()
	var dropped int
	sr.Output, dropped = tail(lines, t.r.cfg.OutputTailLines)
	sr.OutputDropped += dropped
	kp, ok := sb.TakeKernelPeak()
	t.mu.Lock()
	if ok {
		sr.KernelPeakBytes = kp
	}
	sr.PeakWorkingSetBytes = t.stepPeak
	sr.OOMKills = t.kills - killsBefore
	t.mu.Unlock()
	if sr.KernelPeakBytes > t.res.KernelPeakBytes {
		t.res.KernelPeakBytes = sr.KernelPeakBytes
	}
	t.res.Steps = append(t.res.Steps, sr)
	t.emit(StepEnded{Base: t.base(), Result: sr})
	return sr, engineErr
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
			t.mu.Lock()
			if t.samples == 0 {
				t.firstAt = s.Time
			}
			t.samples++
			t.lastAt = s.Time
			t.lastWS = s.WorkingSetBytes
			if s.WorkingSetBytes > t.stepPeak {
				t.stepPeak = s.WorkingSetBytes
			}
			if s.WorkingSetBytes > t.res.PeakWorkingSetBytes {
				t.res.PeakWorkingSetBytes = s.WorkingSetBytes
			}
			t.mu.Unlock()
			t.emit(MemorySample{Base: Base{Trial: t.trial.ID, Time: s.Time}, Sample: s})
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
					detail := *oe
					t.mu.Unlock()
					t.emit(OOMKill{Base: Base{Trial: t.trial.ID, Time: time.Now()}, OOM: detail, LimitBytes: t.trial.Policy.HardLimitBytes, Detail: true})
					continue
				}
				t.mu.Unlock()
				continue
			}
			t.kills = o.Count
			oe := model.OOMEvent{At: o.Time, Step: t.step, Source: o.Source, WorkingSetBytes: t.lastWS, Process: o.Process, PID: o.PID, RSSBytes: o.RSSBytes}
			t.res.OOMs = append(t.res.OOMs, oe)
			close(t.oomNotify)
			t.oomNotify = make(chan struct{})
			t.mu.Unlock()
			t.emit(OOMKill{Base: Base{Trial: t.trial.ID, Time: time.Now()}, OOM: oe, LimitBytes: t.trial.Policy.HardLimitBytes})
		}
	}
}
