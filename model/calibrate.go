package model

import (
	"math"
	"sort"
)

// Calibration recommends a task's guarantee and hard limit from what its
// trials really used.
type Calibration struct {
	Task      string `json:"task"`
	SpecBytes int64  `json:"spec_bytes"`
	// NeedBytes holds, per agent and repeat, the peak of that trajectory
	// in a trial that was not killed: the larger of the sampled working
	// set and the kernel's own step peaks (which catch a spike between
	// samples). Repeats share their seed across ratios, so an uncapped
	// run shows what a killed one needed.
	NeedBytes []int64 `json:"need_bytes"`
	// Censored counts trajectories killed at every ratio where they
	// finished: their need is only known to exceed CensoredAboveBytes.
	Censored           int   `json:"censored"`
	CensoredAboveBytes int64 `json:"censored_above_bytes,omitempty"`
	// Cancelled counts the task's cancelled trials: they are not
	// evidence either way (a resume runs them).
	Cancelled int `json:"cancelled"`
	// Kills per tested ratio: OOM-killed trials over counted trials.
	Kills []RatioKills `json:"kills"`

	TargetKillRate float64 `json:"target_kill_rate"`
	Margin         float64 `json:"margin"`
	// Verdict is "keep" (the spec covers every run and is not much more
	// than they need), "raise" or "lower" (recommendations below), or
	// "unknown" (too many runs were killed at every ratio: run it
	// uncapped to measure).
	Verdict        string `json:"verdict"`
	GuaranteeBytes int64  `json:"recommended_guarantee_bytes"`
	LimitBytes     int64  `json:"recommended_limit_bytes"`
	// Uncertainty: of the runs measured, Exceeding needed more than the
	// recommended limit (killed-everywhere runs count); KillRateCI is the
	// Wilson 95% interval of the kill rate that limit implies from them;
	// RunsForTarget is how many runs with none exceeding it would show
	// the kill rate at or below the target (exact binomial, 95%).
	Exceeding     int      `json:"exceeding"`
	KillRateCI    Interval `json:"kill_rate_ci"`
	RunsForTarget int      `json:"runs_for_target"`
}

// lowerBelow is how far under the spec a recommended limit must fall
// before calibrate proposes lowering it: a small saving is not worth a
// change measured on a few runs.
const lowerBelow = 0.75

// RunsForKillRate is how many runs, none of them killed, show a kill
// rate at or below target with 95% confidence: (1 − target)^n ≤ 0.05.
func RunsForKillRate(target float64) int {
	if target <= 0 || target >= 1 {
		return 0
	}
	return int(math.Ceil(math.Log(0.05) / math.Log(1-target)))
}

// RatioKills is the kill rate at one tested ratio.
type RatioKills struct {
	Ratio  Ratio `json:"ratio"`
	Killed int   `json:"killed"`
	Trials int   `json:"trials"`
}

// LimitRatio is the recommended limit as a multiple of the task's spec
// (the memory the experiment ran it with), the ratio a sweep would use.
func (c Calibration) LimitRatio() float64 {
	if c.SpecBytes == 0 {
		return 0
	}
	return float64(c.LimitBytes) / float64(c.SpecBytes)
}

// roundUp rounds bytes up to a multiple of 8 MiB.
func roundUp(b float64) int64 {
	const step = 8 * MiB
	return int64(math.Ceil(b/float64(step))) * step
}

// Calibrate recommends, per task, the smallest hard limit that would have
// kept OOM kills at or below target (e.g. 0.01) with a margin (e.g. 0.10)
// on top, and a guarantee covering the typical run. specs gives each
// task's current memory spec.
func Calibrate(trials []TrialResult, specs map[string]int64, target, margin float64) []Calibration {
	type key struct {
		task, agent string
		repeat      int
	}
	need := map[key]int64{}
	above := map[key]int64{}
	kills := map[string]map[Ratio]*RatioKills{}
	cancelled := map[string]int{}
	var tasks []string
	for _, t := range trials {
		if kills[t.Task] == nil {
			kills[t.Task] = map[Ratio]*RatioKills{}
			tasks = append(tasks, t.Task)
		}
		if t.Outcome == Cancelled {
			cancelled[t.Task]++
		}
		if !t.Outcome.Counted() || t.Outcome == InfraError {
			continue
		}
		rk := kills[t.Task][t.Ratio]
		if rk == nil {
			rk = &RatioKills{Ratio: t.Ratio}
			kills[t.Task][t.Ratio] = rk
		}
		rk.Trials++
		k := key{t.Task, t.Agent, t.Repeat}
		if len(t.OOMs) > 0 {
			rk.Killed++
			above[k] = max(above[k], t.Policy.HardLimitBytes)
			continue
		}
		need[k] = max(need[k], TrialPeakBytes(t))
	}
	sort.Strings(tasks)
	var out []Calibration
	for _, task := range tasks {
		c := Calibration{Task: task, SpecBytes: specs[task], Cancelled: cancelled[task], TargetKillRate: target, Margin: margin}
		for _, rk := range kills[task] {
			c.Kills = append(c.Kills, *rk)
		}
		sort.Slice(c.Kills, func(i, j int) bool { return c.Kills[i].Ratio.Less(c.Kills[j].Ratio) })
		for k, v := range need {
			if k.task == task {
				c.NeedBytes = append(c.NeedBytes, v)
			}
		}
		for k, v := range above {
			if _, ok := need[k]; k.task == task && !ok {
				c.Censored++
				c.CensoredAboveBytes = max(c.CensoredAboveBytes, v)
			}
		}
		sort.Slice(c.NeedBytes, func(i, j int) bool { return c.NeedBytes[i] < c.NeedBytes[j] })
		total := len(c.NeedBytes) + c.Censored
		switch {
		case total == 0:
			c.Verdict = "unknown"
		case float64(c.Censored)/float64(total) > target:
			c.Verdict = "unknown"
		default:
			q := quantileBytes(c.NeedBytes, 1-target)
			limit := roundUp(float64(q) * (1 + margin))
			switch {
			case limit < int64(lowerBelow*float64(c.SpecBytes)):
				c.Verdict = "lower"
				c.GuaranteeBytes = roundUp(float64(quantileBytes(c.NeedBytes, 0.5)))
				c.LimitBytes = max(limit, c.GuaranteeBytes)
			case limit <= c.SpecBytes:
				c.Verdict, c.GuaranteeBytes, c.LimitBytes = "keep", c.SpecBytes, c.SpecBytes
			default:
				c.Verdict = "raise"
				c.GuaranteeBytes = max(c.SpecBytes, roundUp(float64(quantileBytes(c.NeedBytes, 0.5))))
				c.LimitBytes = max(limit, c.GuaranteeBytes)
			}
		}
		if c.Verdict != "unknown" {
			c.Exceeding = c.Censored
			for _, v := range c.NeedBytes {
				if v > c.LimitBytes {
					c.Exceeding++
				}
			}
			c.KillRateCI = Wilson(c.Exceeding, total)
			c.RunsForTarget = RunsForKillRate(target)
		}
		out = append(out, c)
	}
	return out
}

// quantileBytes is the empirical quantile (the smallest value with at
// least q of the sample at or below it).
func quantileBytes(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
