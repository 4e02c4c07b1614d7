package model

import (
	"math"
	"sort"
	"strings"
	"testing"
)

func TestCalibrate(t *testing.T) {
	spec := 128 * MiB
	pol := func(r Ratio) ResourcePolicy { return NewPolicy(Resources{CPUs: 1, MemoryBytes: spec}, r, 2) }
	var trials []TrialResult
	add := func(task string, r Ratio, rep int, peak int64, killed bool) {
		tr := TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: r, Repeat: rep, Policy: pol(r)}, PeakWorkingSetBytes: peak, Outcome: Passed}
		if killed {
			tr.Outcome = OOMKilled
			tr.OOMs = []OOMEvent{{Step: "install"}}
		}
		trials = append(trials, tr)
	}
	// heavy: killed at 1x every time; uncapped shows needs of 150–180 MiB.
	for rep, need := range []int64{150, 160, 170, 180} {
		add("heavy", Ratio{K: 1}, rep+1, 128*MiB, true)
		add("heavy", Uncapped, rep+1, need*MiB, false)
	}
	// steady: 50 MiB at every ratio.
	for rep := 1; rep <= 4; rep++ {
		add("steady", Ratio{K: 1}, rep, 50*MiB, false)
		add("steady", Uncapped, rep, 52*MiB, false)
	}
	// unmeasured: killed everywhere it ran; its uncapped run was
	// cancelled, which is no evidence.
	add("unmeasured", Ratio{K: 1}, 1, 128*MiB, true)
	add("unmeasured", Ratio{K: 3}, 1, 384*MiB, true)
	trials = append(trials, TrialResult{Trial: Trial{Task: "unmeasured", Agent: "a", Ratio: Uncapped, Repeat: 1, Policy: pol(Uncapped)}, Outcome: Cancelled})

	// kernel: a spike between samples only the kernel's peak saw.
	add("kernel", Uncapped, 1, 100*MiB, false)
	trials[len(trials)-1].KernelPeakBytes = 140 * MiB
	seeded := map[string]bool{"heavy": true, "steady": true, "unmeasured": true, "kernel": true}
	cs := Calibrate(trials, map[string]int64{"heavy": spec, "steady": spec, "unmeasured": spec, "kernel": spec}, seeded, 0.01, 0.10)
	by := map[string]Calibration{}
	for _, c := range cs {
		by[c.Task] = c
	}
	h := by["heavy"]
	if h.Repeats != RepeatsReplayed || h.Agent != "a" {
		t.Errorf("heavy is seeded: its repeats replay (%q), per task · agent (%q)", h.Repeats, h.Agent)
	}
	// 99th percentile of {150..180} is 180; +10% = 198 MiB → 200 MiB.
	if h.Verdict != "raise" || h.LimitBytes != 200*MiB || h.GuaranteeBytes != 160*MiB || len(h.NeedBytes) != 4 {
		t.Errorf("heavy: %+v", h)
	}
	// The limit is stated against the spec the task ran with (200/128),
	// not against the new guarantee (200/160 = 1.25x read as the opposite).
	if r := h.LimitRatio(); r != 200.0/128 {
		t.Errorf("heavy limit ratio %v, want %v", r, 200.0/128)
	}
	if len(h.Kills) != 2 || h.Kills[0].Killed != 4 || h.Kills[1].Killed != 0 {
		t.Errorf("heavy kills %+v", h.Kills)
	}
	// steady needs 52 MiB of its 128: lowered to a 56 MiB guarantee and
	// a 64 MiB limit (52 × 1.1 rounded up to 8 MiB).
	if s := by["steady"]; s.Verdict != "lower" || s.LimitBytes != 64*MiB || s.GuaranteeBytes != 56*MiB {
		t.Errorf("steady must be lowered: %+v", s)
	}
	// Four runs under the limit say little: the kill rate could be up to
	// Wilson's 49%, and 1% takes 299 runs none of which is killed.
	if h.Exceeding != 0 || h.KillRateCI.Hi < 0.48 || h.KillRateCI.Hi > 0.5 || h.RunsForTarget != 299 {
		t.Errorf("heavy uncertainty: %d exceeding, %+v, %d runs", h.Exceeding, h.KillRateCI, h.RunsForTarget)
	}
	if k := by["kernel"]; k.NeedBytes[0] != 140*MiB || k.Verdict != "raise" {
		t.Errorf("the kernel's peak (140 MiB) must count where the samples (100 MiB) missed it: %+v", k)
	}
	if u := by["unmeasured"]; u.Verdict != "unknown" || u.Censored != 1 || u.CensoredAboveBytes != 384*MiB || u.Cancelled != 1 || len(u.Kills) != 2 {
		t.Errorf("unmeasured: %+v", u)
	}
}

