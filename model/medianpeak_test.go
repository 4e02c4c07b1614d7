package model

import (
	"math"
	"testing"
	"time"
)

// Resources per cell's median peak of an even count is the lower middle,
// as calibrate's need p50 reads it (a new user saw 170.2 MiB beside
// calibrate's 160.1 MiB for the same two runs).
func TestMedianPeakIsCalibratesMedian(t *testing.T) {
	var trials []TrialResult
	for _, mib := range []int64{170, 160} {
		trials = append(trials, TrialResult{Trial: Trial{Task: "x", Agent: "a", Ratio: Uncapped}, Outcome: Passed, PeakWorkingSetBytes: mib * MiB})
	}
	cells, _ := ResourceUse(trials, 0)
	if got := cells[RowKey{"x", "a"}][Uncapped].MedianPeakBytes; got != 160*MiB {
		t.Errorf("median of 160 and 170 MiB: %s, want 160MiB", FormatBytes(got))
	}
}

// A cell's cores never pass the trials' limit (the host's CPUs
// uncapped): steps a task's own 10 ms limit cut off in microseconds, in
// a trial that used 0.1 s of CPU outside them, read 9.8 cores on 2 CPUs.
// A trial whose steps were long enough reads as before.
func TestCellCoresNeverPassTheLimit(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	trial := func(r Ratio, limit float64, steps time.Duration, cpu time.Duration) TrialResult {
		return TrialResult{Trial: Trial{Task: "x", Agent: "a", Ratio: r, Policy: ResourcePolicy{LimitCPUs: limit}}, Outcome: Failed,
			CPU:   &CPUUse{UsageNanos: int64(cpu)},
			Steps: []StepResult{{Name: "s", Start: t0, End: t0.Add(steps)}}}
	}
	cells, _ := ResourceUse([]TrialResult{
		trial(Ratio{K: 1}, 1, 10*time.Microsecond, 100*time.Millisecond),
		trial(Uncapped, 0, 10*time.Microsecond, 100*time.Millisecond),
		trial(Ratio{K: 3}, 3, time.Second, 500*time.Millisecond),
	}, 2)
	for r, want := range map[Ratio]float64{{K: 1}: 1, Uncapped: 2, {K: 3}: 0.5} {
		if got := cells[RowKey{"x", "a"}][r].Cores(); math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %.2f cores, want %.2f", r, got, want)
		}
	}
}
