package model

import (
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// Statistics of the outcome matrix, after E. Miller, "Adding Error Bars to
// Evals" (2024): Wilson intervals per cell, means clustered by task per
// ratio, and differences between ratios paired by task.

// Z95 is the two-sided 95% normal quantile; Z80 the one-sided 80% one.
var (
	Z95 = distuv.UnitNormal.Quantile(0.975)
	Z80 = distuv.UnitNormal.Quantile(0.80)
)

// DefaultNoisePP is the difference under which a gap is called noise:
// resources alone moved Terminal-Bench 2.0 scores by up to 6 points in
// Anthropic's infrastructure-noise runs, which advise distrusting
// leaderboard gaps under 3.
const DefaultNoisePP = 0.03

// Interval is a closed interval of rates.
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Contains says whether x lies in the interval.
func (i Interval) Contains(x float64) bool { return i.Lo <= x && x <= i.Hi }

// Wilson is the Wilson score 95% interval of k successes in n trials; with
// no trials it is the whole [0, 1].
func Wilson(k, n int) Interval {
	if n <= 0 {
		return Interval{0, 1}
	}
	return wilsonZ(k, n, Z95)
}

// WideInterval is the width above which a cell's interval is said to be
// wide, and what RepeatsToNarrow narrows it to: 30 points (±15pp).
const WideInterval = 0.30

// RepeatsToNarrow is the fewest trials of a cell, at the share k/n seen
// so far, whose Wilson interval is at most width wide; 0 when n already
// gives that (or nothing was seen to go by). At 3 repeats an interval
// spans most of 0–100; a new user saw [0–100] with no hint of what would
// narrow it.
func RepeatsToNarrow(k, n int, width float64) int {
	if n <= 0 || width <= 0 {
		return 0
	}
	if iv := Wilson(k, n); iv.Hi-iv.Lo <= width {
		return 0
	}
	p := float64(k) / float64(n)
	for m := n + 1; m <= 10000; m++ {
		if iv := Wilson(int(math.Round(p*float64(m))), m); iv.Hi-iv.Lo <= width {
			return m
		}
	}
	return 0
}

// Count is k events in n trials, for one task (row) at one ratio.
type Count struct{ K, N int }

// Rate is k/n (0 with no trials).
func (c Count) Rate() float64 { return ratio(c.K, c.N) }

// Estimate is a mean with its standard error and 95% interval.
type Estimate struct {
	Mean float64  `json:"mean"`
	SE   float64  `json:"se"`
	CI   Interval `json:"ci"`
	// HalfWidth is the larger distance from the
	// mean to an end of CI (the interval is asymmetric near 0 and 1, and
	// for one task it is the Wilson interval).
	HalfWidth float64 `json:"half_width"`
	Tasks     int     `json:"tasks"`
	Trials    int     `json:"trials"`
}

// Count is how many of the trials the rate counts (a success rate's
// successes): the mean times the trials, rounded.
func (e Estimate) Count() int { return int(math.Round(e.Mean * float64(e.Trials))) }

// tQuantile is the p quantile of Student's t with df degrees of freedom
// (of the normal distribution when df is not positive).
func tQuantile(p, df float64) float64 {
	if df <= 0 {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// ClusteredMean is the mean over all trials with a standard error
// clustered by task: repeats of one task are correlated, so the variance
// is summed over tasks of the squared sum of residuals, with the usual
// small-cluster (CR1) correction G/(G−1) for G tasks,
// SE² = G/(G−1) · Σ_task (k_t − n_t·p)² / N²,
// and the interval uses Student's t with G−1 degrees of freedom. It is
// never narrower than the Wilson interval of the pooled count, so tasks
// that all pass (or all fail) do not give a zero-width interval. With one
// task there is no spread between tasks to cluster: the interval is that
// task's Wilson interval.
func ClusteredMean(tasks []Count) Estimate {
	var e Estimate
	var k int
	for _, c := range tasks {
		if c.N == 0 {
			continue
		}
		e.Tasks++
		e.Trials += c.N
		k += c.K
	}
	if e.Trials == 0 {
		e.CI = Interval{0, 1}
		return e
	}
	p := float64(k) / float64(e.Trials)
	e.Mean = p
	wilson := Wilson(k, e.Trials)
	if e.Tasks == 1 {
		e.SE = math.Sqrt(p * (1 - p) / float64(e.Trials))
		e.CI = wilson
	} else {
		var v float64
		for _, c := range tasks {
			r := float64(c.K) - float64(c.N)*p
			v += r * r
		}
		g := float64(e.Tasks)
		e.SE = math.Sqrt(g/(g-1)*v) / float64(e.Trials)
		q := tQuantile(0.975, g-1)
		e.CI = Interval{math.Max(0, math.Min(p-q*e.SE, wilson.Lo)), math.Min(1, math.Max(p+q*e.SE, wilson.Hi))}
	}
	e.HalfWidth = math.Max(p-e.CI.Lo, e.CI.Hi-p)
	return e
}

// Paired is the difference other − base over tasks run at both ratios.
// One rule gives both CI and P (PairedDiff), so the interval excludes 0
// exactly when P < 0.05.
type Paired struct {
	Tasks int      `json:"tasks"`
	Diff  float64  `json:"diff"`
	SE    float64  `json:"se"`
	CI    Interval `json:"ci"`
	P     float64  `json:"p"`
	// DF is the degrees of freedom of the t distribution used (T−1); 0
	// means the normal one (a single task, or the cells' binomial error
	// decided the interval).
	DF float64 `json:"df"`
	// SDTask is the standard deviation of the per-task differences, the
	// input to power calculations.
	SDTask float64 `json:"sd_task"`
}

// plusTwoVar is the binomial variance of one rate with the Agresti–Caffo
// adjustment, so 0/3 and 3/3 are not treated as certain.
func plusTwoVar(c Count) float64 {
	p := (float64(c.K) + 1) / (float64(c.N) + 2)
	return p * (1 - p) / float64(c.N)
}

// PairedDiff compares two ratios task by task, centred on the observed
// mean per-task difference; every interval below is the wider of two and
// its p-value the larger of their two tests', so the interval leaves out 0
// exactly when p < 0.05. With two tasks or more: Student's t with T−1
// degrees of freedom on the spread of the per-task differences, and the
// normal one on the cells' binomial error (plus-two rates, so 0/3 and 3/3
// are not certain), which the spread of a few tasks understates (every
// task going from 0/3 to 3/3 has no spread at all) and which is a known
// variance, not one estimated from T points (t with 1 degree of freedom,
// q = 12.7, spread two tasks at 6/6 and 6/6 over [−100, +100]). With one
// task there is no spread: Newcombe's hybrid score interval (each rate's
// Wilson interval, combined about the observed difference) with the
// p-value it inverts, and the Agresti–Caffo comparison (one success and
// one failure added to each) with its z-test. Agresti–Caffo alone centred
// on adjusted rates that move with the cells' sizes: 0/2 against 0/10 was
// "0pp [−62, +29] p 0.470"; identical rates per task are now a difference
// of 0 with p 1, whatever the counts.
func PairedDiff(base, other []Count) Paired {
	var d []float64
	var floor float64
	var pb, po []Count
	for i := range base {
		if base[i].N == 0 || other[i].N == 0 {
			continue
		}
		d = append(d, other[i].Rate()-base[i].Rate())
		floor += plusTwoVar(base[i]) + plusTwoVar(other[i])
		pb, po = append(pb, base[i]), append(po, other[i])
	}
	r := Paired{Tasks: len(d)}
	if r.Tasks == 0 {
		r.P, r.CI = 1, Interval{-1, 1}
		return r
	}
	t := float64(r.Tasks)
	r.Diff = stat.Mean(d, nil)
	if r.Tasks == 1 {
		// The wider of the two intervals and the larger p: Newcombe's
		// holds 0 at equal rates, Agresti–Caffo's is the more cautious
		// at a few trials a cell (2/2 against 0/2: Newcombe's alone
		// says p 0.028, where no exact test of 2 trials a cell goes
		// under 0.125).
		ac, acSE := agrestiCaffo(pb[0], po[0])
		nc := newcombe(pb[0], po[0], Z95)
		r.CI = Interval{math.Min(ac.Lo, nc.Lo), math.Max(ac.Hi, nc.Hi)}
		r.P = math.Max(newcombeP(pb[0], po[0]), 2*distuv.UnitNormal.Survival(math.Abs(ac.Lo+ac.Hi)/2/acSE))
		// One task's trials are the pooled ones too: the pooled test
		// (Fisher's exact) asks the same question, and the line shows
		// both. The larger p, and an interval reaching 0 where the exact
		// test does not reject: 0/3 against 3/3 read "p by task 0.018 ·
		// pooled 0.100 · real" (a new user's).
		if f := FisherExact(pb[0].K, pb[0].N, po[0].K, po[0].N); f > r.P {
			r.P = f
			if f >= 0.05 {
				r.CI = Interval{math.Min(r.CI.Lo, 0), math.Max(r.CI.Hi, 0)}
			}
		}
		// The normal SE whose ±1.96 spans the same width, for power.
		r.SE = (r.CI.Hi - r.CI.Lo) / (2 * Z95)
		r.CI = clipDiff(r.CI)
		return r
	}
	r.SDTask = stat.StdDev(d, nil)
	spread, binomial := r.SDTask/math.Sqrt(t), math.Sqrt(floor)/t
	qt := tQuantile(0.975, t-1)
	r.SE, r.DF = spread, t-1
	if Z95*binomial >= qt*spread {
		r.SE, r.DF = binomial, 0
	}
	q := tQuantile(0.975, r.DF)
	r.CI = clipDiff(Interval{r.Diff - q*r.SE, r.Diff + q*r.SE})
	if r.Diff == 0 {
		r.P = 1
		return r
	}
	pz := 2 * distuv.UnitNormal.Survival(math.Abs(r.Diff)/binomial)
	pt := 0.0 // no spread: the t test alone would be certain
	if spread > 0 {
		pt = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: t - 1}.Survival(math.Abs(r.Diff)/spread)
	}
	r.P = math.Max(pz, pt)
	return r
}

// wilsonZ is the Wilson score interval of k in n at the normal quantile z.
func wilsonZ(k, n int, z float64) Interval {
	p, nf := float64(k)/float64(n), float64(n)
	den := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return Interval{math.Max(0, centre-half), math.Min(1, centre+half)}
}

// agrestiCaffo is the Agresti–Caffo 95% interval of other − base (one
// success and one failure added to each) and its SE.
func agrestiCaffo(base, other Count) (Interval, float64) {
	adj := func(c Count) (p, n float64) {
		n = float64(c.N) + 2
		return (float64(c.K) + 1) / n, n
	}
	ab, nb := adj(base)
	ao, no := adj(other)
	centre, se := ao-ab, math.Sqrt(ab*(1-ab)/nb+ao*(1-ao)/no)
	return Interval{centre - Z95*se, centre + Z95*se}, se
}

// newcombe is Newcombe's hybrid score interval (1998, method 10) of
// other − base at the normal quantile z: the observed difference, less
// and plus the two Wilson intervals' distances combined.
func newcombe(base, other Count, z float64) Interval {
	b, o := wilsonZ(base.K, base.N, z), wilsonZ(other.K, other.N, z)
	pb, po := base.Rate(), other.Rate()
	d := po - pb
	return Interval{
		d - math.Hypot(po-o.Lo, b.Hi-pb),
		d + math.Hypot(o.Hi-po, pb-b.Lo),
	}
}

// newcombeP is the two-sided p-value Newcombe's interval inverts: 2·Φ̄(z*)
// for the z* at which the interval's near edge reaches 0 (1 when the
// rates are equal: the interval holds 0 at every level).
func newcombeP(base, other Count) float64 {
	d := other.Rate() - base.Rate()
	if d == 0 {
		return 1
	}
	holds0 := func(z float64) bool { return newcombe(base, other, z).Contains(0) }
	lo, hi := 0.0, 1.0
	for !holds0(hi) && hi < 64 {
		lo, hi = hi, 2*hi
	}
	for i := 0; i < 100; i++ {
		mid := (lo + hi) / 2
		if holds0(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return 2 * distuv.UnitNormal.Survival((lo+hi)/2)
}

// clipDiff keeps a difference of rates within [−1, 1].
func clipDiff(i Interval) Interval { return Interval{math.Max(i.Lo, -1), math.Min(i.Hi, 1)} }

// Noise says whether a difference cannot be told from noise: its interval
// contains zero or it is smaller than the threshold.
func Noise(diff float64, ci Interval, threshold float64) bool {
	return ci.Contains(0) || math.Abs(diff) < threshold
}

// Verdict is how every view names a difference: "real" where its 95%
// interval excludes 0 and it is at least the threshold (noisePP);
// "noise" where the whole interval lies within ±noisePP — no difference
// that large, to the design's precision; "unsure" otherwise: the
// interval reaches past the threshold without the difference being real
// (it holds 0, or the difference is under the threshold), too few runs
// to tell. 0 of 2 against 2 of 2, a kill every time, read "noise" (two
// new users'); so did 0pp [-65, +65] (a fourth new user's: it rules
// nothing out).
func Verdict(diff float64, ci Interval, noisePP float64) string {
	switch {
	case !Noise(diff, ci, noisePP):
		return "real"
	case ci.Lo > -noisePP && ci.Hi < noisePP:
		return "noise"
	}
	return "unsure"
}

// VerdictLegend says what Verdict's words mean at a threshold.
func VerdictLegend(noisePP float64) string {
	return fmt.Sprintf("real: the 95%% interval excludes 0 and |diff| ≥ %.0fpp; noise: the whole interval within ±%.0fpp; unsure: neither, the interval reaching past ±%.0fpp without being real (more runs would tell)", 100*noisePP, 100*noisePP, 100*noisePP)
}

// MinDetectable is the smallest difference a design with this standard
// error (and df degrees of freedom, 0 for the normal) detects at 80% power
// and α = 0.05 (two-sided). It can exceed 1: no difference of rates is
// detectable then (see Detectable).
func MinDetectable(se, df float64) float64 {
	return (tQuantile(0.975, df) + tQuantile(0.80, df)) * se
}

// Detectable says whether a minimum detectable difference is one a
// difference of rates can reach (at most 100 points).
func Detectable(mde float64) bool { return mde > 0 && mde <= 1 }

// DetectableText is how every view prints a minimum detectable
// difference: "42pp", or "none" when no difference of rates (at most
// 100 points) would be detected with this design.
func DetectableText(mde float64) string {
	if !Detectable(mde) {
		return "none"
	}
	return fmt.Sprintf("%.0fpp", 100*mde)
}

// RepeatsNeeded is how many repeats per task and ratio would detect delta
// with T tasks, from the observed spread of per-task differences sdTask
// at the current repeats k and mean within-task binomial variance w (the
// sum of p(1−p) at the two ratios). The spread splits into a part between
// tasks, which repeats cannot shrink, and w/k. It returns 0 when no number
// of repeats suffices (more tasks are needed).
func RepeatsNeeded(delta, sdTask, w float64, k, tasks int) int {
	if delta <= 0 || tasks < 1 || k < 1 {
		return 0
	}
	between := math.Max(sdTask*sdTask-w/float64(k), 0)
	budget := delta * delta * float64(tasks) / ((Z95 + Z80) * (Z95 + Z80))
	if budget <= between {
		return 0
	}
	if w == 0 {
		return 1
	}
	return int(math.Ceil(w / (budget - between)))
}

// Analysis is the statistics of a matrix against a baseline ratio; a
// knob's column is compared with its own baseline (model.Baseline), which
// each Comparison names as its Base.
type Analysis struct {
	Baseline    Ratio        `json:"baseline"`
	NoisePP     float64      `json:"noise_threshold"`
	ByRatio     []RatioStats `json:"by_ratio"`
	Cells       []CellStats  `json:"cells"`
	Comparisons []Comparison `json:"comparisons"`
	Power       Power        `json:"power"`
	rows        map[RowKey]map[Ratio]CellStats
	bases       map[Ratio]Ratio
}

// RatioStats is one ratio across tasks.
type RatioStats struct {
	Ratio   Ratio    `json:"ratio"`
	Success Estimate `json:"success"`
	Infra   Estimate `json:"infra_error"`
}

// CellStats is one task · agent at one ratio.
type CellStats struct {
	RowKey
	Ratio   Ratio    `json:"ratio"`
	Success Count    `json:"success"`
	Infra   Count    `json:"infra_error"`
	SuccCI  Interval `json:"success_ci"`
	InfraCI Interval `json:"infra_error_ci"`
	// VsBaseline compares the cell's success with the same task at the
	// baseline, by the same rule as a one-task Comparison (at the
	// baseline itself: no difference, P 1).
	VsBaseline Paired `json:"success_vs_baseline"`
	// Noise is true where the difference cannot be told from noise
	// (noise and unsure alike); Label is Verdict's word ("" at the
	// baseline itself).
	Noise bool   `json:"noise_vs_baseline"`
	Label string `json:"verdict_vs_baseline,omitempty"`
}

// The two metrics every comparison is made on.
const (
	Success  = "success"
	InfraErr = "infra-error"
)

// Counts is, for each of the matrix's rows, the events of metric
// (Success or InfraErr) at ratio r; a row with no trial there counts
// {0, 0}.
func (m *Matrix) Counts(r Ratio, metric string) []Count {
	var out []Count
	for _, row := range m.Rows {
		out = append(out, m.count(row, r, metric))
	}
	return out
}

func (m *Matrix) count(row RowKey, r Ratio, metric string) Count {
	c := m.Cell(row, r)
	if c == nil {
		return Count{}
	}
	if metric == InfraErr {
		return Count{c.Rates.InfraErrs, c.Rates.Counted}
	}
	return Count{c.Rates.Successes, c.Rates.Counted}
}

// Comparison is one ratio against the baseline for one metric.
type Comparison struct {
	Metric string `json:"metric"` // Success or InfraErr
	Base   Ratio  `json:"base"`
	Other  Ratio  `json:"other"`
	Paired
	// Noise is true for noise and unsure alike; Label is Verdict's word.
	Noise         bool    `json:"noise"`
	Label         string  `json:"verdict"`
	MinDetectable float64 `json:"min_detectable"`
	// PooledP is Fisher's exact test with every counted trial of the two
	// ratios pooled (PooledExact): the suite's question, P the tasks'.
	PooledP float64 `json:"pooled_p"`
}

// Power summarises what the design can tell apart.
type Power struct {
	Tasks   int `json:"tasks"`
	Repeats int `json:"repeats"`
	// MinDetectable is the median over the success comparisons.
	MinDetectable float64 `json:"min_detectable"`
	// Detect is the difference asked about and RepeatsNeeded the repeats
	// per cell that would detect it (0: not with this many tasks).
	Detect        float64 `json:"detect"`
	RepeatsNeeded int     `json:"repeats_needed"`
	// ExactFloor, where one row is compared, is the least p Fisher's
	// exact test can give the cells of its most favoured comparison
	// (ExactCells: all of the first passing against none of the other's):
	// at 0.05 or more no difference is detectable in any, whatever the
	// repeats' normal approximation says. 0 where no comparison is of
	// one row.
	ExactFloor float64 `json:"exact_floor,omitempty"`
	ExactCells [2]int  `json:"-"`
}

// ExactRepeats is the least repeats a cell at which Fisher's exact test
// can reject at α = 0.05 (4: 4/4 against 0/4 has p 0.029).
func ExactRepeats() int {
	n := 1
	for ExactFloor(n, n) >= 0.05 {
		n++
	}
	return n
}

// oneRow is the sizes of the one row's two cells where exactly one row
// has trials on both sides.
func oneRow(a, b []Count) (nA, nB int, one bool) {
	rows := 0
	for i := range a {
		if a[i].N > 0 && b[i].N > 0 {
			rows++
			nA, nB = a[i].N, b[i].N
		}
	}
	return nA, nB, rows == 1
}

// Analyze computes every statistic of the matrix against baseline, calling
// differences under noisePP noise; detect is the difference the power line
// is asked about.
func Analyze(m *Matrix, baseline Ratio, noisePP, detect float64) *Analysis {
	a := &Analysis{Baseline: baseline, NoisePP: noisePP, rows: map[RowKey]map[Ratio]CellStats{}, bases: map[Ratio]Ratio{}}
	counts := func(r Ratio) (succ, infra []Count) { return m.Counts(r, Success), m.Counts(r, InfraErr) }
	var mdes []float64
	var sds, ws []float64
	repeats := 0
	exactFloor, exactN := 0.0, [2]int{}
	for _, r := range m.Ratios {
		// A knob's column is compared within its knob (BaselineIn).
		base := BaselineIn(r, baseline, m.Ratios)
		a.bases[r] = base
		baseSucc, baseInfra := counts(base)
		succ, infra := counts(r)
		a.ByRatio = append(a.ByRatio, RatioStats{Ratio: r, Success: ClusteredMean(succ), Infra: ClusteredMean(infra)})
		for i, row := range m.Rows {
			cs := CellStats{RowKey: row, Ratio: r, Success: succ[i], Infra: infra[i], SuccCI: Wilson(succ[i].K, succ[i].N), InfraCI: Wilson(infra[i].K, infra[i].N), VsBaseline: Paired{P: 1, CI: Interval{-1, 1}}, Noise: true}
			repeats = max(repeats, succ[i].N)
			if r != base && succ[i].N > 0 && baseSucc[i].N > 0 {
				cs.VsBaseline = PairedDiff([]Count{baseSucc[i]}, []Count{succ[i]})
				cs.Noise = Noise(cs.VsBaseline.Diff, cs.VsBaseline.CI, noisePP)
				cs.Label = Verdict(cs.VsBaseline.Diff, cs.VsBaseline.CI, noisePP)
			}
			a.Cells = append(a.Cells, cs)
			if a.rows[row] == nil {
				a.rows[row] = map[Ratio]CellStats{}
			}
			a.rows[row][r] = cs
		}
		if r == base {
			continue
		}
		for _, metric := range []struct {
			name        string
			base, other []Count
		}{{Success, baseSucc, succ}, {InfraErr, baseInfra, infra}} {
			p := PairedDiff(metric.base, metric.other)
			if p.Tasks == 0 {
				continue
			}
			c := Comparison{Metric: metric.name, Base: base, Other: r, Paired: p, Noise: Noise(p.Diff, p.CI, noisePP), Label: Verdict(p.Diff, p.CI, noisePP), MinDetectable: MinDetectable(p.SE, p.DF),
				PooledP: PooledExact(metric.base, metric.other)}
			if nA, nB, one := oneRow(metric.base, metric.other); one {
				// One row's p is at least Fisher's exact test's: it detects
				// no less than that test can.
				c.MinDetectable = max(c.MinDetectable, ExactMDE(nA, nB))
				if f := ExactFloor(nA, nB); metric.name == Success && (exactN[0] == 0 || f < exactFloor) {
					// The design's best: none detectable only if no
					// comparison can reject.
					exactFloor, exactN = f, [2]int{nA, nB}
				}
			}
			a.Comparisons = append(a.Comparisons, c)
			if metric.name == Success {
				mdes = append(mdes, c.MinDetectable)
				sds = append(sds, p.SDTask)
				var w float64
				for i := range metric.base {
					if metric.base[i].N > 0 && metric.other[i].N > 0 {
						// Plus-two rates, so 0/3 and 3/3 still carry sampling noise.
						w += plusTwoVar(metric.base[i])*float64(metric.base[i].N) + plusTwoVar(metric.other[i])*float64(metric.other[i].N)
					}
				}
				ws = append(ws, w/float64(p.Tasks))
			}
		}
	}
	a.Power = Power{Tasks: len(m.Rows), Repeats: repeats, Detect: detect, ExactFloor: exactFloor, ExactCells: exactN}
	if len(mdes) > 0 {
		a.Power.MinDetectable = median(mdes)
		if len(m.Rows) >= 2 {
			a.Power.RepeatsNeeded = RepeatsNeeded(detect, median(sds), median(ws), max(repeats, 1), len(m.Rows))
		}
	}
	return a
}

// BaseOf is the column r was compared with (r itself: none).
func (a *Analysis) BaseOf(r Ratio) Ratio {
	if b, ok := a.bases[r]; ok {
		return b
	}
	return BaselineIn(r, a.Baseline, nil)
}

// Cell returns a cell's statistics.
func (a *Analysis) Cell(row RowKey, r Ratio) (CellStats, bool) {
	c, ok := a.rows[row][r]
	return c, ok
}

// Comparison returns one comparison against the baseline.
func (a *Analysis) Comparison(metric string, other Ratio) (Comparison, bool) {
	for _, c := range a.Comparisons {
		if c.Metric == metric && c.Other == other {
			return c, true
		}
	}
	return Comparison{}, false
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// CrossComparison is experiment B against experiment A at one ratio and
// for one metric, paired by the tasks both ran there.
type CrossComparison struct {
	Ratio  Ratio    `json:"ratio"`
	Metric string   `json:"metric"`
	A      Estimate `json:"a"`
	B      Estimate `json:"b"`
	Paired
	// Noise is true for noise and unsure alike; Label is Verdict's word.
	Noise bool   `json:"noise"`
	Label string `json:"verdict"`
	// PooledP is Fisher's exact test of A's trials against B's, pooled
	// over the tasks both ran at the ratio (PooledExact).
	PooledP float64 `json:"pooled_p"`
}

// CompareExperiments pairs two experiments' matrices (another day,
// another host) by task and ratio, by the same rules as Analyze.
func CompareExperiments(a, b *Matrix, noisePP float64) []CrossComparison {
	var out []CrossComparison
	for _, r := range a.Ratios {
		if _, ok := b.ByRatio[r]; !ok {
			continue
		}
		for _, metric := range []string{Success, InfraErr} {
			var ca, cb []Count
			for _, row := range a.Rows {
				if a.Cell(row, r) == nil || b.Cell(row, r) == nil {
					continue
				}
				ca, cb = append(ca, a.count(row, r, metric)), append(cb, b.count(row, r, metric))
			}
			if len(ca) == 0 {
				continue
			}
			p := PairedDiff(ca, cb)
			out = append(out, CrossComparison{Ratio: r, Metric: metric, A: ClusteredMean(ca), B: ClusteredMean(cb), Paired: p, Noise: Noise(p.Diff, p.CI, noisePP), Label: Verdict(p.Diff, p.CI, noisePP), PooledP: PooledExact(ca, cb)})
		}
	}
	return out
}

// ExactNote says, for one row too few repeats a cell for Fisher's exact
// test ever to reject, why no difference is detectable and how many
// repeats would make one so; "" otherwise.
// The console's short form leaves out which test.
func (p Power) ExactNote(short bool) string {
	if p.Tasks != 1 || p.ExactFloor < 0.05 {
		return ""
	}
	test := " (Fisher's exact, which one row's p is at least)"
	if short {
		test = ""
	}
	a, b := p.ExactCells[0], p.ExactCells[1]
	return fmt.Sprintf("even %d/%d against 0/%d has p %s%s; %s a cell can", a, a, b, PText(p.ExactFloor), test, Quantity(ExactRepeats(), "repeat"))
}