// A task that draws its size each run (no seed): every trial is its own
// draw, and a killed one says only that its need passed its limit. Seen
// before: calibrate took each repeat's maximum over the ratios as if the
// repeats replayed, and the median came out 371–406 MiB against a true
// 313 MiB over 140 runs.
func TestCalibrateDrawnTaskIsNotPairedAcrossRatios(t *testing.T) {
	spec := 320 * MiB
	pol := func(r Ratio) ResourcePolicy { return NewPolicy(Resources{CPUs: 1, MemoryBytes: spec}, r, 2) }
	var trials []TrialResult
	// Needs spread evenly over 160..460 MiB, drawn afresh by every trial:
	// repeat r at 1x, 1.5x and uncapped are three different draws.
	needs := func(i int) int64 { return int64(160+(i*37)%301) * MiB }
	i := 0
	for rep := 1; rep <= 40; rep++ {
		for _, r := range []Ratio{{K: 1}, {K: 1.5}, Uncapped} {
			n := needs(i)
			i++
			tr := TrialResult{Trial: Trial{Task: "numpy", Agent: "a", Ratio: r, Repeat: rep, Policy: pol(r)}, PeakWorkingSetBytes: n, Outcome: Passed}
			if l := tr.Policy.HardLimitBytes; l > 0 && n > l {
				tr.Outcome, tr.Cause, tr.PeakWorkingSetBytes = OOMKilled, CauseOwnLimit, l
				tr.OOMs = []OOMEvent{{Step: "solve"}}
			}
			trials = append(trials, tr)
		}
	}
	var all []int64
	for j := 0; j < i; j++ {
		all = append(all, needs(j))
	}
	sort.Slice(all, func(a, b int) bool { return all[a] < all[b] })
	trueMedian := all[len(all)/2]
	c := Calibrate(trials, map[string]int64{"numpy": spec}, map[string]bool{}, 0.01, 0.10)[0]
	if c.Repeats != RepeatsDrawn || c.Runs() != 120 {
		t.Fatalf("repeats %q over %d runs, want drawn over 120 (one per trial)", c.Repeats, c.Runs())
	}
	if d := float64(c.MedianBytes-trueMedian) / float64(trueMedian); math.Abs(d) > 0.08 {
		t.Errorf("median need %s, the draws' median %s: off by %.0f%%", FormatBytes(c.MedianBytes), FormatBytes(trueMedian), 100*d)
	}
	if c.QuantileBytes < 440*MiB || c.Verdict != "raise" || c.LimitBytes < 480*MiB {
		t.Errorf("the 99th percentile %s, limit %s (%s): the draws reach 460 MiB", FormatBytes(c.QuantileBytes), FormatBytes(c.LimitBytes), c.Verdict)
	}
	if !c.TooFew() || c.RunsForTarget != 299 {
		t.Errorf("120 runs cannot show a 1%% kill rate: too few %v, %d runs", c.TooFew(), c.RunsForTarget)
	}
	// Paired as replays, the same trials inflate the median.
	paired := Calibrate(trials, map[string]int64{"numpy": spec}, map[string]bool{"numpy": true}, 0.01, 0.10)[0]
	if paired.MedianBytes <= c.MedianBytes {
		t.Errorf("pairing independent draws should inflate the median (%s vs %s): the test does not show the defect", FormatBytes(paired.MedianBytes), FormatBytes(c.MedianBytes))
	}
}

