package model

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.6f, want %.6f (±%g)", what, got, want, tol)
	}
}

// Reference values from R's prop.test(correct=FALSE) / statsmodels'
// proportion_confint(method="wilson").
func TestWilsonAgainstPublishedValues(t *testing.T) {
	tests := []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 10, 0, 0.277530},
		{5, 10, 0.236593, 0.763407},
		{10, 10, 0.722470, 1},
		{1, 3, 0.061490, 0.792340},
	}
	for _, tt := range tests {
		ci := Wilson(tt.k, tt.n)
		near(t, "lo", ci.Lo, tt.lo, 1e-5)
		near(t, "hi", ci.Hi, tt.hi, 1e-5)
	}
	if ci := Wilson(0, 0); ci != (Interval{0, 1}) {
		t.Errorf("no trials: %v", ci)
	}
}

// Exact enumeration over the binomial distribution: the Wilson interval
// covers the true rate close to 95% of the time (its known behaviour:
// within a few points, never collapsing as the Wald interval does).
func TestWilsonCoverageByEnumeration(t *testing.T) {
	for _, c := range []struct {
		n int
		p float64
	}{{20, 0.3}, {50, 0.5}, {100, 0.1}, {263, 0.3}} {
		b := distuv.Binomial{N: float64(c.n), P: c.p}
		var cover float64
		for k := 0; k <= c.n; k++ {
			if Wilson(k, c.n).Contains(c.p) {
				cover += b.Prob(float64(k))
			}
		}
		if cover < 0.92 || cover > 0.99 {
			t.Errorf("n=%d p=%v: coverage %.4f", c.n, c.p, cover)
		}
	}
}

// Hand-checked numbers: Student's t quantiles (any table: 4 df 2.776,
// 80% one-sided 0.941), the Wilson interval of 12/14, and the per-ratio
// interval with five tasks (t with 4 df and the CR1 factor √(5/4)).
func TestSmallSampleRulesByHand(t *testing.T) {
	near(t, "t(0.975, 4)", tQuantile(0.975, 4), 2.776445, 1e-6)
	near(t, "t(0.80, 4)", tQuantile(0.80, 4), 0.940965, 1e-6)
	near(t, "z(0.975)", tQuantile(0.975, 0), 1.959964, 1e-6)
	w := Wilson(12, 14)
	near(t, "wilson 12/14 lo", w.Lo, 0.600586, 1e-6)
	near(t, "wilson 12/14 hi", w.Hi, 0.959906, 1e-6)

	tests := []struct {
		name           string
		counts         []Count
		mean, se, half float64
		lo, hi         float64
	}{
		// One task: no spread between tasks, so the interval is the
		// task's Wilson interval (it used to be 86% ±0).
		{"one task 12/14", []Count{{12, 14}}, 12.0 / 14, math.Sqrt(12.0 / 14 * 2 / 14 / 14), 12.0/14 - 0.600586, 0.600586, 0.959906},
		// Five tasks: p = 15/25, residuals −2 −2 1 1 2, Σr² = 14;
		// SE = √(5/4 · 14)/25 = 0.16733, half-width 2.776 · SE = 0.4646
		// (z and no correction gave 0.2933).
		{"five tasks", []Count{{1, 5}, {1, 5}, {4, 5}, {4, 5}, {5, 5}}, 0.6, 0.167332, 0.464588, 0.135412, 1},
		// Every task fails: no spread, but never a zero-width interval:
		// the pooled Wilson interval of 0/35, z²/(35+z²), is the floor.
		{"all fail", []Count{{0, 5}, {0, 5}, {0, 5}, {0, 5}, {0, 5}, {0, 5}, {0, 5}}, 0, 0, 0.098901, 0, 0.098901},
	}
	for _, tt := range tests {
		e := ClusteredMean(tt.counts)
		near(t, tt.name+" mean", e.Mean, tt.mean, 1e-6)
		near(t, tt.name+" se", e.SE, tt.se, 1e-6)
		near(t, tt.name+" ±", e.HalfWidth, tt.half, 1e-5)
		near(t, tt.name+" lo", e.CI.Lo, tt.lo, 1e-5)
		near(t, tt.name+" hi", e.CI.Hi, tt.hi, 1e-5)
	}
}

