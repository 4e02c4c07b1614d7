package model

import (
	"testing"
	"time"
)

func TestVariances(t *testing.T) {
	t0 := time.Unix(0, 0)
	tr := func(r Ratio, o Outcome, peak int64, secs int, killed bool) TrialResult {
		x := TrialResult{Trial: Trial{Task: "urandom", Agent: "oracle", Ratio: r}, Outcome: o, PeakWorkingSetBytes: peak, Start: t0, End: t0.Add(time.Duration(secs) * time.Second)}
		if killed {
			x.OOMs = []OOMEvent{{}}
		}
		return x
	}
	vs := Variances([]TrialResult{
		tr(Uncapped, Passed, 200*MiB, 10, false),
		tr(Uncapped, Passed, 240*MiB, 14, false),
		tr(Uncapped, Failed, 220*MiB, 12, false),
		tr(Ratio{K: 1}, OOMKilled, 200*MiB, 5, true),
		tr(Ratio{K: 1}, Passed, 190*MiB, 9, false),
		tr(Ratio{K: 1}, InfraError, 0, 1, false), // no evidence
		{Trial: Trial{Task: "capped-only", Agent: "a", Ratio: Ratio{K: 1}}, Outcome: Passed},
	})
	if len(vs) != 1 {
		t.Fatalf("%+v: a row with no uncapped run has nothing to measure", vs)
	}
	v := vs[0]
	if v.Runs != 3 || v.PeakMinBytes != 200*MiB || v.PeakMedianBytes != 220*MiB || v.PeakMaxBytes != 240*MiB || v.UncappedFailed != 1 || v.Killed != 1 || v.Capped != 2 {
		t.Errorf("%+v", v)
	}
	if v.DurationMin != 10*time.Second || v.DurationMax != 14*time.Second || v.PeakSpread() < 0.18 || v.PeakSpread() > 0.19 {
		t.Errorf("durations %v–%v spread %v", v.DurationMin, v.DurationMax, v.PeakSpread())
	}
	for img, want := range map[string]bool{"builtin": true, "headroom-workload:2b6550d69d25": true, "python:3.12": false, "headroom-workloads:x": false} {
		if SeededImage(img) != want {
			t.Errorf("SeededImage(%q) != %v", img, want)
		}
	}
}

// A run cut off by its time limit reached its peak, not its need: the
// variance table's minimum was such a peak (a run stopped early), its
// maximum too low. Its peaks are of runs measured to their end, and the
// cut-off ones are counted beside them.
func TestVarianceLeavesCutOffRunsOutOfThePeaks(t *testing.T) {
	var trials []TrialResult
	for i, r := range []struct {
		mib int64
		o   Outcome
	}{{200, Passed}, {300, Passed}, {250, Failed}, {90, Timeout}, {410, PassedAfterTimeout}} {
		trials = append(trials, TrialResult{Trial: Trial{Task: "numpy", Agent: "oracle", Ratio: Uncapped, Repeat: i + 1}, Outcome: r.o, PeakWorkingSetBytes: r.mib * MiB})
	}
	v := Variances(trials)[0]
	if v.Runs != 5 || v.CutOff != 2 || v.PeakMinBytes != 200*MiB || v.PeakMaxBytes != 300*MiB || v.CutOffPeakMaxBytes != 410*MiB {
		t.Errorf("%+v: want 5 runs, peaks 200–300MiB of the 3 measured, 2 cut off up to 410MiB", v)
	}
	if got, want := v.PeaksText(), "200MiB–300MiB (+2 cut off by time, ≥ 410MiB)"; got != want {
		t.Errorf("peaks %q, want %q", got, want)
	}
}
