package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// A task that draws its need each run, on a loaded host: its kills at its
// own limit (the kernel's evidence) are its variance, not the host's. Seen
// before: the kill listed under "Failures on a contended host", "17 of 18
// trials ran contended" with nothing saying the split separated nothing,
// and no verdict line though the need straddled the limit.
func TestOwnLimitKillsAreTheTasksVarianceNotTheHosts(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 320 * model.MiB}
	ratios := []model.Ratio{{K: 1}, model.Uncapped}
	var trials []model.TrialResult
	for _, r := range ratios {
		for rep := 1; rep <= 4; rep++ {
			tr := model.TrialResult{Trial: model.Trial{ID: r.String() + string(rune('0'+rep)), Task: "examples/flaky-random-size", Agent: "oracle", Ratio: r, Repeat: rep, Policy: model.NewPolicy(spec, r, 2)},
				Outcome: model.Passed, Start: t0, End: t0.Add(5 * time.Second), PeakWorkingSetBytes: int64(180+40*rep) * model.MiB,
				Noise: &model.HostNoise{Contended: true, Why: "waited 3.7s for a CPU in 5.2s of steps (72%)"}}
			if !r.Uncapped && rep >= 3 {
				tr.Outcome, tr.Cause = model.OOMKilled, model.CauseOwnLimit
				tr.PeakWorkingSetBytes, tr.KernelPeakBytes = 300*model.MiB, 320*model.MiB
				tr.OOMs = []model.OOMEvent{{At: t0.Add(time.Second), Step: "python3 -", Source: "events"}}
			}
			trials = append(trials, tr)
		}
	}
	rep := New("x", nil, ratios, trials, DefaultOptions())
	var b bytes.Buffer
	if err := rep.Table(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"examples/flaky-random-size · oracle at 1x: the task's own variance: 2 of 4 runs failed at the 320MiB limit, 2 passed under it needing 220MiB–260MiB",
		"every trial ran contended, so this split cannot tell the host's failures from the limit's",
		"2 failure(s) on a contended host were at the trial's own memory limit by the kernel's evidence",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Failures on a contended host") {
		t.Errorf("own-limit kills listed as the host's:\n%s", out)
	}
}

// A what-if miss killed at its own limit is not put down to the host
// however loaded it was (it said "ran contended" beside an own-limit kill).
func TestWhatIfMissKilledAtItsOwnLimitIsNotTheHosts(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 100 * model.MiB}
	ratios := []model.Ratio{{K: 1}, model.Uncapped}
	var trials []model.TrialResult
	for _, r := range ratios {
		tr := model.TrialResult{Trial: model.Trial{ID: "t" + r.String(), Task: "x", Agent: "a", Ratio: r, Repeat: 1, Policy: model.NewPolicy(spec, r, 2)},
			Outcome: model.Passed, Start: t0, End: t0.Add(2 * time.Second), PeakWorkingSetBytes: 50 * model.MiB,
			Steps: []model.StepResult{{Name: "s", Start: t0, End: t0.Add(2 * time.Second), PeakWorkingSetBytes: 50 * model.MiB}},
			Noise: &model.HostNoise{Contended: true, Why: "load 17.0 on 2 CPUs"}}
		if !r.Uncapped {
			tr.Outcome, tr.Cause, tr.PeakWorkingSetBytes, tr.KernelPeakBytes = model.OOMKilled, model.CauseOwnLimit, 100*model.MiB, 100*model.MiB
			tr.OOMs = []model.OOMEvent{{At: t0.Add(time.Second), Step: "s", Source: "events"}}
		}
		trials = append(trials, tr)
	}
	rep := New("x", nil, ratios, trials, DefaultOptions())
	rep.Seeded = map[string]bool{"x": true}
	var b bytes.Buffer
	if err := rep.Table(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "killed at its own limit (the kernel's evidence), not the host") || strings.Contains(out, "oom-killed, ran contended") || strings.Contains(out, "(killed); ran contended") {
		t.Errorf("what-if miss:\n%s", out)
	}
}

