package model

import "time"

// CPUUse is CPU accounting over an interval, from the cgroup's counters:
// the time its processes ran and the CFS bandwidth control's throttling
// (cpu.stat). Periods count only while a CPU limit is set, so an
// uncapped trial has none and a throttled share of zero.
type CPUUse struct {
	UsageNanos int64 `json:"usage_ns"`
	// Periods are the enforcement periods (100 ms by default) in which the
	// cgroup ran; ThrottledPeriods are those it used up its quota in and
	// was stopped until the next; ThrottledNanos is how long it was kept
	// off the CPU in total.
	Periods          int64 `json:"periods"`
	ThrottledPeriods int64 `json:"throttled_periods"`
	ThrottledNanos   int64 `json:"throttled_ns"`
}

// Sub is the use between an earlier reading and this one (counters only
// grow; a reset reads as zero rather than negative).
func (c CPUUse) Sub(earlier CPUUse) CPUUse {
	d := func(a, b int64) int64 { return max(a-b, 0) }
	return CPUUse{
		UsageNanos:       d(c.UsageNanos, earlier.UsageNanos),
		Periods:          d(c.Periods, earlier.Periods),
		ThrottledPeriods: d(c.ThrottledPeriods, earlier.ThrottledPeriods),
		ThrottledNanos:   d(c.ThrottledNanos, earlier.ThrottledNanos),
	}
}

// Add sums two intervals' use.
func (c CPUUse) Add(o CPUUse) CPUUse {
	return CPUUse{
		UsageNanos:       c.UsageNanos + o.UsageNanos,
		Periods:          c.Periods + o.Periods,
		ThrottledPeriods: c.ThrottledPeriods + o.ThrottledPeriods,
		ThrottledNanos:   c.ThrottledNanos + o.ThrottledNanos,
	}
}

// ThrottledShare is the fraction of enforcement periods in which the
// cgroup was throttled (0 with no periods: no limit, or idle).
func (c CPUUse) ThrottledShare() float64 {
	if c.Periods <= 0 {
		return 0
	}
	return float64(c.ThrottledPeriods) / float64(c.Periods)
}

// Usage is the CPU time used.
func (c CPUUse) Usage() time.Duration { return time.Duration(c.UsageNanos) }

// Throttled is how long the cgroup was held off the CPU by its limit.
func (c CPUUse) Throttled() time.Duration { return time.Duration(c.ThrottledNanos) }

// Cores is the average number of cores used over a wall time.
func (c CPUUse) Cores(wall time.Duration) float64 {
	if wall <= 0 {
		return 0
	}
	return float64(c.UsageNanos) / float64(wall)
}
