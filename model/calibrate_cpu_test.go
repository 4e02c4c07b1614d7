package model

import (
	"testing"
	"time"
)

func TestCalibrateCPU(t *testing.T) {
	t0 := time.Unix(0, 0)
	var trials []TrialResult
	add := func(task string, spec float64, r Ratio, cpu CPUUse, wall time.Duration, o Outcome) {
		tr := TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: r, Policy: NewPolicy(Resources{CPUs: spec, MemoryBytes: 64 * MiB}, r, 4)}, Outcome: o, CPU: &cpu,
			Steps: []StepResult{{Name: "s", Start: t0, End: t0.Add(wall), CPU: &cpu}}}
		trials = append(trials, tr)
	}
	// starved: throttled in 60% of periods at 1x (0.1 CPU), 2% at 3x.
	add("starved", 0.1, Ratio{K: 1}, CPUUse{UsageNanos: 1e8, Periods: 10, ThrottledPeriods: 6}, time.Second, Failed)
	add("starved", 0.1, Ratio{K: 3}, CPUUse{UsageNanos: 1e8, Periods: 50, ThrottledPeriods: 1}, time.Second, Passed)
	add("starved", 0.1, Uncapped, CPUUse{UsageNanos: 4e8}, time.Second, Passed)
	// idle: a whole core spec, unthrottled at 1x, using 0.2 cores free.
	add("idle", 1, Ratio{K: 1}, CPUUse{UsageNanos: 2e8, Periods: 10}, time.Second, Passed)
	add("idle", 1, Uncapped, CPUUse{UsageNanos: 2e8}, time.Second, Passed)
	// hungry: throttled everywhere it was limited; uncapped used 1.5 cores.
	// tight: throttled at its only limit (0.5) and starved uncapped too
	// (0.2 cores on a loaded host): more than the limit it was throttled at.
	add("tight", 0.5, Ratio{K: 1}, CPUUse{UsageNanos: 5e8, Periods: 10, ThrottledPeriods: 5}, time.Second, Failed)
	add("tight", 0.5, Uncapped, CPUUse{UsageNanos: 2e8}, time.Second, Passed)
	add("hungry", 0.5, Ratio{K: 1}, CPUUse{UsageNanos: 5e8, Periods: 10, ThrottledPeriods: 9}, time.Second, Passed)
	add("hungry", 0.5, Uncapped, CPUUse{UsageNanos: 1.5e9}, time.Second, Passed)
	cs := CalibrateCPU(trials, map[string]float64{"starved": 0.1, "idle": 1, "hungry": 0.5, "tight": 0.5}, 0.01, 0.10)
	by := map[string]CPUCalibration{}
	for _, c := range cs {
		by[c.Task] = c
	}
	if s := by["starved"]; s.Verdict != "raise" || s.CPUs < 0.3-1e-9 || s.CPUs > 0.3+1e-9 || len(s.Throttled) != 2 {
		t.Errorf("starved: %+v, want raised to 3x's 0.3 CPUs", s)
	}
	if i := by["idle"]; i.Verdict != "lower" || i.CPUs < 0.25-1e-9 || i.CPUs > 0.25+1e-9 {
		t.Errorf("idle: %+v, want lowered to 0.25 (0.2 cores + 10%%, to a twentieth)", i)
	}
	if h := by["hungry"]; h.Verdict != "raise" || h.CPUs < 1.65-1e-9 || h.CPUs > 1.65+1e-9 {
		t.Errorf("hungry: %+v, want raised to 1.65 (1.5 cores + 10%%)", h)
	}
	if g := by["tight"]; g.Verdict != "raise" || g.CPUs < 0.55-1e-9 || g.CPUs > 0.55+1e-9 {
		t.Errorf("tight: %+v, want raised past its throttled 0.5 to 0.55", g)
	}
}
