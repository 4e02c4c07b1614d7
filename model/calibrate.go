package model

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

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
	// Censored counts the runs whose need is known only as a lower
	// bound (right-censored): those that failed at a limit (killed or
	// stalled: need > that limit, the largest such CensoredAboveBytes)
	// and CutOff of them stopped by a time limit under any limit they
	// had (need ≥ the peak they reached, the largest CutOffAboveBytes).
	// CensoredBytes are every censored run's lower bound, sorted.
	Censored           int     `json:"censored"`
	CensoredAboveBytes int64   `json:"censored_above_bytes,omitempty"`
	CutOff             int     `json:"cut_off"`
	CutOffAboveBytes   int64   `json:"cut_off_above_bytes,omitempty"`
	CensoredBytes      []int64 `json:"censored_bytes,omitempty"`
	// Cancelled counts cancelled trials: not evidence either way.
	Cancelled int `json:"cancelled"`
	// Kills per tested ratio: memory failures over counted trials.
	Kills []RatioKills `json:"kills"`

	TargetKillRate float64 `json:"target_kill_rate"`
	Margin         float64 `json:"margin"`
	// MedianBytes and QuantileBytes are the need's median and its
	// 1 − target quantile, by the product-limit (Kaplan–Meier) estimate
	// over measured and censored runs; MedianCI is the median's 95%
	// interval from the order statistics, a censored run taken at its
	// lower bound for the low end and as unbounded for the high end (0
	// there: left open by such runs), so it holds whatever they needed.
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
	if !(target > 0 && target < 1) { // NaN too
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
// more than bytes: failed at that limit, or (cutOff) stopped by a time
// limit at that peak.
type need struct {
	bytes    int64
	censored bool
	cutOff   bool
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
	cut := map[traj]int64{}
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
		// process to it needed more than that limit; a run stopped by a
		// time limit needed at least what it reached.
		atLimit := t.MemoryFailure().Failed() || (len(t.OOMs) > 0 && t.Policy.HardLimitBytes > 0) || (t.Cause == CauseStalled && t.Policy.HardLimitBytes > 0)
		switch t.MemoryFailure() {
		case KilledAtLimit:
			rk.Killed++
		case StalledAtLimit:
			rk.Stalled++
		}
		k := traj{row, t.Repeat}
		switch {
		case atLimit:
			above[k] = max(above[k], t.Policy.HardLimitBytes)
			draws[row] = append(draws[row], need{bytes: t.Policy.HardLimitBytes, censored: true})
		case CutOff(t):
			cut[k] = max(cut[k], TrialPeakBytes(t))
			draws[row] = append(draws[row], need{bytes: TrialPeakBytes(t), censored: true, cutOff: true})
		default:
			exact[k] = max(exact[k], TrialPeakBytes(t))
			draws[row] = append(draws[row], need{bytes: TrialPeakBytes(t)})
		}
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
					obs = append(obs, need{bytes: v})
				}
			}
			// A trajectory no run measured to its end: above the most
			// any of its runs showed.
			for k, v := range above {
				if _, ok := exact[k]; k.row == row && !ok {
					obs = append(obs, need{bytes: max(v, cut[k]), censored: true, cutOff: cut[k] > v})
				}
			}
			for k, v := range cut {
				_, measured := exact[k]
				_, failed := above[k]
				if k.row == row && !measured && !failed {
					obs = append(obs, need{bytes: v, censored: true, cutOff: true})
				}
			}
		}
		for _, o := range obs {
			switch {
			case o.cutOff:
				c.Censored++
				c.CutOff++
				c.CutOffAboveBytes = max(c.CutOffAboveBytes, o.bytes)
				c.CensoredBytes = append(c.CensoredBytes, o.bytes)
			case o.censored:
				c.Censored++
				c.CensoredAboveBytes = max(c.CensoredAboveBytes, o.bytes)
				c.CensoredBytes = append(c.CensoredBytes, o.bytes)
			default:
				c.NeedBytes = append(c.NeedBytes, o.bytes)
			}
		}
		sort.Slice(c.NeedBytes, func(i, j int) bool { return c.NeedBytes[i] < c.NeedBytes[j] })
		sort.Slice(c.CensoredBytes, func(i, j int) bool { return c.CensoredBytes[i] < c.CensoredBytes[j] })
		c.recommend(obs)
		out = append(out, c)
	}
	return out
}