func TestClusteredMeanByHand(t *testing.T) {
	// p = 5/9; residuals 2−5/3, 0−5/3, 3−5/3; SE = √(Σr²)/9.
	e := ClusteredMean([]Count{{2, 3}, {0, 3}, {3, 3}, {0, 0}})
	near(t, "mean", e.Mean, 5.0/9, 1e-12)
	r := []float64{2 - 5.0/3, -5.0 / 3, 3 - 5.0/3}
	near(t, "se", e.SE, math.Sqrt(1.5*(r[0]*r[0]+r[1]*r[1]+r[2]*r[2]))/9, 1e-12)
	if e.Tasks != 3 || e.Trials != 9 {
		t.Errorf("tasks %d trials %d (the empty cell must not count)", e.Tasks, e.Trials)
	}
	// All pass: no spread, but the interval is the Wilson one of 6/6.
	if e := ClusteredMean([]Count{{3, 3}, {3, 3}}); e.Mean != 1 || e.SE != 0 || e.CI != Wilson(6, 6) || e.HalfWidth == 0 {
		t.Errorf("all pass: %+v", e)
	}
	if e := ClusteredMean(nil); e.CI != (Interval{0, 1}) {
		t.Errorf("nothing: %+v", e)
	}
	// With one trial per task the clustered SE is the ordinary one,
	// √(p(1−p)/n), times the CR1 factor √(G/(G−1)).
	var cs []Count
	for i := 0; i < 40; i++ {
		cs = append(cs, Count{K: i % 4 / 3, N: 1})
	}
	e = ClusteredMean(cs)
	near(t, "iid se", e.SE, math.Sqrt(40.0/39*e.Mean*(1-e.Mean)/40), 1e-12)
}

// scipy.stats.ttest_1samp([.1,.2,.3,.4], 0): t = 3.8730, p = 0.030466.
func TestPairedDiffMatchesAOneSampleTTest(t *testing.T) {
	base := []Count{{10, 100}, {10, 100}, {10, 100}, {10, 100}}
	other := []Count{{20, 100}, {30, 100}, {40, 100}, {50, 100}}
	p := PairedDiff(base, other)
	near(t, "diff", p.Diff, 0.25, 1e-12)
	near(t, "se", p.SE, 0.0645497, 1e-6)
	near(t, "p", p.P, 0.030466, 1e-5)
	near(t, "ci lo", p.CI.Lo, 0.25-3.182446*0.0645497, 1e-5)
	if p.Tasks != 4 {
		t.Errorf("tasks %d", p.Tasks)
	}
}