// Five runs place a median only roughly: calibrate says so, and how many
// would do.
func TestCalibrateSaysWhenRunsAreTooFewForTheMedian(t *testing.T) {
	spec := 320 * MiB
	var trials []TrialResult
	for i, mb := range []int64{250, 300, 330, 400, 470} {
		trials = append(trials, TrialResult{Trial: Trial{Task: "x", Agent: "a", Ratio: Uncapped, Repeat: i + 1, Policy: NewPolicy(Resources{MemoryBytes: spec}, Uncapped, 2)}, PeakWorkingSetBytes: mb * MiB, Outcome: Passed})
	}
	c := Calibrate(trials, map[string]int64{"x": spec}, nil, 0.01, 0.10)[0]
	if len(c.MedianCI) != 2 || c.MedianCI[0] != 250*MiB || c.MedianCI[1] != 470*MiB || c.RunsForMedian <= 5 {
		t.Errorf("median CI %v, runs for the median %d: five runs give the smallest to the largest", c.MedianCI, c.RunsForMedian)
	}
}

// A target of NaN has no number of runs (it is neither <= 0 nor >= 1,
// and Log(1-NaN) made an int of NaN); 0 says so, as for 0 and 1.
func TestRunsForKillRateOutOfRange(t *testing.T) {
	for _, v := range []float64{0, 1, -0.5, math.NaN()} {
		if n := RunsForKillRate(v); n != 0 {
			t.Errorf("RunsForKillRate(%v) = %d, want 0", v, n)
		}
	}
	if n := RunsForKillRate(0.01); n != 299 {
		t.Errorf("RunsForKillRate(0.01) = %d, want 299", n)
	}
}

// A lower limit is not recommended for a file on fewer runs than would
// show the target fail rate there: 3 runs wrote memory_mb 64 → 8 beside
// the table's own "about 299 runs would" (the twenty-sixth attacker's 5).
// A raise on few runs is.
func TestTaskRecommendationLowersOnlyOnEnoughRuns(t *testing.T) {
	c := Calibration{Task: "t", Agent: "oracle", SpecBytes: 64 * MiB, Repeats: RepeatsDrawn, NeedBytes: []int64{6 * MiB, 6 * MiB, 7 * MiB},
		LimitBytes: 8 * MiB, GuaranteeBytes: 7 * MiB, TargetKillRate: 0.01, RunsForTarget: 299, KillRateCI: Interval{Hi: 0.561}, Verdict: "lower"}
	if _, why := TaskRecommendation([]Calibration{c}, "t"); !strings.Contains(why, "not lowered on 3 runs: about 299 runs") {
		t.Errorf("a lower limit on 3 runs: %q", why)
	}
	c.LimitBytes, c.Verdict = 128*MiB, "raise"
	if rec, why := TaskRecommendation([]Calibration{c}, "t"); why != "" || rec.Verdict != "raise" {
		t.Errorf("a raise on 3 runs: %q %q", rec.Verdict, why)
	}
	c.LimitBytes, c.NeedBytes, c.RunsForTarget = 8*MiB, make([]int64, 300), 299
	if rec, why := TaskRecommendation([]Calibration{c}, "t"); why != "" || rec.Verdict != "lower" {
		t.Errorf("a lower limit on 300 runs: %q %q", rec.Verdict, why)
	}
}

// With nothing measured and nothing censored (every run an infra error)
// the reason has no empty parentheses: "no run was measured to its end
// ()" (the twenty-ninth attacker's).
func TestUnknownWhyWithNothingCensored(t *testing.T) {
	got := Calibration{RunsForTarget: 299, TargetKillRate: 0.01}.UnknownWhy()
	if strings.Contains(got, "()") || !strings.HasPrefix(got, "no run was measured to its end; sweep with uncapped") {
		t.Errorf("%q", got)
	}
}
