package model

import (
	"strings"
	"testing"
)

// The need reads the kernel's peak without reclaimable cache where the
// record has it (the OOM killer reclaims cache before it kills), and an
// older record's mark with cache where it has only that.
func TestNeedReadsKernelPeakWithoutCache(t *testing.T) {
	for _, c := range []struct {
		name                        string
		sampled, withCache, noCache int64
		need                        int64
		label                       string
	}{
		// Docker on fuse-overlayfs: ~35 MiB of the image's page cache in
		// the mark, none of it need.
		{"cache in the mark", 100 * MiB, 135 * MiB, 101 * MiB, 101 * MiB, "101MiB (kernel less cache; sampled 100MiB)"},
		{"a spike between samples", 100 * MiB, 180 * MiB, 150 * MiB, 150 * MiB, "150MiB (kernel less cache; sampled 100MiB)"},
		{"samples higher", 100 * MiB, 120 * MiB, 90 * MiB, 100 * MiB, "100MiB"},
		// Records made before the figure without cache was kept.
		{"old record", 100 * MiB, 135 * MiB, 0, 135 * MiB, "135MiB (kernel; sampled 100MiB)"},
		{"old record, no mark", 100 * MiB, 0, 0, 100 * MiB, "100MiB (sampled)"},
	} {
		tr := TrialResult{PeakWorkingSetBytes: c.sampled, KernelPeakBytes: c.withCache, KernelPeakNoCacheBytes: c.noCache}
		st := StepResult{PeakWorkingSetBytes: c.sampled, KernelPeakBytes: c.withCache, KernelPeakNoCacheBytes: c.noCache}
		if got := TrialPeakBytes(tr); got != c.need {
			t.Errorf("%s: TrialPeakBytes %d, want %d", c.name, got, c.need)
		}
		if got := StepPeakBytes(st); got != c.need {
			t.Errorf("%s: StepPeakBytes %d, want %d", c.name, got, c.need)
		}
		if got := TrialPeakLabel(tr, FormatBytes); got != c.label {
			t.Errorf("%s: label %q, want %q", c.name, got, c.label)
		}
	}
}

// An interval's mark less its cache: the end's where the mark is the
// end's usage (it only climbed), else the smaller of the two ends'; never
// below zero, zero without a mark.
func TestKernelPeakNoCache(t *testing.T) {
	for _, c := range []struct{ mark, before, after, usageAfter, want int64 }{
		{200 * MiB, 50 * MiB, 80 * MiB, 0, 150 * MiB},
		{200 * MiB, 80 * MiB, 50 * MiB, 120 * MiB, 150 * MiB},
		// Files written over the interval: the mark is its end.
		{200 * MiB, 50 * MiB, 180 * MiB, 200 * MiB, 20 * MiB},
		{200 * MiB, 50 * MiB, 180 * MiB, 199*MiB + 512<<10, 20 * MiB},
		// A spike inside it: the end's cache may not have been there.
		{260 * MiB, 50 * MiB, 180 * MiB, 200 * MiB, 210 * MiB},
		{200, 300, 300, 0, 0},
		{0, 10, 10, 0, 0},
		{200, -5, 10, 0, 200}, // no negative cache
	} {
		if got := KernelPeakNoCache(c.mark, c.before, c.after, c.usageAfter); got != c.want {
			t.Errorf("KernelPeakNoCache(%d, %d, %d, %d) = %d, want %d", c.mark, c.before, c.after, c.usageAfter, got, c.want)
		}
	}
}

// What-if's kernel basis and Resources per cell read the mark without
// cache: a step whose mark is over the limit only by its cache is not a
// predicted kill; an older record's is.
func TestWhatIfKernelBasisWithoutCache(t *testing.T) {
	src, _ := whatifSource()
	src.Steps[1].PeakWorkingSetBytes, src.Steps[1].KernelPeakBytes = 90*MiB, 90*MiB
	// "test": 110 MiB sampled, 125 MiB by the kernel's mark, of which
	// 12 MiB was inactive file.
	src.Steps[2].KernelPeakNoCacheBytes = 113 * MiB
	if p, _ := Predict(src, nil, Ratio{K: 1.2}); p.Killed {
		t.Errorf("1.2x (120MiB) over a need of 113MiB: %+v, want it to live", p)
	}
	if p, _ := Predict(src, nil, Ratio{K: 1.12}); !p.Killed || p.Basis != "kernel-peak" {
		t.Errorf("1.12x (112MiB) under a need of 113MiB: %+v, want a kernel-peak kill", p)
	}
	src.Steps[2].KernelPeakNoCacheBytes = 0
	if p, _ := Predict(src, nil, Ratio{K: 1.2}); !p.Killed || p.Basis != "kernel-peak" {
		t.Errorf("an old record's mark with cache, 125MiB over 120MiB: %+v, want a kill", p)
	}
	trials := []TrialResult{{Trial: Trial{Task: "x", Agent: "a", Ratio: Uncapped}, Outcome: Passed,
		PeakWorkingSetBytes: 100 * MiB, KernelPeakBytes: 135 * MiB, KernelPeakNoCacheBytes: 101 * MiB}}
	cells, _ := ResourceUse(trials, 0)
	if got := cells[RowKey{"x", "a"}][Uncapped].MedianPeakBytes; got != 101*MiB {
		t.Errorf("Resources per cell: median peak %d, want the need without cache %d", got, 101*MiB)
	}
}

// A driven trial killed past the ratio's limit, inside the container's
// (which holds the step driver's allowance too), says why its usage at
// the kill is above the limit shown; under exec, no such words.
func TestKilledPastTheRatiosLimitSaysTheDriver(t *testing.T) {
	for _, runner := range []string{"driver", "exec"} {
		tr := TrialResult{StepRunner: runner, KernelPeakBytes: 120 * MiB, KernelPeakNoCacheBytes: 118 * MiB,
			OOMs: []OOMEvent{{KernelUsageBytes: 128*MiB + 1200<<10}}}
		tr.Trial.Policy.HardLimitBytes = 128 * MiB
		got := TrialPeakLabel(tr, FormatBytes)
		says := strings.Contains(got, "counts headroom's step driver")
		if says != (runner == "driver") || !strings.HasPrefix(got, "129.2MiB (the kernel's usage at the kill") {
			t.Errorf("%s: %q", runner, got)
		}
	}
}
