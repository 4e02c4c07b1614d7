package report

import (
	"strings"
	"testing"

	"github.com/headroom-eval/headroom/model"
)

func TestPercentKeepsPrecision(t *testing.T) {
	for in, want := range map[float64]string{0.001: "0.1%", 0.01: "1%", 0.1: "10%", 0.125: "12.5%", 0: "0%"} {
		if got := percent(in); got != want {
			t.Errorf("percent(%v) = %q, want %q", in, got, want)
		}
	}
}

// The CPU table shows the uncapped column only where uncapped steps were
// read (it showed "uncapped busiest step" and "-" with no uncapped run).
func TestCPUTableHidesAnEmptyUncappedColumn(t *testing.T) {
	var b strings.Builder
	WriteCPUCalibration(&b, []model.CPUCalibration{{Task: "t", SpecCPUs: 1, Verdict: "keep", CPUs: 1, Read: 3,
		Throttled: []model.RatioThrottle{{Ratio: model.Ratio{K: 1}, LimitCPUs: 1, Trials: 3, Passed: 3}}}})
	if strings.Contains(b.String(), "uncapped busiest") {
		t.Errorf("uncapped column with no uncapped run:\n%s", b.String())
	}
	b.Reset()
	WriteCPUCalibration(&b, []model.CPUCalibration{{Task: "t", SpecCPUs: 1, Verdict: "keep", CPUs: 1, Read: 3, NeedCores: []float64{0.5}}})
	if !strings.Contains(b.String(), "uncapped busiest step") || !strings.Contains(b.String(), "0.50–0.50 cores") {
		t.Errorf("uncapped column missing:\n%s", b.String())
	}
}

// Every figure that stands on censored runs says how many: the table's
// runs and median (the comment --write leaves: taskfile's
// TestMedianNoteSaysWhatWasCensored). Seen: a median of 212MiB written
// into the file from runs cut off by their time limit.
func TestCalibrationSaysWhatWasCensored(t *testing.T) {
	pol := model.NewPolicy(model.Resources{CPUs: 1, MemoryBytes: 320 * model.MiB}, model.Uncapped, 2)
	var trials []model.TrialResult
	for i, mib := range []int64{200, 210, 220, 230, 240, 250, 260, 270, 280, 290, 300, 250} {
		tr := model.TrialResult{Trial: model.Trial{Task: "numpy", Agent: "oracle", Ratio: model.Uncapped, Repeat: i + 1, Policy: pol}, Outcome: model.Passed, PeakWorkingSetBytes: mib * model.MiB}
		if i == 11 {
			tr.Outcome = model.Timeout
		}
		trials = append(trials, tr)
	}
	cals := model.Calibrate(trials, map[string]int64{"numpy": 320 * model.MiB}, nil, 0.1, 0.1)
	var b strings.Builder
	WriteCalibration(&b, "E", cals, 0.1, 0.1)
	for _, want := range []string{"12 (1 censored: 1 cut off by their time limit (need ≥ the peak reached, up to 250MiB))", "[1 of 12 censored]"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, b.String())
		}
	}
}
