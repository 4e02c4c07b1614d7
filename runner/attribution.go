package runner

import (
	"fmt"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// attributionEvidence adds to ev what names the cause (model.Attribute):
// who killed the container, whether its kills came under its own limit,
// the pids controller's refusals, ENOSPC, a stall at the limit.
func (t *trialRun) attributionEvidence(ev *model.Evidence, final Final) {
	ev.KilledBy = final.KilledBy
	ev.EngineLost = (t.engineErr != nil && final.KilledBy == "") || final.EngineRestarted
	ev.PidsLimitHits = final.PidsLimitHits
	// A kill with no limit of its own, or with its own limit never
	// reached, was chosen by a parent cgroup's or the host's OOM killer.
	ev.OOMOutside = t.trial.Policy.HardLimitBytes == 0 || (final.LimitHitsKnown && final.LimitHits == 0)
	for _, s := range t.res.Steps {
		if s.NoSpace {
			ev.DiskFull = true
		}
		if s.TimedOut && model.Stalled(time.Duration(s.AtLimit), s.Duration()) {
			ev.Stalled = true
		}
	}
}

// causeReason says why, in a sentence, for a trial whose cause needs more
// than its outcome's words ("" for none).
func (t *trialRun) causeReason(ev model.Evidence) string {
	res := &t.res
	limit := res.Policy.LimitString()
	if model.Classify(ev).Success() {
		if model.Attribute(ev) == model.CauseOutsidePressure {
			return fmt.Sprintf("verifier passed after %d OOM kill(s) by pressure from outside (under its own limit %s), first in step %s", ev.OOMKills, limit, res.KilledInStep)
		}
		return ""
	}
	switch model.Attribute(ev) {
	case model.CauseKilledOutside:
		return fmt.Sprintf("killed from outside with %s (docker kill, stop or rm by someone other than headroom) during step %s: not an OOM kill", ev.KilledBy, t.lastStep())
	case model.CauseEngineLost:
		return fmt.Sprintf("the engine went away under the trial (restarted or unreachable): %v", t.engineErr)
	case model.CauseOutsidePressure:
		if res.Policy.HardLimitBytes == 0 {
			return fmt.Sprintf("OOM-killed in step %s with no limit of its own: the host's or a parent cgroup's OOM killer chose it (pressure from outside)", res.KilledInStep)
		}
		return fmt.Sprintf("OOM-killed in step %s while under its own limit %s (never reached): a parent cgroup's or the host's OOM killer chose it (pressure from outside)", res.KilledInStep, limit)
	case model.CauseStalled:
		for _, s := range res.Steps {
			if s.TimedOut {
				secs := s.Duration().Seconds()
				rate := 0.0
				if secs > 0 {
					rate = float64(s.MajorFaults) / secs
				}
				return fmt.Sprintf("stalled at the limit: step %s spent %.1fs of %.1fs at ≥%.0f%% of its limit %s (%.0f major faults/s) and ran past its time limit", s.Name, time.Duration(s.AtLimit).Seconds(), secs, 100*model.StallLevel, limit, rate)
			}
		}
	case model.CauseAgentTimeout:
		return fmt.Sprintf("the agent ran past its time limit (%s) in step %s", t.task.AgentTimeout, t.timedOutStep())
	case model.CauseVerifierTimeout:
		return fmt.Sprintf("the verifier ran past its time limit (%s) in step %s", t.task.VerifierTimeout, t.timedOutStep())
	case model.CausePidsLimit:
		return fmt.Sprintf("the pids limit (%d) was reached: the kernel refused %d fork(s) (%s)", res.Policy.PidsLimit, ev.PidsLimitHits, t.failedStep())
	case model.CauseDiskFull:
		for _, s := range res.Steps {
			if s.NoSpace {
				return fmt.Sprintf("no space left on device (ENOSPC) in the container in step %s (exit %d)", s.Name, s.ExitCode)
			}
		}
	}
	return ""
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