func TestPairedDiffEdgeCases(t *testing.T) {
	// Every task goes from 0/3 to 3/3: no spread, but the binomial floor
	// keeps the interval honest and the difference is real.
	all := PairedDiff([]Count{{0, 3}, {0, 3}, {0, 3}}, []Count{{3, 3}, {3, 3}, {3, 3}})
	if all.Diff != 1 || all.SE == 0 || all.CI.Contains(0) {
		t.Errorf("0/3 → 3/3 on three tasks: %+v", all)
	}
	// One task, 3/7 → 7/7 (was "+57pp [+14, +100] p 0.070": a Wald
	// interval beside Fisher's p). Agresti–Caffo: p̃ = 4/9 and 8/9 on
	// ñ = 9, centre 4/9, SE = √((4/9·5/9 + 8/9·1/9)/9) = 0.195982,
	// interval [0.0603, 0.8286], z = 2.2678, p = 0.02334. Newcombe's
	// hybrid score interval: Wilson 3/7 = [0.1582, 0.7495], 7/7 =
	// [0.6457, 1], so 4/7 − √((1−0.6457)² + (0.7495−3/7)²) = 0.09334 and
	// 4/7 + √(0 + (3/7−0.1582)²) = 0.84178, p 0.01852 (Python, same
	// formulas). The wider interval, the larger p — and one task's
	// trials are the pooled ones: Fisher's exact p, 0.06993, is larger
	// still and does not reject, so the interval reaches 0 (the line
	// said "p by task 0.023 · pooled 0.070 · real").
	one := PairedDiff([]Count{{3, 7}}, []Count{{7, 7}})
	near(t, "one task diff", one.Diff, 4.0/7, 1e-12)
	near(t, "one task lo", one.CI.Lo, 0, 1e-12)
	near(t, "one task hi", one.CI.Hi, 0.8417801, 1e-6)
	near(t, "one task p", one.P, FisherExact(3, 7, 7, 7), 1e-12)
	near(t, "Fisher 3/7 vs 7/7", one.P, 0.069930, 1e-6)
	// 0/3 against 3/3 (a new user's): 0.018 by task beside 0.100 pooled,
	// "real"; now the exact test's 0.100 and an interval holding 0.
	if nu := PairedDiff([]Count{{0, 3}}, []Count{{3, 3}}); math.Abs(nu.P-0.1) > 1e-9 || !nu.CI.Contains(0) {
		t.Errorf("0/3 → 3/3: %+v, want p 0.100 and an interval holding 0", nu)
	}
	// Two trials a cell, 2/2 → 0/2: no exact test goes under 0.125;
	// Newcombe's interval alone said p 0.028.
	if few := PairedDiff([]Count{{2, 2}}, []Count{{0, 2}}); few.P < 0.05 || !few.CI.Contains(0) {
		t.Errorf("2/2 → 0/2: %+v, want noise", few)
	}
	// One repeat each on two tasks.
	two := PairedDiff([]Count{{0, 1}, {1, 1}}, []Count{{1, 1}, {1, 1}})
	if two.Tasks != 2 || two.Diff != 0.5 || !two.CI.Contains(0) {
		t.Errorf("one repeat: %+v", two)
	}
	// Missing cells are skipped, not counted as zero.
	miss := PairedDiff([]Count{{1, 2}, {0, 0}}, []Count{{1, 2}, {2, 2}})
	if miss.Tasks != 1 || miss.Diff != 0 {
		t.Errorf("missing: %+v", miss)
	}
	if none := PairedDiff(nil, nil); none.Tasks != 0 || none.P != 1 {
		t.Errorf("nothing: %+v", none)
	}
}

