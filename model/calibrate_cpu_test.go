package model

import (
	"strings"
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
	// echo: a 6 µs step's CPU tick read as 36 cores; a real 2 s step
	// beside it used 0.1. Seen before: "0.13–36.40 cores" on a 2-CPU host.
	trials = append(trials, TrialResult{Trial: Trial{Task: "echo", Agent: "a", Ratio: Uncapped, Policy: NewPolicy(Resources{CPUs: 1, MemoryBytes: 64 * MiB}, Uncapped, 2)}, Outcome: Passed, CPU: &CPUUse{UsageNanos: 2e8},
		Steps: []StepResult{{Name: "echo", Start: t0, End: t0.Add(6 * time.Microsecond), CPU: &CPUUse{UsageNanos: 218_400}},
			{Name: "work", Start: t0, End: t0.Add(2 * time.Second), CPU: &CPUUse{UsageNanos: 2e8}}}})
	// wide: needs 3 cores uncapped on a 2-CPU host.
	add("wide", 1, Uncapped, CPUUse{UsageNanos: 3e9}, time.Second, Passed)
	add("wide", 1, Ratio{K: 1}, CPUUse{UsageNanos: 1e9, Periods: 10, ThrottledPeriods: 9}, time.Second, Failed)
	cs := CalibrateCPU(trials, map[string]float64{"starved": 0.1, "idle": 1, "hungry": 0.5, "tight": 0.5, "echo": 1, "wide": 1}, 2, 0.01, 0.10)
	by := map[string]CPUCalibration{}
	for _, c := range cs {
		by[c.Task] = c
	}
	if s := by["starved"]; s.Verdict != "raise" || s.CPUs < 0.3-1e-9 || s.CPUs > 0.3+1e-9 || len(s.Throttled) != 2 {
		t.Errorf("starved: %+v, want raised to 3x's 0.3 CPUs", s)
	}
	if e := by["echo"]; len(e.NeedCores) != 1 || e.NeedCores[0] > 0.11 || e.Verdict != "lower" {
		t.Errorf("echo: %+v, want the 6 µs step ignored and the 2 s step's 0.1 cores read", e)
	}
	if w := by["wide"]; w.CPUs != 2 || !w.HostCapped {
		t.Errorf("wide: %+v, want the host's 2 CPUs, said to be capped", w)
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

// Contended runs say what the host let the task use, not what it needs:
// left out, and no advice when they are most. Seen before: "lower 0.3"
// from 17 contended runs of 18 on a host at load 17.
func TestCalibrateCPULeavesContendedRunsOut(t *testing.T) {
	t0 := time.Unix(0, 0)
	var trials []TrialResult
	for i := range 6 {
		r := Uncapped
		if i%2 == 1 {
			r = Ratio{K: 1}
		}
		cpu := CPUUse{UsageNanos: 2e8, Periods: 10}
		tr := TrialResult{Trial: Trial{Task: "loaded", Agent: "a", Ratio: r, Policy: NewPolicy(Resources{CPUs: 1, MemoryBytes: 64 * MiB}, r, 2)}, Outcome: Passed, CPU: &cpu,
			Steps: []StepResult{{Name: "s", Start: t0, End: t0.Add(2 * time.Second), CPU: &cpu}}}
		if i > 0 {
			tr.Noise = &HostNoise{Contended: true}
		}
		trials = append(trials, tr)
	}
	c := CalibrateCPU(trials, map[string]float64{"loaded": 1}, 2, 0.01, 0.10)[0]
	if c.Verdict != "unknown" || c.Contended != 5 || c.Read != 1 || c.CPUs != 0 {
		t.Errorf("%+v: want no advice, 5 contended runs left out", c)
	}
}

// A drawn task's runs that failed at their limit leave the median's
// interval open above but not unknown, and the median known; "unknown"
// says why in numbers, not "failed at every limit tried" while peaks exist.
func TestCalibrateUnknownSaysWhyAndTheMedianStands(t *testing.T) {
	var trials []TrialResult
	spec := Resources{CPUs: 1, MemoryBytes: 320 * MiB}
	for i := range 10 {
		r := Ratio{K: 1}
		tr := TrialResult{Trial: Trial{Task: "flaky", Agent: "oracle", Ratio: r, Repeat: i + 1, Policy: NewPolicy(spec, r, 2)}, Outcome: Passed, PeakWorkingSetBytes: int64(200+10*i) * MiB}
		if i >= 7 {
			tr.Outcome, tr.Cause, tr.PeakWorkingSetBytes = OOMKilled, CauseOwnLimit, 320*MiB
		}
		trials = append(trials, tr)
	}
	c := Calibrate(trials, map[string]int64{"flaky": 320 * MiB}, nil, 0.01, 0.10)[0]
	if c.Verdict != "unknown" || c.MedianBytes != 240*MiB || len(c.MedianCI) != 2 || c.MedianCI[0] == 0 {
		t.Fatalf("%+v: want unknown with the median 240MiB and its interval", c)
	}
	if why := c.UnknownWhy(); !strings.Contains(why, "of 10 runs, 3 censored: 3 failed at a limit (need > 320MiB)") || !strings.Contains(why, "largest need measured (260MiB)") {
		t.Errorf("UnknownWhy: %s", why)
	}
}

// A spec is not lowered on what the long steps read when a short step
// held the run's CPU: a 0.7 s step at a full core went unread beside a
// 1.2 s sleep, and 1 CPU became 0.05, at which that step timed out (the
// twenty-seventh attacker's 3).
func TestCalibrateCPUDoesNotLowerPastAnUnreadStep(t *testing.T) {
	t0 := time.Unix(0, 0)
	sleep, work := CPUUse{UsageNanos: 2e6}, CPUUse{UsageNanos: 7e8}
	var trials []TrialResult
	for _, r := range []Ratio{{K: 1}, Uncapped} {
		cpu := CPUUse{UsageNanos: 7.02e8, Periods: 19}
		trials = append(trials, TrialResult{Trial: Trial{Task: "cal1", Agent: "a", Ratio: r, Policy: NewPolicy(Resources{CPUs: 1, MemoryBytes: 64 * MiB}, r, 2)}, Outcome: Passed, CPU: &cpu,
			Steps: []StepResult{{Name: "sleep 1.2", Start: t0, End: t0.Add(1200 * time.Millisecond), CPU: &sleep},
				{Name: "python3", Start: t0.Add(1200 * time.Millisecond), End: t0.Add(1900 * time.Millisecond), CPU: &work}}})
	}
	c := CalibrateCPU(trials, map[string]float64{"cal1": 1}, 2, 0.05, 0.10)[0]
	if c.Verdict != "keep" || c.CPUs != 1 || c.ShortStepShare < 0.99 {
		t.Errorf("%s %v (short steps %.2f); want keep 1: the unread step held the CPU", c.Verdict, c.CPUs, c.ShortStepShare)
	}
}
