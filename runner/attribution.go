package runner

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// attributionEvidence adds to ev what names the cause (model.Classify):
// who killed the container, the kernel's own word on whether its kills
// came at its own limit (the hit counters, the kernel's peak of each
// step against the limit), the pids controller's refusals, ENOSPC, and
// a timed-out step's time at the limit and major faults.
func (t *trialRun) attributionEvidence(ev *model.Evidence, final Final) {
	ev.KilledBy = final.KilledBy
	ev.LimitChanged = final.LimitChanged
	ev.Frozen = final.Frozen
	if ev.Frozen == "" {
		ev.Frozen = freezes.during(t.res.Start, time.Now())
	}
	ev.EngineLost = (t.engineErr != nil && final.KilledBy == "") || final.EngineRestarted
	if t.exited != "" && final.KilledBy == "" && !final.EngineRestarted {
		ev.ContainerExited = t.exited
	}
	ev.PidsLimitHits = final.PidsLimitHits
	ev.LimitBytes = t.trial.Policy.HardLimitBytes
	ev.LimitHits, ev.LimitHitsKnown = final.LimitHits, final.LimitHitsKnown
	ev.KernelPeakBytes = max(t.res.KernelPeakBytes, final.KernelPeakBytes)
	for _, s := range t.res.Steps {
		ev.KernelPeakBytes = max(ev.KernelPeakBytes, s.KernelPeakBytes)
		if s.NoSpace {
			// The task's words need the machine's count where the
			// platform can give it (DiskWitness); where it cannot, the
			// words stand.
			ev.DiskFull = t.diskFull != "" || !t.diskLooked
		}
		if s.TimedOut && ev.Stall == nil {
			clean, runs := t.r.clean.rateOf(t.trial)
			ev.Stall = &model.StallEvidence{Step: s.Name, LimitBytes: ev.LimitBytes, Duration: model.Duration(s.Duration()),
				AtLimit: s.AtLimit, MajorFaults: s.MajorFaults, CleanFaultRate: clean, CleanRuns: runs}
			ev.Stall.Stalled = ev.Stall.Judge()
		}
	}
}

// causeReason says why, in a sentence, for a trial whose cause needs more
// than its outcome's words ("" for none).
func (t *trialRun) causeReason(ev model.Evidence) string {
	res := &t.res
	limit := res.Policy.LimitString()
	outcome, cause := model.Classify(ev)
	if outcome.Success() {
		if cause == model.CauseOutsidePressure {
			return fmt.Sprintf("verifier passed after %d OOM kill(s) by pressure from outside (under its own limit %s), first in step %s", ev.OOMKills, limit, res.KilledInStep)
		}
		return ""
	}
	switch cause {
	case model.CauseKilledOutside:
		if !strings.HasPrefix(ev.KilledBy, "SIG") {
			// A cluster's word on it: a pod deleted, evicted or preempted.
			return fmt.Sprintf("killed from outside by %s, not by headroom, during step %s: not an OOM kill", ev.KilledBy, t.lastStep())
		}
		return fmt.Sprintf("killed from outside with %s (docker kill, stop or rm by someone other than headroom) during step %s: not an OOM kill", ev.KilledBy, t.lastStep())
	case model.CauseLimitChanged:
		return fmt.Sprintf("its limits were changed from outside while it ran, %s (docker update by someone other than headroom): it ran under a limit its ratio does not say, so it is not evidence for %s", ev.LimitChanged, res.Ratio)
	case model.CauseFrozen:
		return fmt.Sprintf("ran past its time limit in step %s after it could not run for part of it: %s; the limit counted time the task never had, so this is not the task's timeout", t.timedOutStep(), ev.Frozen)
	case model.CauseEngineLost:
		return fmt.Sprintf("the engine went away under the trial (restarted or unreachable): %v", t.engineErr)
	case model.CauseOutsidePressure:
		if res.Policy.HardLimitBytes == 0 {
			return fmt.Sprintf("OOM-killed in step %s with no limit of its own: the host's or a parent cgroup's OOM killer chose it (pressure from outside)", res.KilledInStep)
		}
		return fmt.Sprintf("OOM-killed in step %s while under its own limit %s (never reached): a parent cgroup's or the host's OOM killer chose it (pressure from outside)", res.KilledInStep, limit)
	case model.CauseStalled:
		return fmt.Sprintf("stalled at the limit %s: step %s ran past its time limit after %s", limit, ev.Stall.Step, ev.Stall)
	case model.CauseAgentTimeout:
		return fmt.Sprintf("the agent ran past its time limit (%s) in step %s%s", t.task.AgentTimeout, t.timedOutStep(), stallNote(ev.Stall))
	case model.CauseVerifierTimeout:
		return fmt.Sprintf("the verifier ran past its time limit (%s) in step %s%s", t.task.VerifierTimeout, t.timedOutStep(), stallNote(ev.Stall))
	case model.CausePidsLimit:
		if res.PidsLimitEnforced != "" {
			return fmt.Sprintf("the pids limit was reached: the kernel refused %d fork(s) (%s); the limit that held was %s", ev.PidsLimitHits, t.failedStep(), res.PidsLimitEnforced)
		}
		return fmt.Sprintf("the pids limit (%d) was reached: the kernel refused %d fork(s) (%s)", res.Policy.PidsLimit, ev.PidsLimitHits, t.failedStep())
	case model.CauseDiskFull:
		for _, s := range res.Steps {
			if s.NoSpace {
				why := fmt.Sprintf("no space left on device (ENOSPC) in the container in step %s (exit %d)", s.Name, s.ExitCode)
				if t.diskFull != "" {
					why += ": " + t.diskFull
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
func (t *trialRun) lastStep() string {
	for _, s := range t.res.Steps {
		if s.ExitCode == 137 || s.ExitCode == -1 {
			return s.Name
		}
	}
	if n := len(t.res.Steps); n > 0 {
		return t.res.Steps[n-1].Name
	}
	return "(none started)"
}

func (t *trialRun) timedOutStep() string {
	for _, s := range t.res.Steps {
		if s.TimedOut {
			return s.Name
		}
	}
	return t.lastStep()
}

func (t *trialRun) failedStep() string {
	for _, s := range t.res.Steps {
		if s.ExitCode != 0 {
			return fmt.Sprintf("step %s exited %d", s.Name, s.ExitCode)
		}
	}
	return "no step exited non-zero"
}

// cleanRuns keeps, per task · agent, the highest major-fault rate of its
// runs that passed with no kill: what a stall's faults are weighed
// against (model.StallEvidence). Runs finished earlier in the sweep count;
// before the first, the absolute floor decides.
type cleanRuns struct {
	mu   sync.Mutex
	rate map[model.RowKey]float64
	runs map[model.RowKey]int
}

func (c *cleanRuns) add(res model.TrialResult) {
	if res.Outcome != model.Passed || len(res.OOMs) > 0 {
		return
	}
	k := model.RowKey{Task: res.Task, Agent: res.Agent}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rate == nil {
		c.rate, c.runs = map[model.RowKey]float64{}, map[model.RowKey]int{}
	}
	c.rate[k] = max(c.rate[k], model.FaultRateOf(res.Steps))
	c.runs[k]++
}

func (c *cleanRuns) rateOf(tr model.Trial) (float64, int) {
	k := model.RowKey{Task: tr.Task, Agent: tr.Agent}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rate[k], c.runs[k]
}