// A seeded simulation checks RepeatsNeeded: with the repeats it asks for,
// a true 3-point gain over 100 tasks is detected about 80% of the time.
func TestRepeatsNeededBySimulation(t *testing.T) {
	const tasks, delta = 100, 0.10
	k := RepeatsNeeded(delta, 0, 0.5, 1, tasks)
	if k < 2 {
		t.Fatalf("repeats needed %d", k)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	draw := func(p float64) Count {
		c := Count{N: k}
		for i := 0; i < k; i++ {
			if rng.Float64() < p {
				c.K++
			}
		}
		return c
	}
	detected := 0
	const sims = 300
	for s := 0; s < sims; s++ {
		var base, other []Count
		for i := 0; i < tasks; i++ {
			base, other = append(base, draw(0.45)), append(other, draw(0.45+delta))
		}
		if p := PairedDiff(base, other); !p.CI.Contains(0) {
			detected++
		}
	}
	near(t, "power", float64(detected)/sims, 0.80, 0.08)
	if RepeatsNeeded(0.03, 0.5, 0.1, 3, 5) != 0 {
		t.Error("a between-task spread larger than the budget must need more tasks, not repeats")
	}
}

func TestNoiseLabel(t *testing.T) {
	if !Noise(0.02, Interval{0.01, 0.03}, 0.03) {
		t.Error("under the threshold is noise")
	}
	if !Noise(0.10, Interval{-0.01, 0.2}, 0.03) {
		t.Error("an interval containing zero is noise")
	}
	if Noise(-0.10, Interval{-0.2, -0.05}, 0.03) {
		t.Error("a clear drop is not noise")
	}
}

func TestAnalyzeTheBriefsShape(t *testing.T) {
	one, three := Ratio{K: 1}, Ratio{K: 3}
	var results []TrialResult
	add := func(task string, r Ratio, outs ...Outcome) {
		for i, o := range outs {
			results = append(results, TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: r, Repeat: i + 1}, Outcome: o})
		}
	}
	K, P, F := OOMKilled, Passed, Failed
	for _, task := range []string{"t1", "t2", "t3", "t4", "t5"} {
		add(task, one, K, K, K, K, P)
		add(task, three, P, K, P, P, P)
		add(task, Uncapped, P, P, P, P, P)
	}
	add("steady", one, P, F, P, P, F)
	add("steady", three, P, F, P, P, F)
	add("steady", Uncapped, P, F, P, P, F)
	a := Analyze(NewMatrix([]Ratio{one, three, Uncapped}, results), one, DefaultNoisePP, 0.03)
	infra, ok := a.Comparison("infra-error", Uncapped)
	if !ok || infra.Noise || infra.Diff >= 0 {
		t.Errorf("1x vs uncapped infra-error must be a real drop: %+v", infra)
	}
	steady, _ := a.Cell(RowKey{"steady", "a"}, Uncapped)
	if !steady.Noise || steady.VsBaseline.P < 0.999 {
		t.Errorf("the steady task's difference must be noise: %+v", steady)
	}
	if a.Power.Tasks != 6 || a.Power.Repeats != 5 || a.Power.MinDetectable <= 0 {
		t.Errorf("power %+v", a.Power)
	}
	if len(a.ByRatio) != 3 || a.ByRatio[0].Infra.Mean != 20.0/30 {
		t.Errorf("by ratio %+v", a.ByRatio)
	}
}

// One rule decides a comparison's interval and p-value: whatever the
// counts, the 95% interval leaves out 0 exactly when p < 0.05.
func TestIntervalAndPValueAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 2000; i++ {
		tasks := 1 + rng.IntN(6)
		n := 1 + rng.IntN(10)
		var base, other []Count
		for j := 0; j < tasks; j++ {
			base = append(base, Count{rng.IntN(n + 1), n})
			other = append(other, Count{rng.IntN(n + 1), n})
		}
		p := PairedDiff(base, other)
		if excluded := !p.CI.Contains(0); excluded != (p.P < 0.05) {
			// Only a tie at the edge may differ.
			if math.Abs(p.P-0.05) > 1e-9 {
				t.Fatalf("%v → %v: CI %v but p %.4f", base, other, p.CI, p.P)
			}
		}
	}
}

// A difference of rates is at most 100 points: a larger minimum
// detectable difference is printed as none, never as "157pp".
func TestDetectableNeverBeyond100pp(t *testing.T) {
	near(t, "mde t4", MinDetectable(0.1, 4), 0.1*(2.776445+0.940965), 1e-6)
	for _, tt := range []struct {
		mde  float64
		want string
	}{{0.42, "42pp"}, {1, "100pp"}, {1.57, "none"}, {0, "none"}} {
		if got := DetectableText(tt.mde); got != tt.want {
			t.Errorf("DetectableText(%v) = %q, want %q", tt.mde, got, tt.want)
		}
	}
}

