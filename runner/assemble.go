package runner

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// facts are what a finished trial's outcome, cause and reason are made
// from: the evidence (model.Classify's input) and the words that explain
// it. assemble is a pure function of them.
type facts struct {
	ev                model.Evidence
	steps             []model.StepResult
	limit             string // the policy's limit, as said
	limitBytes        int64  // 0: none
	ratio             model.Ratio
	pidsLimit         int64
	pidsLimitEnforced string
	killedInStep      string
	// taskKills counts the kills of the task's own processes (not of
	// headroom's step driver).
	taskKills int
	// driverTasks says the task made the killed driver the kernel's
	// choice (driverTasks).
	driverTasks   string
	agentLimit    time.Duration
	verifierLimit time.Duration
	// verdictNote says why the verifier's verdict failed; unverified why
	// no verifier ran; notes are said beside any outcome.
	verdictNote string
	unverified  string
	noBash      string
	notes       []string
	stepEnds    []stepEnd
	engineErr   error
	// A step's ENOSPC: the full filesystem the machine found, else the
	// room it saw (diskLooked: it could look), and the line that said it;
	// diskOwn, a full tmpfs of the container's own (model.FSRoom.Own);
	// diskUnread, why a platform that can look could not.
	diskFull, diskRoom, noSpaceLine string
	diskOwn, diskUnread             string
	diskLooked                      bool
}

// facts gathers the trial's facts once its sandbox is gone.
func (t *trialRun) facts(ev model.Evidence) facts {
	return facts{ev: ev, steps: t.res.Steps, limit: t.res.Policy.LimitString(), limitBytes: t.res.Policy.HardLimitBytes, ratio: t.res.Ratio,
		pidsLimit: t.res.Policy.PidsLimit, pidsLimitEnforced: t.res.PidsLimitEnforced, killedInStep: t.killedIn(),
		agentLimit: t.agentLimit, verifierLimit: t.verifierLimit,
		verdictNote: t.verdictNote, unverified: t.unverified, noBash: t.noBash, notes: t.notes, stepEnds: t.stepEnds, engineErr: t.engineErr,
		diskFull: t.diskFull, diskRoom: t.diskRoom, diskOwn: t.diskOwn, noSpaceLine: t.noSpaceLine, diskLooked: t.diskLooked, diskUnread: t.diskUnread, taskKills: len(model.TaskKills(t.res.OOMs)), driverTasks: driverTasks(t.res.OOMs)}
}

// killedIn names the step the first kill landed in, and, when the
// process killed was left running by an earlier step (an agent's nohup'd
// child killed during the verifier), that step: the kill landed in the
// one, the memory was the other's; when it was started before any step,
// by the container's entrypoint, the task's environment's.
func (t *trialRun) killedIn() string {
	step := t.res.KilledInStep
	if len(t.res.OOMs) == 0 || (t.res.OOMs[0].StartedInStep == "" && !t.res.OOMs[0].Entrypoint) {
		return step
	}
	o := t.res.OOMs[0]
	phaseOf := func(name string) string {
		for _, s := range t.res.Steps {
			if s.Name == name {
				return s.Phase
			}
		}
		return ""
	}
	what := cmp.Or(o.Command, o.Process, "a process")
	in := ""
	if ph := phaseOf(step); ph != "" {
		in = "in the " + ph + "; "
	}
	if o.Entrypoint {
		// The task's environment (a service, a background job its image
		// starts) grew to the container's limit while the step ran: the
		// kill is the limit's, as any; the step did not start it.
		return fmt.Sprintf("%s (%sthe process killed, %s, was %s: the task's environment, not this step's own)", step, in, what, EntrypointStarted)
	}
	by := "step " + o.StartedInStep
	if ph := phaseOf(o.StartedInStep); ph != "" {
		by = ph + " " + by
	}
	return fmt.Sprintf("%s (%sthe process killed, %s, was left running by %s, not this step's own)", step, in, what, by)
}

