package model

import (
	"math"
	"math/rand/v2"
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

// R: fisher.test(matrix(c(3,1,1,3),2)) p = 0.4857 (the tea-tasting lady);
// fisher.test(matrix(c(1,11,9,3),2)) p = 0.002759.
func TestFisherExactAgainstPublishedValues(t *testing.T) {
	near(t, "tea", FisherExact(3, 1, 1, 3), 0.485714, 1e-6)
	near(t, "dieting", FisherExact(1, 9, 11, 3), 0.002759, 1e-6)
	near(t, "all or nothing", FisherExact(0, 5, 5, 0), 2.0/252, 1e-9)
	near(t, "identical", FisherExact(3, 0, 3, 0), 1, 1e-12)
	near(t, "empty", FisherExact(0, 0, 0, 0), 1, 0)
	// Symmetric in the table's orientation.
	near(t, "transposed", FisherExact(1, 11, 9, 3), FisherExact(1, 9, 11, 3), 1e-12)
}

func TestClusteredMeanByHand(t *testing.T) {
	// p = 5/9; residuals 2−5/3, 0−5/3, 3−5/3; SE = √(Σr²)/9.
	e := ClusteredMean([]Count{{2, 3}, {0, 3}, {3, 3}, {0, 0}})
	near(t, "mean", e.Mean, 5.0/9, 1e-12)
	r := []float64{2 - 5.0/3, -5.0 / 3, 3 - 5.0/3}
	near(t, "se", e.SE, math.Sqrt(r[0]*r[0]+r[1]*r[1]+r[2]*r[2])/9, 1e-12)
	if e.Tasks != 3 || e.Trials != 9 {
		t.Errorf("tasks %d trials %d (the empty cell must not count)", e.Tasks, e.Trials)
	}
	// All pass / all fail: no spread, a degenerate but honest interval.
	if e := ClusteredMean([]Count{{3, 3}, {3, 3}}); e.Mean != 1 || e.SE != 0 {
		t.Errorf("all pass: %+v", e)
	}
	if e := ClusteredMean(nil); e.CI != (Interval{0, 1}) {
		t.Errorf("nothing: %+v", e)
	}
	// With one trial per task the clustered SE is the ordinary one,
	// √(p(1−p)/n).
	var cs []Count
	for i := 0; i < 40; i++ {
		cs = append(cs, Count{K: i % 4 / 3, N: 1})
	}
	e = ClusteredMean(cs)
	near(t, "iid se", e.SE, math.Sqrt(e.Mean*(1-e.Mean)/40), 1e-12)
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
	// One task: Fisher's exact test.
	one := PairedDiff([]Count{{0, 5}}, []Count{{5, 5}})
	near(t, "one task p", one.P, 2.0/252, 1e-9)
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
	if !steady.Noise || steady.FisherP < 0.999 {
		t.Errorf("the steady task's difference must be noise: %+v", steady)
	}
	if a.Power.Tasks != 6 || a.Power.Repeats != 5 || a.Power.MinDetectable <= 0 {
		t.Errorf("power %+v", a.Power)
	}
	if len(a.ByRatio) != 3 || a.ByRatio[0].Infra.Mean != 20.0/30 {
		t.Errorf("by ratio %+v", a.ByRatio)
	}
}