// Timeouts whose working set sat at their limit when time ran out (319–320
// of 320 MiB, not enough time there for a stall) are the limit's, however
// loaded the host: they were listed under "Failures on a contended host
// the limit does not explain". A timeout well under its limit stays the
// host's to explain.
func TestTimeoutsAtTheLimitAreNotTheHosts(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 320 * model.MiB}
	r := model.Ratio{K: 1}
	var trials []model.TrialResult
	for i, mib := range []int64{319, 320, 150} {
		tr := model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("t%d", i), Task: "numpy", Agent: "oracle", Ratio: r, Repeat: i + 1, Policy: model.NewPolicy(spec, r, 2)},
			Outcome: model.Timeout, Cause: model.CauseAgentTimeout, Start: t0, End: t0.Add(15 * time.Second), PeakWorkingSetBytes: mib * model.MiB,
			Noise: &model.HostNoise{Contended: true, Why: "waited 9.1s for a CPU in 14.8s of steps (61%)"}}
		if mib == 320 {
			tr.PeakWorkingSetBytes = 300 * model.MiB
			tr.Stall = &model.StallEvidence{LimitBytes: 320 * model.MiB, Duration: model.Duration(14800 * time.Millisecond), AtLimit: model.Duration(900 * time.Millisecond), MajorFaults: 40}
		}
		trials = append(trials, tr)
	}
	rep := New("x", nil, []model.Ratio{r}, trials, DefaultOptions())
	var b bytes.Buffer
	if err := rep.Table(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "2 failure(s) on a contended host were at the trial's own memory limit") || !strings.Contains(out, "the limit does not explain (1)") || strings.Contains(out, "t0 numpy") || strings.Contains(out, "t1 numpy") {
		t.Errorf("timeouts at the limit blamed on the host:\n%s", out)
	}
}

// A repeat that fails its own step cleanly at every ratio, uncapped
// included (a seeded task's own failure), is the task's, not the host's:
// it was listed under "Failures on a contended host the limit does not
// explain". A repeat that passed uncapped stays listed.
func TestAFailureAtEveryRatioIsTheTasksOwn(t *testing.T) {
	spec := model.Resources{CPUs: 1, MemoryBytes: 64 * model.MiB}
	ratios := []model.Ratio{{K: 1}, {K: 2}, model.Uncapped}
	for _, quietOnce := range []bool{true, false} {
		var trials []model.TrialResult
		for ri, r := range ratios {
			for rep := 1; rep <= 2; rep++ {
				o := model.Failed
				if rep == 2 && r.Uncapped {
					o = model.Passed
				}
				noise := &model.HostNoise{Contended: true, Why: "waited 4.0s for a CPU in 2.9s of steps (137%)"}
				if quietOnce && rep == 1 && r.Uncapped {
					noise = &model.HostNoise{Why: "quiet"}
				}
				trials = append(trials, model.TrialResult{Trial: model.Trial{ID: fmt.Sprintf("t%d%d", ri, rep), Task: "cpu-deadline-tests", Agent: "agent", Ratio: r, Repeat: rep, Seed: uint64(rep), Policy: model.NewPolicy(spec, r, 2)},
					Outcome: o, Reason: "step fit exited 1", Start: t0, End: t0.Add(5 * time.Second), PeakWorkingSetBytes: 16 * model.MiB, Noise: noise})
			}
		}
		rep := New("x", nil, ratios, trials, DefaultOptions())
		var b bytes.Buffer
		if err := rep.Table(&b); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		// Failed at every ratio and once on a quiet host: the task's
		// own. Contended every time, the host may explain them (a new
		// user's cpu-deadline-tests waited 13.6 s for a CPU uncapped and
		// was called the task's own): listed with how much.
		switch {
		case quietOnce && (!strings.Contains(out, "2 failure(s) on a contended host were the task's own") || !strings.Contains(out, "the limit does not explain (2)") ||
			strings.Contains(out, "t01 cpu-deadline-tests") || !strings.Contains(out, "t02 cpu-deadline-tests")):
			t.Errorf("failed at every ratio, once on a quiet host, blamed on the host:\n%s", out)
		case !quietOnce && (strings.Contains(out, "were the task's own") || !strings.Contains(out, "the limit does not explain (5)")):
			t.Errorf("failed at every ratio, each time on a contended host, called the task's own:\n%s", out)
		}
	}
}