// assemble is the trial's outcome and cause (model.Classify) and its
// reason, in a sentence.
func assemble(f facts) (model.Outcome, model.Cause, string) {
	outcome, cause := model.Classify(f.ev)
	reason := f.causeReason(outcome, cause)
	if reason == "" {
		reason = f.reason(outcome)
	}
	switch {
	case f.ev.ContainerExited.Seen() && outcome == model.Failed && cause == model.CauseNone:
		reason = fmt.Sprintf("the task's container exited by itself (%s) during step %s: the task's own failure, not the engine's", f.ev.ContainerExited, f.lastStep())
	case cause == model.CauseNone && f.ev.InfraFailed && outcome == model.InfraError && headroomsOwn(f.engineErr):
		reason = "not graded: " + f.engineErr.Error()
	case cause == model.CauseNone && f.ev.InfraFailed && outcome == model.InfraError:
		reason = "the engine failed: " + f.engineErr.Error()
	}
	switch {
	case f.noSpaceLine != "" && !f.ev.DiskFull && f.diskLooked && !outcome.Success() && f.diskOwn != "":
		reason += fmt.Sprintf("; its output said %q: %s, the container's own fixed-size tmpfs (held in memory, the same size at every ratio, not the host's disk): the task's own failure, not a full disk", Clip(f.noSpaceLine, 200), f.diskOwn)
	case f.noSpaceLine != "" && !f.ev.DiskFull && f.diskLooked && !outcome.Success():
		reason += fmt.Sprintf("; its output said %q, but no filesystem of its container was full when it said it or when the step ended (%s): the task's words, not a full disk", Clip(f.noSpaceLine, 200), f.diskRoom)
	case f.noSpaceLine != "" && !f.ev.DiskFull && f.diskUnread != "" && !outcome.Success():
		reason += fmt.Sprintf("; its output said %q, but the room of its container's filesystems could not be read (%s): the task's words alone, not a full disk", Clip(f.noSpaceLine, 200), f.diskUnread)
	}
	if f.driverTasks != "" {
		reason = strings.TrimPrefix(reason+"; "+f.driverTasks, "; ")
	}
	for _, n := range f.notes {
		reason = strings.TrimPrefix(reason+"; "+n, "; ")
	}
	return outcome, cause, reason
}

// driverTasks says, for a kill of headroom's step driver the task brought
// about (model.OOMEvent.DriverTasks), that the kill was the task's doing;
// "" for none.
func driverTasks(ooms []model.OOMEvent) string {
	for _, o := range ooms {
		if why := o.DriverTasks(); why != "" {
			return "the kernel's OOM killer took headroom's step driver (the container's PID 1), " + why + ": the task's doing, graded as its own kill at the limit"
		}
	}
	return ""
}

// afterTimeout says what became of the verifier after the agent ran past
// its time limit: it judged the agent's work, as Harbor and terminal-bench
// judge it, or could not run.
func (f facts) afterTimeout(passed bool) string {
	switch {
	case f.unverified != "":
		return "; " + f.unverified
	case passed:
		return "; the verifier, run after it as Harbor and terminal-bench run it, passed"
	case f.verdictNote != "":
		return "; the verifier, run after it as Harbor and terminal-bench run it, failed: " + f.verdictNote
	}
	return "; the verifier, run after it as Harbor and terminal-bench run it, failed"
}

// reason says why, for an outcome its cause does not explain.
func (f facts) reason(outcome model.Outcome) string {
	switch outcome {
	case model.Cancelled:
		return "cancelled"
	case model.PassedAfterOOM:
		return fmt.Sprintf("verifier passed after %d OOM kill(s), first in step %s", f.ev.OOMKills, f.killedInStep)
	case model.OOMKilled:
		return fmt.Sprintf("OOM-killed in step %s at limit %s", f.killedInStep, f.limit)
	case model.Timeout:
		return "ran past its time limit"
	case model.Failed:
		if f.noBash != "" {
			// What ended every step: said first, as Harbor would end it.
			return fmt.Sprintf("step %s could not start: the image has no bash, and Harbor runs every command in a task's container as bash -c, so neither the task's scripts nor its verifier can run there (no reward)", f.noBash)
		}
		if f.unverified != "" {
			return f.unverified
		}
		// A traced script's commands may fail on the way (a grep in an
		// if); what ended the script is what failed the trial.
		// The verifier's verdict first, as the task's harness reports the
		// trial; an agent step that failed on the way is said after it.
		var agentEnd string
		for _, e := range f.stepEnds {
			if s := f.steps[e.step]; e.code != 0 && (s.Phase == model.PhaseAgent || s.Phase == model.PhaseInstall) {
				agentEnd = fmt.Sprintf("step %s exited %d", s.Name, e.code)
				break
			}
		}
		switch {
		case f.verdictNote != "" && agentEnd != "":
			return f.verdictNote + "; the agent's " + agentEnd
		case agentEnd != "":
			return agentEnd
		case f.verdictNote != "":
			return f.verdictNote
		}
		for _, e := range f.stepEnds {
			if e.code != 0 {
				return fmt.Sprintf("step %s exited %d", f.steps[e.step].Name, e.code)
			}
		}
		return "verifier failed"
	}
	return ""
}

