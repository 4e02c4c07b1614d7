package model

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// Values summed exactly over the hypergeometric tables (Python fractions).
func TestFisherExact(t *testing.T) {
	tests := []struct {
		k1, n1, k2, n2 int
		want           float64
	}{
		{3, 10, 9, 10, 0.019767},
		{0, 5, 5, 5, 0.0079365},
		{1, 2, 1, 2, 1}, // identical
		{10, 20, 12, 20, 0.75119},
		{0, 30, 0, 30, 1}, // no successes at all
	}
	for _, tt := range tests {
		if got := FisherExact(tt.k1, tt.n1, tt.k2, tt.n2); math.Abs(got-tt.want) > 5e-4*math.Max(tt.want, 1e-3)+1e-5 {
			t.Errorf("FisherExact(%d/%d vs %d/%d) = %.5g, want %.5g", tt.k1, tt.n1, tt.k2, tt.n2, got, tt.want)
		}
	}
	if FisherExact(1, 0, 1, 2) != 1 {
		t.Error("an empty pool is no evidence")
	}
}

// The suite's question and the tasks' differ: five tasks that each drop
// a little, all the same way, give a pooled p far below the paired one
// (the sizing run in issue 16: 1.5e-8 pooled, 0.108 paired).
func TestPooledExactAnswersTheSuitesQuestion(t *testing.T) {
	base := []Count{{30, 30}, {30, 30}, {30, 30}, {30, 30}, {30, 30}}
	other := []Count{{30, 30}, {30, 30}, {10, 30}, {30, 30}, {12, 30}}
	pooled := PooledExact(base, other)
	if pooled != FisherExact(150, 150, 112, 150) {
		t.Errorf("pooled %v is not Fisher over the sums", pooled)
	}
	paired := PairedDiff(base, other).P
	if !(pooled < 1e-6 && paired > 0.05) {
		t.Errorf("pooled p %v, paired p %v: want the suite's change clear and the tasks' not", pooled, paired)
	}
	if PooledExact(nil, other) != 1 {
		t.Error("no trials on one side must give p 1")
	}
	for p, want := range map[float64]string{0.5: "0.500", 0.0004: "<0.001", math.NaN(): "-"} {
		if got := PText(p); got != want {
			t.Errorf("PText(%v) = %q, want %q", p, got, want)
		}
	}
}

// Differences never print "-0", and a rate's interval is its two ends
// (Wilson is asymmetric): "100% ±39" misstated [61–100].
func TestPointsAndRateText(t *testing.T) {
	if got := PPInterval(Interval{Lo: -0.003, Hi: 0.8}); got != "[0, +80]" {
		t.Errorf("PPInterval = %q, want [0, +80]", got)
	}
	if got := PPText(-0.004); got != "0pp" {
		t.Errorf("PPText(-0.4pp) = %q", got)
	}
	if got := PPText(-0.25); got != "-25pp" {
		t.Errorf("PPText(-25pp) = %q", got)
	}
	e := ClusteredMean([]Count{{K: 6, N: 6}})
	if got := e.RateText(); got != "100% [61–100]" {
		t.Errorf("RateText = %q, want 100%% [61–100]", got)
	}
}

// One row's detectable difference is at least what Fisher's exact test
// can detect, which its p is at least: 2 repeats a cell read "detect
// 94pp" beside +100pp "unsure, p 0.333" (a new user's); 2/2 against 0/2
// is the least p 2 against 2 can give.
func TestOneRowDetectsNoLessThanTheExactTest(t *testing.T) {
	for _, c := range []struct {
		n    int
		want float64
	}{{1, NoneDetectable}, {2, NoneDetectable}, {3, NoneDetectable}, {4, 0.95}, {10, 0.59}, {40, 0.2}} {
		if got := ExactMDE(c.n, c.n); got != c.want {
			t.Errorf("%d against %d: exact MDE %v, want %v", c.n, c.n, got, c.want)
		}
	}
	if ExactRepeats() != 4 {
		t.Errorf("ExactRepeats %d, want 4 (4/4 against 0/4: p 0.029)", ExactRepeats())
	}
	m := NewMatrix([]Ratio{{K: 1}, {K: 3}}, nil)
	for rep := 1; rep <= 2; rep++ {
		for _, r := range []Ratio{{K: 1}, {K: 3}} {
			o := Passed
			if r.K == 1 {
				o = OOMKilled
			}
			m.Add(TrialResult{Trial: Trial{ID: fmt.Sprintf("t%v%d", r, rep), Task: "t", Agent: "a", Ratio: r, Repeat: rep}, Outcome: o})
		}
	}
	a := Analyze(m, Ratio{K: 1}, 0.03, 0.03)
	c, ok := a.Comparison(Success, Ratio{K: 3})
	if !ok || Detectable(c.MinDetectable) || c.Label != "unsure" {
		t.Errorf("0/2 against 2/2: %+v, want unsure and nothing detectable", c)
	}
	if got := a.Power.ExactNote(false); got != "even 2/2 against 0/2 has p 0.333 (Fisher's exact, which one row's p is at least); 4 repeats a cell can" {
		t.Errorf("power's note %q", got)
	}
}

// One row whose cells differ in size (an interrupted run): the power
// line condemns the design only if no comparison can reject, and names
// the cells it speaks of (a review's: 4 against 4 was "real", and the
// line said "even 4/4 against 0/4 has p 0.067", 4 against 2's p).
func TestOneRowPowerNoteIsTheDesignsBest(t *testing.T) {
	m := NewMatrix([]Ratio{{K: 1}, {K: 2}, {K: 3}}, nil)
	add := func(r Ratio, n int, o Outcome) {
		for rep := 1; rep <= n; rep++ {
			m.Add(TrialResult{Trial: Trial{ID: fmt.Sprintf("t%v%d", r, rep), Task: "t", Agent: "a", Ratio: r, Repeat: rep}, Outcome: o})
		}
	}
	add(Ratio{K: 1}, 4, OOMKilled)
	add(Ratio{K: 2}, 4, Passed)
	add(Ratio{K: 3}, 2, Passed)
	a := Analyze(m, Ratio{K: 1}, 0.03, 0.03)
	if note := a.Power.ExactNote(false); note != "" {
		t.Errorf("4 against 4 can reject (p 0.029), yet the note %q", note)
	}
	m2 := NewMatrix([]Ratio{{K: 1}, {K: 3}}, nil)
	m = m2
	add(Ratio{K: 1}, 3, OOMKilled)
	add(Ratio{K: 3}, 2, Passed)
	if got := Analyze(m, Ratio{K: 1}, 0.03, 0.03).Power.ExactNote(false); !strings.HasPrefix(got, "even 3/3 against 0/2 has p 0.100") {
		t.Errorf("3 against 2: note %q", got)
	}
}
