package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/headroom-eval/headroom/model"
)

// analysed is a small experiment with what the runner now records: step
// peaks (sampled and the kernel's), CPU with throttling, and an uncapped
// run of each trajectory. "grows" peaks at 2.3× its spec in build; "spiky"
// passes 1.4× only between samples (the kernel's peak) and adapts (its
// 1x trial survives); "starved" is throttled at 1x.
func analysed() ([]model.Ratio, []model.TrialResult, map[string][]model.TracePoint) {
	ratios := []model.Ratio{{K: 1}, {K: 3}, model.Uncapped}
	spec := model.Resources{CPUs: 0.5, MemoryBytes: 100 * model.MiB}
	var trials []model.TrialResult
	traces := map[string][]model.TracePoint{}
	id := 0
	add := func(task string, r model.Ratio, rep int, o model.Outcome, build, kernel int64, cpu model.CPUUse) {
		id++
		tid := "t" + string(rune('0'+id/10)) + string(rune('0'+id%10))
		start := t0.Add(time.Duration(id) * time.Minute)
		steps := []model.StepResult{
			{Name: "edit", Phase: "agent", Start: start, End: start.Add(time.Second), PeakWorkingSetBytes: 20 * model.MiB, KernelPeakBytes: 21 * model.MiB},
			{Name: "build", Phase: "agent", Start: start.Add(time.Second), End: start.Add(4 * time.Second), PeakWorkingSetBytes: build, KernelPeakBytes: kernel, CPU: &cpu},
		}
		tr := model.TrialResult{Trial: model.Trial{ID: tid, Task: task, Agent: "agent", Ratio: r, Repeat: rep, Policy: model.NewPolicy(spec, r, 2)},
			Outcome: o, Start: start, End: start.Add(4 * time.Second), Steps: steps, PeakWorkingSetBytes: build, KernelPeakBytes: kernel, CPU: &cpu}
		// The second repeats ran beside a busy neighbour.
		tr.Noise = &model.HostNoise{PSI: true, CPUSome: 0.05, Neighbours: 1}
		if rep == 2 {
			tr.Noise.CPUSome = 0.6
			tr.Noise.Judge(model.HostLoad{}, model.HostLoad{}, 2)
		}
		if o == model.OOMKilled {
			tr.OOMs = []model.OOMEvent{{At: start.Add(2 * time.Second), Step: "build"}}
			tr.KilledInStep = "build"
		}
		if r.Uncapped {
			for i := 0; i < 8; i++ {
				traces[tid] = append(traces[tid], model.TracePoint{At: start.Add(time.Second + time.Duration(i)*400*time.Millisecond), WorkingSetBytes: build * int64(i+1) / 8})
			}
		}
		trials = append(trials, tr)
	}
	free := model.CPUUse{UsageNanos: 2e9}
	throttled := model.CPUUse{UsageNanos: 1.5e9, Periods: 30, ThrottledPeriods: 24, ThrottledNanos: 2.2e9}
	for rep := 1; rep <= 2; rep++ {
		add("grows", model.Uncapped, rep, model.Passed, 230*model.MiB, 232*model.MiB, free)
		add("grows", model.Ratio{K: 1}, rep, model.OOMKilled, 100*model.MiB, 100*model.MiB, free)
		add("grows", model.Ratio{K: 3}, rep, model.Passed, 230*model.MiB, 232*model.MiB, free)
		add("spiky", model.Uncapped, rep, model.Passed, 90*model.MiB, 140*model.MiB, free)
		add("spiky", model.Ratio{K: 1}, rep, model.Passed, 95*model.MiB, 99*model.MiB, free)
		add("starved", model.Uncapped, rep, model.Passed, 30*model.MiB, 31*model.MiB, free)
		add("starved", model.Ratio{K: 1}, rep, model.Failed, 30*model.MiB, 31*model.MiB, throttled)
	}
	return ratios, trials, traces
}

