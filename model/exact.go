package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// FisherExact is the two-sided p-value of Fisher's exact test that two
// pools of trials, k1 of n1 and k2 of n2, share one rate: the chance,
// with the margins fixed, of a table no likelier than the one seen. It
// answers "did this suite's score change?" for the trials as run, where
// the paired test by task asks whether tasks like these would.
func FisherExact(k1, n1, k2, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	k := k1 + k2
	n := n1 + n2
	lchoose := func(a, b int) float64 {
		x, _ := math.Lgamma(float64(a + 1))
		y, _ := math.Lgamma(float64(b + 1))
		z, _ := math.Lgamma(float64(a - b + 1))
		return x - y - z
	}
	logP := func(x int) float64 { return lchoose(n1, x) + lchoose(n2, k-x) - lchoose(n, k) }
	observed := logP(k1)
	p := 0.0
	for x := max(0, k-n2); x <= min(k, n1); x++ {
		// A relative tolerance keeps tables as likely as the observed one
		// from being lost to rounding.
		if lp := logP(x); lp <= observed+1e-7 {
			p += math.Exp(lp)
		}
	}
	return math.Min(p, 1)
}

// PooledExact pools each side's counts, tasks ignored, and tests the two
// pools with FisherExact: "did this suite's score change?", beside the
// paired test's "would tasks like these change?".
func PooledExact(a, b []Count) float64 {
	var ka, na, kb, nb int
	for _, c := range a {
		ka, na = ka+c.K, na+c.N
	}
	for _, c := range b {
		kb, nb = kb+c.K, nb+c.N
	}
	return FisherExact(ka, na, kb, nb)
}

// PText prints a p-value for people: three decimals, "<0.001" below.
func PText(p float64) string {
	switch {
	case math.IsNaN(p):
		return "-"
	case p < 0.001:
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// signedPoints is x in whole percentage points with its sign, and zero
// unsigned: a −0.3pp end of an interval printed "-0".
func signedPoints(x float64) string {
	r := math.Round(100 * x)
	if r == 0 {
		return "0"
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

// PPText is a difference in percentage points: "+17pp", "-4pp", "0pp".
func PPText(x float64) string {
	s := signedPoints(x)
	if s != "0" && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "pp"
}

// PPInterval is an interval of differences in points: "[-25, +50]",
// "[0, +80]" (never "-0").
func PPInterval(i Interval) string {
	return "[" + strings.TrimSuffix(PPText(i.Lo), "pp") + ", " + strings.TrimSuffix(PPText(i.Hi), "pp") + "]"
}

// RateText is a rate with its 95% interval as its two ends, "83%
// [44–97]": the interval is asymmetric near 0 and 1 (Wilson), which a
// symmetric "100% ±39" misstated.
func (e Estimate) RateText() string {
	return fmt.Sprintf("%.0f%% [%.0f–%.0f]", 100*e.Mean, 100*e.CI.Lo, 100*e.CI.Hi)
}

// FewRowsNote says why a ratio's rate interval spans most of 0–100 where
// the sweep has only two task · agent rows: the rate is clustered by row,
// with Student's t on 1 degree of freedom (a quantile of 12.7), so two
// rows that differ give an interval repeats cannot narrow. "" where no
// rate's interval is that wide with two rows. The console's showcase (one
// task, two agents) read "50% [0–100]" with nothing to say why (the
// fifth new user's).
func FewRowsNote(rs []RatioStats) string {
	for _, r := range rs {
		for _, e := range []Estimate{r.Success, r.Infra} {
			if e.Tasks == 2 && e.CI.Hi-e.CI.Lo >= 0.8 {
				return "Two rows of task and agent: a rate's interval is clustered by row (Student's t with 1 degree of freedom), so two rows that differ span most of 0–100 whatever the repeats; a third row narrows it more than repeats do, and each cell's own interval holds meanwhile."
			}
		}
	}
	return ""
}

// ExactMDE is the least difference (in steps of a point) that Fisher's
// exact test, at α = 0.05, detects with 80% power between a cell of nA
// trials and one of nB, in the case most in its favour: every trial of
// the first passing, each of the second passing with 1 − d. One row's p
// is at least that test's (its trials are the pooled ones), so its
// detectable difference is at least this, whatever the normal
// approximation of its interval says: 2 repeats a cell read "detect
// 94pp" beside +100pp "unsure, p 0.333" (2/2 against 0/2 is the least p
// 2 against 2 can give: no difference is detectable), and 4 read "70pp"
// where 4/4 against 0/4 is the only table that rejects (a new user's).
// Above 1 (NoneDetectable) where no difference is detectable.
func ExactMDE(nA, nB int) float64 {
	if nA < 1 || nB < 1 {
		return NoneDetectable
	}
	// The second cell's pass counts that reject against nA/nA: the test's
	// p grows with the count, so they are 0..kMax.
	kMax := -1
	for k := 0; k < nB && FisherExact(nA, nA, k, nB) < 0.05; k++ {
		kMax = k
	}
	if kMax < 0 {
		return NoneDetectable
	}
	for pts := 1; pts <= 100; pts++ {
		d := float64(pts) / 100
		if b := (distuv.Binomial{N: float64(nB), P: 1 - d}); b.CDF(float64(kMax)) >= 0.8 {
			return d
		}
	}
	return NoneDetectable
}

// NoneDetectable is a minimum detectable difference no difference of
// rates reaches (Detectable is false for it).
const NoneDetectable = 2.0

// ExactFloor is the least p Fisher's exact test gives a cell of nA
// trials against one of nB: all of one passing, none of the other.
func ExactFloor(nA, nB int) float64 {
	return FisherExact(nA, nA, 0, nB)
}
