package model

import (
	"strings"
	"testing"
	"time"
)

// Two identical sweeps, one at load 35 and one at 18: the difference is a
// setup difference that can explain a change (compare called +80 pp at
// 1.5x "real" and named only the seed).
func TestHostLoadsDiffer(t *testing.T) {
	run := func(load float64, wait time.Duration) []TrialResult {
		var out []TrialResult
		for range 4 {
			out = append(out, TrialResult{Outcome: Passed, HostAtStart: HostLoad{Load1: load}, HostAtEnd: HostLoad{Load1: load + 2},
				Noise: &HostNoise{CPUWait: Duration(wait), CPUWaitKnown: true, StepTime: Duration(10 * time.Second)}})
		}
		return append(out, TrialResult{Outcome: Cancelled, HostAtStart: HostLoad{Load1: 100}})
	}
	a, b := SummarizeHostLoad(run(34, 6*time.Second)), SummarizeHostLoad(run(17, time.Second))
	if a.Trials != 4 || a.Load1 != 35 || a.WaitShare != 0.6 || b.Load1 != 18 {
		t.Errorf("summaries %+v %+v", a, b)
	}
	why, ok := HostLoadsDiffer(a, b)
	if !ok || !strings.Contains(why, "A load 35.0, CPU wait 60% of step time · B load 18.0, CPU wait 10% of step time") {
		t.Errorf("load 35 against 18: %v %q", ok, why)
	}
	if _, ok := HostLoadsDiffer(a, SummarizeHostLoad(run(31, 5*time.Second))); ok {
		t.Error("load 35 against 33 is the same host's load")
	}
	if _, ok := HostLoadsDiffer(a, SummarizeHostLoad(nil)); ok {
		t.Error("an unknown load differs from nothing")
	}
}
