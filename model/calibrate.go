package model

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/gonum/stat/distuv"
)

// How a calibration reads an experiment's repeats.
const (
	// RepeatsReplayed: the task's steps draw every size from the trial's
	// seed (the built-in workload), so repeat r runs one trajectory at
	// every ratio, and the uncapped run of it measures what its killed
	// 1x run needed.
	RepeatsReplayed = "replayed"
	// RepeatsDrawn: the task draws its size afresh each run (os.urandom,
	// the network, the clock): every trial is one sample of its need, and
	// a killed one says only that its need passed its limit.
	RepeatsDrawn = "drawn"
)

// Calibration recommends a task · agent's guarantee and hard limit from
// what its trials really used. Agents of one task are never merged: a
// lean agent's median beside a heavy one's maximum describes neither.
type Calibration struct {
	Task      string `json:"task"`
	Agent     string `json:"agent"`
	SpecBytes int64  `json:"spec_bytes"`
	// Repeats is RepeatsReplayed or RepeatsDrawn: what one run is.
	Repeats string `json:"repeats"`
	// NeedBytes are the needs measured (sorted): per trajectory when
	// replayed (the largest peak of its runs that did not fail at their
	// limit), per trial when drawn; each the larger of the sampled
	// working set and the kernel's own step peaks.
	NeedBytes []int64 `json:"need_bytes"`
	// Censored counts the runs whose need is known only to exceed a
	// limit (they failed at it: killed or stalled), the largest such
	// limit CensoredAboveBytes.
	Censored           int   `json:"censored"`
	CensoredAboveBytes int64 `json:"censored_above_bytes,omitempty"`
	// Cancelled counts cancelled trials: not evidence either way.
	Cancelled int `json:"cancelled"`
	// Kills per tested ratio: memory failures over counted trials.
	Kills []RatioKills `json:"kills"`

	TargetKillRate float64 `json:"target_kill_rate"`
	Margin         float64 `json:"margin"`
	// MedianBytes and QuantileBytes are the need's median and its
	// 1 − target quantile, by the product-limit (Kaplan–Meier) estimate
	// over measured and censored runs; MedianCI is the median's 95%
	// interval from the order statistics, a run failed at its limit
	// taken at that limit for the low end and as unbounded for the high
	// end (0 there: left open by such runs).
	MedianBytes   int64   `json:"median_need_bytes"`
	MedianCI      []int64 `json:"median_need_ci_bytes,omitempty"`
	QuantileBytes int64   `json:"quantile_need_bytes"`
	// Verdict is "keep" (the spec covers the runs and is not much more
	// than they need), "raise" or "lower" (use the recommendation), or
	// "unknown" (too many runs failed at every limit tried: run it
	// uncapped to measure).
	Verdict        string `json:"verdict"`
	GuaranteeBytes int64  `json:"recommended_guarantee_bytes"`
	LimitBytes     int64  `json:"recommended_limit_bytes"`
	// Uncertainty: Exceeding of the runs are estimated to need more than
	// the recommended limit; KillRateCI is the Wilson 95% interval of the
	// kill rate that implies; RunsForTarget is how many runs with none
	// over it would show the kill rate at or below the target.
	Exceeding     int      `json:"exceeding"`
	KillRateCI    Interval `json:"kill_rate_ci"`
	RunsForTarget int      `json:"runs_for_target"`
	// RunsForMedian, when set, is about how many runs would place the
	// median within ±10%: the runs measured left it wider than that.
	RunsForMedian int `json:"runs_for_median,omitempty"`
}

// Runs is how many runs the recommendation stands on.
func (c Calibration) Runs() int { return len(c.NeedBytes) + c.Censored }

// TooFew says whether the runs are too few for the target: fewer than
// the runs that, none over the limit, would show it.
func (c Calibration) TooFew() bool { return c.RunsForTarget > 0 && c.Runs() < c.RunsForTarget }

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

// RatioKills is the memory failures at one tested ratio.
type RatioKills struct {
	Ratio   Ratio `json:"ratio"`
	Killed  int   `json:"killed"`
	Stalled int   `json:"stalled,omitempty"`
	Trials  int   `json:"trials"`
}

// Failed is killed plus stalled.
func (k RatioKills) Failed() int { return k.Killed + k.Stalled }

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

// need is one run's evidence of its need: exactly bytes, or (censored)
// more than bytes.
type need struct {
	bytes    int64
	censored bool
}

