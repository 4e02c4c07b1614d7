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