// compare's statistics are Analyze's rules: B against A at each ratio both
// ran, paired by task.
func TestCompareExperimentsPairsByTask(t *testing.T) {
	one := Ratio{K: 1}
	mk := func(outs map[string][]Outcome) *Matrix {
		var rs []TrialResult
		for task, os := range outs {
			for i, o := range os {
				rs = append(rs, TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: one, Repeat: i + 1}, Outcome: o})
			}
		}
		return NewMatrix([]Ratio{one}, rs)
	}
	P, F, K := Passed, Failed, OOMKilled
	a := mk(map[string][]Outcome{"t1": {P, F, F}, "t2": {K, K, P}, "only-a": {P, P, P}})
	b := mk(map[string][]Outcome{"t1": {P, P, F}, "t2": {P, P, P}})
	got := CompareExperiments(a, b, DefaultNoisePP)
	if len(got) != 2 || got[0].Metric != Success || got[1].Metric != InfraErr {
		t.Fatalf("comparisons %+v", got)
	}
	s := got[0]
	want := PairedDiff([]Count{{1, 3}, {1, 3}}, []Count{{2, 3}, {3, 3}})
	if s.Paired != want || s.Tasks != 2 || s.A.Trials != 6 || s.B.Mean != 5.0/6 {
		t.Errorf("success: %+v, want %+v over the two shared tasks", s, want)
	}
	// The pooled test sees the same trials: 2 of 6 against 5 of 6, the
	// task A alone ran left out.
	if s.PooledP != FisherExact(2, 6, 5, 6) {
		t.Errorf("pooled p %v, want Fisher 2/6 vs 5/6 = %v", s.PooledP, FisherExact(2, 6, 5, 6))
	}
}

// A peak says which it is: the kernel's beside the sampled one where they
// differ, sampled where only the samples have a figure.
func TestPeakLabelSaysWhichPeak(t *testing.T) {
	f := FormatBytes
	for _, c := range []struct {
		sampled, kernel int64
		want            string
	}{
		{33 * MiB, 68 * MiB, "68MiB (kernel; sampled 33MiB)"},
		{33 * MiB, 0, "33MiB (sampled)"},
		{68 * MiB, 68 * MiB, "68MiB"},
		{70 * MiB, 68 * MiB, "70MiB"},
		{0, 68 * MiB, "68MiB"},
	} {
		if got := PeakLabel(c.sampled, c.kernel, f); got != c.want {
			t.Errorf("PeakLabel(%d, %d) = %q, want %q", c.sampled, c.kernel, got, c.want)
		}
	}
}

// doctor said OK at a load of 17 on 2 CPUs; a load above the CPUs warns.
func TestLoadedHost(t *testing.T) {
	for _, c := range []struct {
		load1, load5 float64
		cpus         int
		want         bool
	}{{17, 12, 2, true}, {0.5, 2.5, 2, true}, {1.9, 1.2, 2, false}, {3, 3, 0, false}} {
		got, text := LoadedHost(c.load1, c.load5, c.cpus)
		if got != c.want || !strings.Contains(text, "load average") {
			t.Errorf("LoadedHost(%v, %v, %d) = %v %q, want %v", c.load1, c.load5, c.cpus, got, text, c.want)
		}
	}
}

// A wide cell interval says how many repeats would narrow it: 0/3 [0–56%]
// needs about ten, 2/4 about forty, a cell already narrow none.
func TestRepeatsToNarrow(t *testing.T) {
	for _, tc := range []struct{ k, n, lo, hi int }{
		{0, 3, 9, 12},
		{3, 3, 9, 12},
		{2, 4, 38, 45},
		{0, 0, 0, 0},
		{20, 40, 0, 0},
		{10, 20, 38, 45},
		{0, 50, 0, 0},
	} {
		got := RepeatsToNarrow(tc.k, tc.n, WideInterval)
		if got < tc.lo || got > tc.hi {
			t.Errorf("%d/%d: %d repeats, want %d–%d", tc.k, tc.n, got, tc.lo, tc.hi)
		}
		if got > 0 {
			if iv := Wilson(int(math.Round(float64(tc.k)/float64(tc.n)*float64(got))), got); iv.Hi-iv.Lo > WideInterval {
				t.Errorf("%d/%d: at %d repeats still %.2f wide", tc.k, tc.n, got, iv.Hi-iv.Lo)
			}
		}
	}
}

