package runner

import (
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
