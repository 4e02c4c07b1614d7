package runner

import (
	"slices"
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
	if !ev.Frozen.Seen() {
		ev.Frozen = model.Witness(freezes.during(t.res.Start, time.Now()))
	}
	// headroom's own bound run out (a copy, a healthcheck's wait) is not
	// the engine gone.
	ev.EngineLost = (t.engineErr != nil && !headroomsOwn(t.engineErr) && !final.KilledBy.Seen()) || final.EngineRestarted
	if t.exited != "" && !final.KilledBy.Seen() && !final.EngineRestarted {
		ev.ContainerExited = model.Witness(t.exited)
	}
	if t.driverOOM && !slices.ContainsFunc(t.res.OOMs, func(o model.OOMEvent) bool { return o.Driver }) {
		// The container ended with its step driver's kill (its exit
		// says so), but no kill recorded names it: the kernel's log
		// described none of its last kills (it logs ten reports in five
		// seconds, and a task that fills a tmpfs has it kill one
		// process after another) or could not be read. The container
		// ended with the driver, so its kill is the last the log did
		// not name; its readings (the tmpfs pages, DriverByTmpfs) are
		// the container's last before it.
		for i := len(t.res.OOMs) - 1; i >= 0; i-- {
			if t.res.OOMs[i].Process == "" {
				t.res.OOMs[i].Driver = true
				break
			}
		}
	}
	for _, o := range t.res.OOMs {
		// A driver the task made the kill's choice (its OOM score
		// raised, its tmpfs the memory at the limit) is the task's own
		// kill at its limit, graded as any (model.OOMEvent.DriverTasks).
		why := o.DriverTasks()
		ev.DriverKilled = ev.DriverKilled || (o.Driver && why == "")
		if why != "" && !ev.ContainerExited.Seen() && !final.KilledBy.Seen() && !final.EngineRestarted {
			// The container ended with its PID 1, by the task's doing:
			// the steps the engine then refused are not the engine gone.
			ev.ContainerExited = model.Witness("its step driver (PID 1) was OOM-killed, " + why)
		}
	}
	if t.driverOOM && !final.KilledBy.Seen() && !final.EngineRestarted && !ev.ContainerExited.Seen() {
		ev.DriverKilled = true
	}
	ev.PidsLimitHits = final.PidsLimitHits
	ev.LimitBytes = t.trial.Policy.HardLimitBytes
	ev.LimitHits, ev.LimitHitsKnown = final.LimitHits, final.LimitHitsKnown
	ev.KernelPeakBytes = max(t.res.KernelPeakBytes, final.KernelPeakBytes)
	for _, s := range t.res.Steps {
		ev.KernelPeakBytes = max(ev.KernelPeakBytes, s.KernelPeakBytes)
		if s.NoSpace {
			// The task's words need the machine's count where the
			// platform can give it (DiskWitness); where it cannot look
			// at all, the words stand. A look that failed is no count:
			// the words alone make no full disk (a task could hide its
			// mounts to have its failure counted the machine's).
			ev.DiskFull = t.diskFull != "" || (!t.diskLooked && t.diskUnread == "")
		}
		if s.TimedOut && ev.Stall == nil {
			ev.Stall = stallEvidence(s, ev.LimitBytes)
		}
	}
}

// stallEvidence is a timed-out step's own record, judged: nothing of
// other runs enters it, so equal records get equal verdicts.
func stallEvidence(s model.StepResult, limit int64) *model.StallEvidence {
	e := &model.StallEvidence{Step: s.Name, LimitBytes: limit, Duration: model.Duration(s.Duration()),
		AtLimit: s.AtLimit, MajorFaults: s.MajorFaults, MajorFaultsAtLimit: s.MajorFaultsAtLimit, KernelPeakBytes: s.KernelPeakBytes}
	e.Stalled = e.Judge()
	return e
}