// Calibrate recommends, per task · agent, the smallest hard limit that
// would have kept memory failures at or below target (e.g. 0.01) with a
// margin (e.g. 0.10) on top, and a guarantee covering the median run.
// specs gives each task's current memory spec; seeded says which tasks
// replay a repeat exactly (SeededImage), whose repeats are paired across
// ratios; every other task's trials are each a draw of their own.
func Calibrate(trials []TrialResult, specs map[string]int64, seeded map[string]bool, target, margin float64) []Calibration {
	type traj struct {
		row    RowKey
		repeat int
	}
	exact := map[traj]int64{}
	above := map[traj]int64{}
	draws := map[RowKey][]need{}
	kills := map[RowKey]map[Ratio]*RatioKills{}
	cancelled := map[RowKey]int{}
	var rows []RowKey
	for _, t := range trials {
		row := RowKey{t.Task, t.Agent}
		if kills[row] == nil {
			kills[row] = map[Ratio]*RatioKills{}
			rows = append(rows, row)
		}
		if t.Outcome == Cancelled {
			cancelled[row]++
		}
		// A knob's column changes more than the memory limit.
		if !t.Outcome.Counted() || t.Outcome == InfraError || t.TaskNotRun || t.Cause.Outside() || !t.Ratio.Knobs.IsZero() {
			continue
		}
		rk := kills[row][t.Ratio]
		if rk == nil {
			rk = &RatioKills{Ratio: t.Ratio}
			kills[row][t.Ratio] = rk
		}
		rk.Trials++
		// A run that failed at its limit (killed, stalled) or lost a
		// process to it needed more than that limit.
		atLimit := t.MemoryFailure().Failed() || (len(t.OOMs) > 0 && t.Policy.HardLimitBytes > 0)
		switch t.MemoryFailure() {
		case KilledAtLimit:
			rk.Killed++
		case StalledAtLimit:
			rk.Stalled++
		}
		k := traj{row, t.Repeat}
		if atLimit {
			above[k] = max(above[k], t.Policy.HardLimitBytes)
			draws[row] = append(draws[row], need{t.Policy.HardLimitBytes, true})
			continue
		}
		exact[k] = max(exact[k], TrialPeakBytes(t))
		draws[row] = append(draws[row], need{TrialPeakBytes(t), false})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Task != rows[j].Task {
			return rows[i].Task < rows[j].Task
		}
		return rows[i].Agent < rows[j].Agent
	})
	out := make([]Calibration, 0, len(rows))
	for _, row := range rows {
		c := Calibration{Task: row.Task, Agent: row.Agent, SpecBytes: specs[row.Task], Cancelled: cancelled[row], TargetKillRate: target, Margin: margin, Repeats: RepeatsDrawn}
		for _, rk := range kills[row] {
			c.Kills = append(c.Kills, *rk)
		}
		sort.Slice(c.Kills, func(i, j int) bool { return c.Kills[i].Ratio.Less(c.Kills[j].Ratio) })
		obs := draws[row]
		if seeded[row.Task] {
			c.Repeats, obs = RepeatsReplayed, nil
			for k, v := range exact {
				if k.row == row {
					obs = append(obs, need{v, false})
				}
			}
			for k, v := range above {
				if _, ok := exact[k]; k.row == row && !ok {
					obs = append(obs, need{v, true})
				}
			}
		}
		for _, o := range obs {
			if o.censored {
				c.Censored++
				c.CensoredAboveBytes = max(c.CensoredAboveBytes, o.bytes)
			} else {
				c.NeedBytes = append(c.NeedBytes, o.bytes)
			}
		}
		sort.Slice(c.NeedBytes, func(i, j int) bool { return c.NeedBytes[i] < c.NeedBytes[j] })
		c.recommend(newProductLimit(obs))
		out = append(out, c)
	}
	return out
}

// recommend fills the verdict, the recommendation and its uncertainty.
func (c *Calibration) recommend(km productLimit) {
	c.Verdict = "unknown"
	// The median and its interval are known whenever half the runs were
	// measured, even where the limit's quantile is not.
	c.MedianBytes, _ = km.quantile(0.5)
	c.medianInterval()
	q, ok := km.quantile(1 - c.TargetKillRate)
	if !ok {
		return
	}
	c.QuantileBytes = q
	limit := roundUp(float64(q) * (1 + c.Margin))
	median := roundUp(float64(c.MedianBytes))
	switch {
	case limit < int64(lowerBelow*float64(c.SpecBytes)):
		c.Verdict = "lower"
		c.GuaranteeBytes = median
		c.LimitBytes = max(limit, c.GuaranteeBytes)
	case limit <= c.SpecBytes:
		c.Verdict, c.GuaranteeBytes, c.LimitBytes = "keep", c.SpecBytes, c.SpecBytes
	default:
		c.Verdict = "raise"
		c.GuaranteeBytes = max(c.SpecBytes, median)
		c.LimitBytes = max(limit, c.GuaranteeBytes)
	}
	n := c.Runs()
	c.Exceeding = int(math.Round(km.survival(c.LimitBytes) * float64(n)))
	c.KillRateCI = Wilson(c.Exceeding, n)
	c.RunsForTarget = RunsForKillRate(c.TargetKillRate)
}

