package model

import (
	"fmt"
	"time"
)

// A stall is a step that ran out its time limit because it sat at its
// memory limit: the kernel reclaiming the program's own pages and reading
// them back (major faults), not the agent thinking. It is decided from
// graded evidence, not a cliff: the share of the step at the limit, and
// how hard the step faulted against the task's own clean runs.
const (
	// StallLevel of the limit charged, StallWorkingSet of it in use:
	// reclaim runs at the limit, and a working set that high leaves it
	// only the program's own pages to evict (cache alone is no stall).
	StallLevel      = 0.98
	StallWorkingSet = 0.90
	// StallShare of the step at the limit is a stall by itself: pinned
	// there most of its time.
	StallShare = 0.5
	// Below that share, a step that spent at least StallMinAtLimit and
	// StallMinShare of its time at the limit stalled if it thrashed: its
	// major faults per second at least StallFaultTimes its clean runs'
	// (and at least StallFaultMin), or, with no clean run to compare,
	// at least StallFaultFloor.
	StallMinShare   = 0.10
	StallMinAtLimit = time.Second
	StallFaultTimes = 10.0
	StallFaultMin   = 20.0
	StallFaultFloor = 100.0
)

// AtLimit says whether a reading is at the hard limit in the stall's
// sense; never for an uncapped trial (limit 0).
func AtLimit(usage, workingSet, limit int64) bool {
	return limit > 0 && float64(usage) >= StallLevel*float64(limit) && float64(workingSet) >= StallWorkingSet*float64(limit)
}

// StallEvidence is what a timed-out step's memory did while it ran out
// its time: recorded, as numbers, on every timeout, stall or not.
type StallEvidence struct {
	Step       string `json:"step"`
	LimitBytes int64  `json:"limit_bytes"`
	// Duration is the step's wall time; AtLimit how much of it the step
	// was at the limit (AtLimit's sense).
	Duration Duration `json:"duration"`
	AtLimit  Duration `json:"at_limit"`
	// MajorFaults are the cgroup's major page faults during the step.
	MajorFaults int64 `json:"major_faults"`
	// CleanFaultRate is the highest major-fault rate (per second) of the
	// task's clean runs (passed, never killed) known when it was judged;
	// 0 when none was, and the absolute floor decides.
	CleanFaultRate float64 `json:"clean_fault_rate,omitempty"`
	CleanRuns      int     `json:"clean_runs,omitempty"`
	Stalled        bool    `json:"stalled"`
}

// Share is the share of the step spent at the limit.
func (e StallEvidence) Share() float64 {
	if e.Duration <= 0 {
		return 0
	}
	return min(float64(e.AtLimit)/float64(e.Duration), 1)
}

// FaultRate is the step's major faults per second.
func (e StallEvidence) FaultRate() float64 {
	if secs := time.Duration(e.Duration).Seconds(); secs > 0 {
		return float64(e.MajorFaults) / secs
	}
	return 0
}

// FaultThreshold is the fault rate above which the step thrashed: against
// its clean runs where some are known, else the absolute floor.
func (e StallEvidence) FaultThreshold() float64 {
	if e.CleanRuns > 0 {
		return max(StallFaultTimes*e.CleanFaultRate, StallFaultMin)
	}
	return StallFaultFloor
}

// Judge decides whether the step stalled at its limit: pinned there for
// at least StallShare of its time, or there for a while and thrashing.
func (e StallEvidence) Judge() bool {
	if e.LimitBytes <= 0 || e.Duration <= 0 {
		return false
	}
	if e.Share() >= StallShare {
		return true
	}
	return time.Duration(e.AtLimit) >= StallMinAtLimit && e.Share() >= StallMinShare && e.FaultRate() >= e.FaultThreshold()
}

// String is the evidence in a phrase: "6.9s of 14.7s (47%) at ≥98% of the
// limit, 6652 major faults (453/s; clean runs ≤13/s)".
func (e StallEvidence) String() string {
	s := fmt.Sprintf("%.1fs of %.1fs (%.0f%%) at ≥%.0f%% of the limit, %d major faults (%.0f/s", time.Duration(e.AtLimit).Seconds(),
		time.Duration(e.Duration).Seconds(), 100*e.Share(), 100*StallLevel, e.MajorFaults, e.FaultRate())
	if e.CleanRuns > 0 {
		s += fmt.Sprintf("; its clean runs ≤%.0f/s", e.CleanFaultRate)
	} else {
		s += fmt.Sprintf("; floor %.0f/s, no clean run to compare", StallFaultFloor)
	}
	return s + ")"
}

// FaultRateOf is a finished trial's major faults per second over its
// steps: what a clean run's rate is measured by.
func FaultRateOf(steps []StepResult) float64 {
	var faults int64
	var d time.Duration
	for _, s := range steps {
		faults += s.MajorFaults
		d += s.Duration()
	}
	if d <= 0 {
		return 0
	}
	return float64(faults) / d.Seconds()
}