// HelperOOMKilled starts a trial's KilledBy when a knob's helper, a
// container of headroom's own beside the trial (the network's shaper),
// was OOM-killed under it: the knob stopped acting, or cut the network,
// mid-trial. headroom's failure, not the task's: out of the comparison,
// as a part killed from outside is.
const HelperOOMKilled = "an OOM kill of"

// causeReason says why, in a sentence, for a trial whose cause needs more
// than its outcome's words ("" for none).
func (f facts) causeReason(outcome model.Outcome, cause model.Cause) string {
	ev := f.ev
	if outcome.Success() {
		switch {
		case cause == model.CauseOutsidePressure:
			return fmt.Sprintf("verifier passed after %d OOM kill(s) by pressure from outside (under its own limit %s), first in step %s", ev.OOMKills, f.limit, f.killedInStep)
		case outcome == model.PassedAfterTimeout && cause == model.CauseFrozen:
			return fmt.Sprintf("ran past its time limit in step %s after it could not run for part of it: %s", f.timedOutStep(), ev.Frozen) + f.afterTimeout(true)
		case outcome == model.PassedAfterTimeout && cause == model.CauseStalled:
			return fmt.Sprintf("stalled at the limit %s: step %s ran past its time limit after %s", f.limit, ev.Stall.Step, ev.Stall) + f.afterTimeout(true)
		case outcome == model.PassedAfterTimeout:
			return fmt.Sprintf("the agent ran past its time limit (%s) in step %s", f.agentLimit, f.timedOutStep()) + f.afterTimeout(true)
		}
		return ""
	}
	switch cause {
	case model.CauseKilledOutside:
		if strings.HasPrefix(string(ev.KilledBy), "docker exec ") || strings.HasPrefix(string(ev.KilledBy), "docker cp ") {
			// docker exec or cp by someone else (runner/docker's
			// execwatch.go, copywatch.go).
			return fmt.Sprintf("touched from outside during step %s: %s; whatever it did in the trial (a kill, a file written, memory charged to its limit) is not the task's, so the trial is not evidence", f.lastStep(), ev.KilledBy)
		}
		if what, ok := strings.CutPrefix(string(ev.KilledBy), HelperOOMKilled+" "); ok {
			return fmt.Sprintf("%s was OOM-killed at its own limit during step %s: the knob it applied stopped acting (or cut the network) mid-trial; headroom's failure, not the task's, so the trial is not evidence", what, f.lastStep())
		}
		if !strings.HasPrefix(string(ev.KilledBy), "SIG") {
			// A cluster's word on it: a pod deleted, evicted or preempted.
			return fmt.Sprintf("killed from outside by %s, not by headroom, during step %s: not an OOM kill", ev.KilledBy, f.lastStep())
		}
		return fmt.Sprintf("killed from outside with %s (docker kill, stop or rm by someone other than headroom) during step %s: not an OOM kill", ev.KilledBy, f.lastStep())
	case model.CauseLimitChanged:
		return fmt.Sprintf("its limits were changed from outside while it ran, %s (docker update by someone other than headroom): it ran under a limit its ratio does not say, so it is not evidence for %s", ev.LimitChanged, f.ratio)
	case model.CauseFrozen:
		return fmt.Sprintf("ran past its time limit in step %s after it could not run for part of it: %s; the limit counted time the task never had, so this is not the task's timeout", f.timedOutStep(), ev.Frozen)
	case model.CauseDriverKilled:
		what := fmt.Sprintf("OOM-killed in step %s at its own limit %s, and before that memory was freed the kernel killed headroom's step driver (the container's PID 1) too", f.killedInStep, f.limit)
		if f.taskKills == 0 {
			what = fmt.Sprintf("in step %s at its own limit %s the kernel's OOM killer chose headroom's step driver (the container's PID 1), the largest process it could see (the task's memory was held where no process's resident set counts it, as in a tmpfs)", f.killedInStep, f.limit)
		}
		return what + ": the container ended, so the verifier could not run. headroom's failure, not the task's: not graded (a resume runs it again; an engine that may lower OOM scores spares the driver)"
	case model.CauseEngineLost:
		return fmt.Sprintf("the engine went away under the trial (restarted or unreachable): %v", f.engineErr)
	case model.CauseOutsidePressure:
		if f.limitBytes == 0 {
			return fmt.Sprintf("OOM-killed in step %s with no limit of its own: the host's or a parent cgroup's OOM killer chose it (pressure from outside)", f.killedInStep)
		}
		return fmt.Sprintf("OOM-killed in step %s while under its own limit %s (never reached): a parent cgroup's or the host's OOM killer chose it (pressure from outside)", f.killedInStep, f.limit)
	case model.CauseStalled:
		why := fmt.Sprintf("stalled at the limit %s: step %s ran past its time limit after %s", f.limit, ev.Stall.Step, ev.Stall)
		if ev.TimedOutPhase == "agent" {
			why += f.afterTimeout(false)
		}
		return why
	case model.CauseAgentTimeout:
		return fmt.Sprintf("the agent ran past its time limit (%s) in step %s%s", f.agentLimit, f.timedOutStep(), stallNote(ev.Stall)) + f.afterTimeout(false)
	case model.CauseVerifierTimeout:
		return fmt.Sprintf("the verifier ran past its time limit (%s) in step %s%s", f.verifierLimit, f.timedOutStep(), stallNote(ev.Stall))
	case model.CausePidsLimit:
		if f.pidsLimitEnforced != "" {
			return fmt.Sprintf("the pids limit was reached: the kernel refused %d fork(s) (%s); the limit that held was %s", ev.PidsLimitHits, f.failedStep(), f.pidsLimitEnforced)
		}
		return fmt.Sprintf("the pids limit (%d) was reached: the kernel refused %d fork(s) (%s)", f.pidsLimit, ev.PidsLimitHits, f.failedStep())
	case model.CauseDiskFull:
		for _, s := range f.steps {
			if s.NoSpace {
				why := fmt.Sprintf("no space left on device (ENOSPC) in the container in step %s (exit %d)", s.Name, s.ExitCode)
				if f.diskFull != "" {
					why += ": " + f.diskFull
				}
				return why
			}
		}
	}
	return ""
}

// stallNote is a timeout's memory evidence when it was at its limit at
// all: the numbers that were not enough for a stall.
func stallNote(e *model.StallEvidence) string {
	if e == nil || e.LimitBytes == 0 || e.AtLimit == 0 {
		return ""
	}
	return "; not a stall: " + e.String()
}

// lastStep names the step the container died in: the first that was
// killed (exit 137) or cut short, else the last.
func (f facts) lastStep() string {
	for _, s := range f.steps {
		if s.ExitCode == 137 || s.ExitCode == -1 {
			return s.Name
		}
	}
	if n := len(f.steps); n > 0 {
		return f.steps[n-1].Name
	}
	return "(none started)"
}

func (f facts) timedOutStep() string {
	for _, s := range f.steps {
		if s.TimedOut {
			return s.Name
		}
	}
	return f.lastStep()
}

func (f facts) failedStep() string {
	for _, s := range f.steps {
		if s.ExitCode != 0 {
			return fmt.Sprintf("step %s exited %d", s.Name, s.ExitCode)
		}
	}
	return "no step exited non-zero"
}