// Identical rates per task are no difference: p 1 and an interval about 0,
// whatever the cells' sizes. compare printed "0pp [-62, +29] p by task
// 0.470" for A at 0/2 and B at 0/10 (Agresti–Caffo's adjusted centre, 1/4
// against 1/12, is not the observed 0), and the console "0pp [-100, +100]"
// for two tasks at 3/3 at both ratios (t with 1 degree of freedom on the
// binomial floor: q = 12.7).
func TestIdenticalRatesAreNoDifference(t *testing.T) {
	for _, tt := range []struct {
		name        string
		base, other []Count
	}{
		{"0/2 vs 0/10", []Count{{0, 2}}, []Count{{0, 10}}},
		{"3/3 vs 3/3", []Count{{3, 3}}, []Count{{3, 3}}},
		{"6/6 over two tasks", []Count{{3, 3}, {3, 3}}, []Count{{3, 3}, {3, 3}}},
		{"0% over two tasks, unequal", []Count{{0, 2}, {0, 1}}, []Count{{0, 5}, {0, 5}}},
		{"1/2 vs 2/4", []Count{{1, 2}}, []Count{{2, 4}}},
	} {
		p := PairedDiff(tt.base, tt.other)
		if p.Diff != 0 || p.P != 1 || !p.CI.Contains(0) {
			t.Errorf("%s: diff %v p %v CI %v, want 0, 1 and an interval about 0", tt.name, p.Diff, p.P, p.CI)
		}
		if p.CI.Lo <= -1 && p.CI.Hi >= 1 {
			t.Errorf("%s: CI %v spans ±100pp though nothing varies", tt.name, p.CI)
		}
	}
	one := Ratio{K: 1}
	mk := func(n int) *Matrix {
		var rs []TrialResult
		for i := 0; i < n; i++ {
			rs = append(rs, TrialResult{Trial: Trial{Task: "t", Agent: "a", Ratio: one, Repeat: i + 1}, Outcome: Failed})
		}
		return NewMatrix([]Ratio{one}, rs)
	}
	for _, c := range CompareExperiments(mk(2), mk(10), DefaultNoisePP) {
		if c.Metric == Success && (c.P != 1 || !c.Noise) {
			t.Errorf("compare, both at 0%%: p %v noise %v, want p 1, noise", c.P, c.Noise)
		}
	}
}

// A difference whose whole interval lies within the threshold is noise;
// one whose interval holds 0 and differences past it is unsure (0/2
// against 2/2, and 0pp [-65, +65], read "noise" to new users); one whose
// interval excludes 0, at least the threshold, is real.
func TestVerdictSaysUnsureForTooFewRuns(t *testing.T) {
	for _, c := range []struct {
		diff float64
		ci   Interval
		want string
	}{
		{0.4, Interval{0.1, 0.7}, "real"},
		{0.01, Interval{-0.01, 0.029}, "noise"},
		{-0.02, Interval{-0.029, 0}, "noise"},
		{0.01, Interval{0.005, 0.015}, "noise"}, // excludes 0, under the threshold
		{1, Interval{-0.2, 1}, "unsure"},
		{-0.39, Interval{-0.8, 0.1}, "unsure"},
		{0, Interval{-0.65, 0.65}, "unsure"},     // the fourth new user's
		{0.02, Interval{0.005, 0.035}, "unsure"}, // could be past the threshold
	} {
		if got := Verdict(c.diff, c.ci, 0.03); got != c.want {
			t.Errorf("Verdict(%g, %v) = %q, want %q", c.diff, c.ci, got, c.want)
		}
	}
}