// recommend fills the verdict, the recommendation and its uncertainty.
// The median is the product-limit estimate over every run, a cut-off run
// censored at the peak it reached (its interval holds whatever they
// needed). The limit is not: a run's time limit cuts off the big needs
// first (they take longest), so their needs are not spread like the
// measured ones above their peaks; for the limit's quantile each cut-off
// run is taken to need more than any run measured, and the quantile is
// unknown (calibrate refuses, naming them) when they are more than the
// target leaves room for.
func (c *Calibration) recommend(obs []need) {
	c.Verdict = "unknown"
	// The median and its interval are known whenever half the runs were
	// measured, even where the limit's quantile is not.
	c.MedianBytes, _ = newProductLimit(obs).quantile(0.5)
	c.medianInterval()
	worst := append([]need(nil), obs...)
	for i := range worst {
		if worst[i].cutOff {
			worst[i].bytes = math.MaxInt64
		}
	}
	km := newProductLimit(worst)
	c.RunsForTarget = RunsForKillRate(c.TargetKillRate)
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
}

// medianInterval sets MedianCI and RunsForMedian. A censored run needed
// somewhere above its lower bound (the limit it failed at, the peak its
// time limit stopped it at): the interval's low end takes each such need
// at its bound, its high end takes it as unbounded, so the interval holds
// whatever they needed, however their censoring depended on their need
// (0 for the high end when the censored runs leave it open).
func (c *Calibration) medianInterval() {
	n := c.Runs()
	if n == 0 {
		return
	}
	low := append([]int64(nil), c.NeedBytes...)
	high := append([]int64(nil), c.NeedBytes...)
	for _, b := range c.CensoredBytes {
		low = append(low, b)
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
	if width := float64(hi - lo); c.MedianBytes > 0 && width > 0.2*float64(c.MedianBytes) {
		// The interval narrows as 1/√n: the runs that would bring it
		// to ±10% of the median.
		scale := width / (0.2 * float64(c.MedianBytes))
		c.RunsForMedian = max(int(math.Ceil(float64(n)*scale*scale)), n+1)
	}
}

// CensoredText says what the censored runs were: "7 censored: 2 failed
// at a limit (need > 320MiB), 5 cut off by their time limit (need ≥ the
// peak reached, up to 410MiB)"; "" for none.
func (c Calibration) CensoredText() string {
	if c.Censored == 0 {
		return ""
	}
	var parts []string
	if failed := c.Censored - c.CutOff; failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed at a limit (need > %s)", failed, FormatBytes(c.CensoredAboveBytes)))
	}
	if c.CutOff > 0 {
		parts = append(parts, fmt.Sprintf("%d cut off by their time limit (need ≥ the peak reached, up to %s)", c.CutOff, FormatBytes(c.CutOffAboveBytes)))
	}
	return fmt.Sprintf("%d censored: %s", c.Censored, strings.Join(parts, ", "))
}

// UnknownWhy says why the limit's quantile is unknown (Verdict
// "unknown"): no need measured at all, or more runs censored above every
// need measured than the target leaves room for; and how many runs
// measured to their end would place it.
func (c Calibration) UnknownWhy() string {
	what := "sweep with uncapped"
	if c.CutOff > 0 {
		what = "run it uncapped with a time limit its runs finish within"
	}
	more := fmt.Sprintf("%s: about %d runs measured to their end show a %s fail rate (%d so far)", what, c.RunsForTarget, strconv.FormatFloat(100*c.TargetKillRate, 'g', 3, 64)+"%", len(c.NeedBytes))
	if len(c.NeedBytes) == 0 {
		if c.Censored == 0 {
			// Nothing censored either (every run an infra error): "()"
			// stood where the reason goes (the twenty-ninth attacker's).
			return "no run was measured to its end; " + more
		}
		return fmt.Sprintf("no run was measured to its end (%s); %s", c.CensoredText(), more)
	}
	above := "lie above the largest need measured (" + FormatBytes(c.NeedBytes[len(c.NeedBytes)-1]) + ")"
	if c.CutOff > 0 {
		above = "may lie above the largest need measured (" + FormatBytes(c.NeedBytes[len(c.NeedBytes)-1]) + "; a run cut off by time may need any more than it reached)"
	}
	return fmt.Sprintf("of %d runs, %s; more than a %s fail rate allows %s, so the limit is unknown; %s",
		c.Runs(), c.CensoredText(), strconv.FormatFloat(100*c.TargetKillRate, 'g', 3, 64)+"%", above, more)
}

// medianCI is the distribution-free 95% interval of the median of sorted
// values: the order statistics sorted[j] and sorted[n−1−j], which miss
// the median with probability 2·P(B ≤ j) for B ~ Binomial(n, ½), the
// runs under it; j the largest with P(B ≤ j) ≤ 2.5% (with up to 8 runs:
// the smallest and the largest; one further in covered 93% at 8 runs,
// 92% at 40).
func medianCI(sorted []int64) (int64, int64) {
	n := len(sorted)
	b := distuv.Binomial{N: float64(n), P: 0.5}
	j := 0
	for j+1 < n-1-j && b.CDF(float64(j+1)) <= 0.025 {
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