func TestWhatIfResourcesAndNoiseSections(t *testing.T) {
	ratios, trials, traces := analysed()
	rep := New("whatif", nil, ratios, trials, DefaultOptions()).WithTraces(traces)
	rep.Seeded = map[string]bool{"grows": true, "spiky": true, "starved": true} // as the built-in workload replays
	for _, f := range []string{"table", "markdown"} {
		t.Run(f, func(t *testing.T) {
			var b bytes.Buffer
			if err := rep.Write(&b, f); err != nil {
				t.Fatal(err)
			}
			golden.RequireEqual(t, b.Bytes())
		})
	}
	wi := rep.WhatIf()
	if wi == nil || len(wi.Accuracy) != 2 {
		t.Fatalf("what-if %+v", wi)
	}
	// 1x: grows' two kills right, spiky's two kernel-peak kills wrong
	// (it survived), starved right about memory but not its outcome.
	one := wi.Accuracy[0]
	if one.TP != 2 || one.FP != 2 || one.TN != 2 || one.FN != 0 || one.OutcomeAgree != 2 {
		t.Errorf("1x confusion %+v", one)
	}
	var b bytes.Buffer
	rep.Write(&b, "json")
	if !strings.Contains(b.String(), `"what_if"`) || !strings.Contains(b.String(), `"throttled_ns":2200000000`) { // in a trial record, compact as written
		t.Error("the JSON report lacks the what-if section or the step's throttling")
	}
}

// Where the kernel has no pressure-stall information the report says so
// plainly and judges by load alone.
func TestNoiseSectionSaysWhenPSIIsMissing(t *testing.T) {
	ratios, trials, _ := analysed()
	for i := range trials {
		trials[i].Noise = &model.HostNoise{Neighbours: 1}
		trials[i].Noise.Judge(model.HostLoad{Load1: 4}, model.HostLoad{}, 2)
	}
	var b bytes.Buffer
	if err := New("x", nil, ratios, trials, DefaultOptions()).Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "14 of 14 trials ran contended") || !strings.Contains(b.String(), "offers no pressure-stall information (/proc/pressure), so contention was judged by load alone") {
		t.Errorf("report:\n%s", b.String())
	}
}

// A trial that waited for a CPU only behind its own limit and threads is
// counted quiet, and the noise section says how many did.
func TestNoiseSectionCountsOwnWaitsQuiet(t *testing.T) {
	ratios, trials, _ := analysed()
	for i := range trials {
		trials[i].Noise = &model.HostNoise{PSI: true, CPUWaitKnown: true, StepTime: model.Duration(4 * time.Second)}
		if trials[i].Task == "starved" {
			trials[i].Noise.OwnCPUWait = model.Duration(12 * time.Second)
		}
		trials[i].Noise.Judge(model.HostLoad{}, model.HostLoad{}, 2)
	}
	var b bytes.Buffer
	if err := New("x", nil, ratios, trials, DefaultOptions()).Write(&b, "table"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0 of 14 trials ran contended") || !strings.Contains(b.String(), "4 more waited as long only behind their own CPU limit and their own threads") {
		t.Errorf("report:\n%s", b.String())
	}
}

// The smallest sweep is recommended only where every clear-cut kill was
// predicted right: "grows" alone (killed at 1x as its uncapped peak says,
// passed at 3x) earns it; with "spiky" (predicted killed, it adapts and
// survives) the report says to keep measuring. It had recommended
// running uncapped alone after 0 of 2 clear-cut kills right.
func TestSmallestSweepOnlyWherePredictionsHeld(t *testing.T) {
	ratios, trials, traces := analysed()
	for _, c := range []struct {
		seeded map[string]bool
		want   string
	}{
		{map[string]bool{"grows": true}, "Smallest sweep for these tasks: run uncapped alone with 2 repeats; 1x, 3x are then predicted"},
		{map[string]bool{"grows": true, "spiky": true}, "Keep measuring 1x, 3x for these tasks: predicted from the uncapped runs, clear-cut kills were"},
	} {
		rep := New("whatif", nil, ratios, trials, DefaultOptions()).WithTraces(traces)
		rep.Seeded = c.seeded
		var b bytes.Buffer
		if err := rep.Write(&b, "table"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("seeded %v: want %q in\n%s", c.seeded, c.want, b.String())
		}
	}
}