// medianInterval sets MedianCI and RunsForMedian. A run that failed at
// its limit needed somewhere above it: the interval's low end takes each
// such need at its limit, its high end takes it as unbounded, so the
// interval holds whatever they needed (0 for the high end when the
// censored runs leave it open).
func (c *Calibration) medianInterval() {
	n := c.Runs()
	if c.MedianBytes == 0 || n == 0 {
		return
	}
	low := append([]int64(nil), c.NeedBytes...)
	high := append([]int64(nil), c.NeedBytes...)
	for range c.Censored {
		low = append(low, c.CensoredAboveBytes)
		high = append(high, math.MaxInt64)
	}
	sort.Slice(low, func(i, j int) bool { return low[i] < low[j] })
	sort.Slice(high, func(i, j int) bool { return high[i] < high[j] })
	lo, _ := medianCI(low)
	_, hi := medianCI(high)
	if hi == math.MaxInt64 {
		c.MedianCI = []int64{lo, 0}
		return
	}
	c.MedianCI = []int64{lo, hi}
	if width := float64(hi - lo); width > 0.2*float64(c.MedianBytes) {
		// The interval narrows as 1/√n: the runs that would bring it
		// to ±10% of the median.
		scale := width / (0.2 * float64(c.MedianBytes))
		c.RunsForMedian = max(int(math.Ceil(float64(n)*scale*scale)), n+1)
	}
}

// UnknownWhy says why the limit's quantile is unknown (Verdict
// "unknown"): no need measured at all, or more runs failed at their
// limit than the target leaves room for above every need measured.
func (c Calibration) UnknownWhy() string {
	if len(c.NeedBytes) == 0 {
		return fmt.Sprintf("it failed at every limit tried (%d runs, up to %s), so no need was measured; sweep with uncapped", c.Censored, FormatBytes(c.CensoredAboveBytes))
	}
	return fmt.Sprintf("%d of %d runs failed at limits up to %s, more than a %s fail rate allows above the largest need measured (%s); sweep with a ratio above %s (uncapped) to measure them",
		c.Censored, c.Runs(), FormatBytes(c.CensoredAboveBytes), strconv.FormatFloat(100*c.TargetKillRate, 'g', 3, 64)+"%", FormatBytes(c.NeedBytes[len(c.NeedBytes)-1]), FormatBytes(c.CensoredAboveBytes))
}

// medianCI is the distribution-free 95% interval of the median of sorted
// values: the order statistics j and k with P(j ≤ B < k) ≥ 95% for
// B ~ Binomial(n, ½) (with 5 runs: the smallest and the largest).
func medianCI(sorted []int64) (int64, int64) {
	n := len(sorted)
	b := distuv.Binomial{N: float64(n), P: 0.5}
	j := 0
	for j+1 < n && b.CDF(float64(j)) <= 0.025 {
		j++
	}
	k := n - 1 - j
	return sorted[j], sorted[max(k, j)]
}

// productLimit is the Kaplan–Meier estimate of a need's distribution from
// runs measured exactly and runs known only to exceed their limit: a run
// killed at its limit stays at risk up to that limit and drops out there,
// so the killed runs' needs are taken to be spread as the measured needs
// above their limit are (the limit is the design's, independent of the
// run's luck).
type productLimit struct {
	at   []int64   // the measured needs, ascending, distinct
	surv []float64 // the share of runs needing more than at[i]
}

func newProductLimit(obs []need) productLimit {
	sorted := append([]need(nil), obs...)
	// At a tie, a measured need comes before a censored one: a run killed
	// at L needed more than L.
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].bytes != sorted[j].bytes {
			return sorted[i].bytes < sorted[j].bytes
		}
		return !sorted[i].censored && sorted[j].censored
	})
	var km productLimit
	s, atRisk := 1.0, len(sorted)
	for i := 0; i < len(sorted); {
		v, events, leave := sorted[i].bytes, 0, 0
		for ; i < len(sorted) && sorted[i].bytes == v; i++ {
			leave++
			if !sorted[i].censored {
				events++
			}
		}
		if events > 0 {
			s *= 1 - float64(events)/float64(atRisk)
			km.at, km.surv = append(km.at, v), append(km.surv, s)
		}
		atRisk -= leave
	}
	return km
}

// quantile is the smallest measured need with at least q of runs at or
// under it; false when the censored runs leave it unknown (too many
// needed more than every limit tried).
func (km productLimit) quantile(q float64) (int64, bool) {
	for i, s := range km.surv {
		if 1-s >= q-1e-9 {
			return km.at[i], true
		}
	}
	return 0, false
}

// survival is the estimated share of runs needing more than b.
func (km productLimit) survival(b int64) float64 {
	s := 1.0
	for i, v := range km.at {
		if v > b {
			break
		}
		s = km.surv[i]
	}
	return s
}
