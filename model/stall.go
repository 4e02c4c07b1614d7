package model

import (
	"fmt"
	"time"
)

// A stall is a step that ran out its time limit because it sat at its
// memory limit: the kernel reclaiming the program's own pages and reading
// them back (major faults), not the agent thinking. It is decided from
// the trial's own record alone (docs/STATISTICS.md, "A stall, from the
// trial's own record"), never from other runs: the same evidence gets the
// same verdict whatever ran before it.
//
// A step stalled if it spent at least StallMinAtLimit and StallMinShare
// of its time at the limit and thrashed there: at least StallFaultFloor
// major faults per second while at the limit (a stalled numpy step read
// 450/s; Python's start-up, what a clean run faults on, is not at the
// limit). Time at the limit alone is no stall, however much of the step
// it was: a program that holds its memory there and sleeps (or waits on
// the network) is not slowed by the limit, and its timeout is its own at
// every ratio. That was a stall by itself at half the step (the twelfth
// attacker's 7: 6.0 s of 6.0 s at the limit, 0 major faults, recorded
// stalled-at-limit).
const (
	// StallLevel of the limit charged, StallWorkingSet of it in use:
	// reclaim runs at the limit, and a working set that high leaves it
	// only the program's own pages to evict (cache alone is no stall).
	StallLevel      = 0.98
	StallWorkingSet = 0.90
	StallMinShare   = 0.10
	StallMinAtLimit = time.Second
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
	// MajorFaults are the cgroup's major page faults during the step;
	// MajorFaultsAtLimit those counted while it was at the limit (the
	// sample intervals AtLimit sums), nil in records made before the
	// runner counted them: their rate is then the whole step's.
	MajorFaults        int64  `json:"major_faults"`
	MajorFaultsAtLimit *int64 `json:"major_faults_at_limit,omitempty"`
	// KernelPeakBytes is the kernel's own peak of the step (0 unknown):
	// a stall's samples at the limit are the kernel's too.
	KernelPeakBytes int64 `json:"kernel_peak_bytes,omitempty"`
	Stalled         bool  `json:"stalled"`
}

// Share is the share of the step spent at the limit.
func (e StallEvidence) Share() float64 {
	if e.Duration <= 0 {
		return 0
	}
	return min(float64(e.AtLimit)/float64(e.Duration), 1)
}

// FaultRate is the step's major faults per second while at the limit,
// where they were counted, else over the whole step.
func (e StallEvidence) FaultRate() float64 {
	faults, d := e.MajorFaults, time.Duration(e.Duration)
	if e.MajorFaultsAtLimit != nil {
		faults, d = *e.MajorFaultsAtLimit, time.Duration(e.AtLimit)
	}
	if secs := d.Seconds(); secs > 0 {
		return float64(faults) / secs
	}
	return 0
}

// KernelBelowLimit says the kernel's own peak of the step stayed under
// the stall's level: the samples at the limit are then not borne out.
func (e StallEvidence) KernelBelowLimit() bool {
	return e.KernelPeakBytes > 0 && float64(e.KernelPeakBytes) < StallLevel*float64(e.LimitBytes)
}

// Judge decides whether the step stalled at its limit: there for a while
// and thrashing there; never when the kernel's own peak stayed under the
// limit.
func (e StallEvidence) Judge() bool {
	if e.LimitBytes <= 0 || e.Duration <= 0 || e.KernelBelowLimit() {
		return false
	}
	return time.Duration(e.AtLimit) >= StallMinAtLimit && e.Share() >= StallMinShare && e.FaultRate() >= StallFaultFloor
}

// String is the evidence in a phrase: "6.9s of 14.7s (47%) at ≥98% of the
// limit, 6652 major faults (920/s while there; a stall thrashes ≥100/s)".
func (e StallEvidence) String() string {
	where := "over the step"
	if e.MajorFaultsAtLimit != nil {
		where = "while there"
	}
	return fmt.Sprintf("%.1fs of %.1fs (%.0f%%) at ≥%.0f%% of the limit, %d major faults (%.0f/s %s; a stall thrashes ≥%.0f/s)", time.Duration(e.AtLimit).Seconds(),
		time.Duration(e.Duration).Seconds(), 100*e.Share(), 100*StallLevel, e.MajorFaults, e.FaultRate(), where, StallFaultFloor)
}
