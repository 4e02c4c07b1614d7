package docker

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/taskfile"
)

// A step that wants two cores under a quarter-core spec.
const cpuBound = `
[task]
name = "test/cpu-bound"
[environment]
image = "builtin"
cpus = 0.25
memory = "64M"
[verifier]
workload = { duration_ms = 0 }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "crunch"
  workload = { duration_ms = 0, base_mb = 4, cpu_work_ms = 300, cpu_threads = 2 }
`

// At 1x the CFS quota holds the step back, and its record says so; with
// no CPU limit there are no enforcement periods and nothing is throttled.
func TestCPUBoundStepRecordsThrottling(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	results, _ := sweep(t, b, []model.Task{parseTask(t, cpuBound)}, []model.Ratio{{K: 1}, model.Uncapped}, 1, context.Background(), nil)
	for _, r := range results {
		if len(r.Steps) == 0 || r.Steps[0].CPU == nil || r.CPU == nil {
			t.Fatalf("%s: no CPU in the step or trial record: %+v", r.Ratio, r.Steps)
		}
		st := r.Steps[0]
		c := *st.CPU
		t.Logf("%s: crunch used %v of CPU over %v wall, %d/%d periods throttled, throttled %v", r.Ratio, c.Usage(), st.Duration().Round(time.Millisecond), c.ThrottledPeriods, c.Periods, c.Throttled())
		if c.Usage() < 300*time.Millisecond {
			t.Errorf("%s: the cgroup counted %v of CPU, less than the 300ms the step did", r.Ratio, c.Usage())
		}
		if r.CPU.UsageNanos < c.UsageNanos {
			t.Errorf("%s: trial CPU %v is less than its step's %v", r.Ratio, r.CPU.Usage(), c.Usage())
		}
		// The host's pressure-stall record is there where the kernel has
		// /proc/pressure, and marked unavailable where it does not.
		_, err := os.Stat("/proc/pressure/cpu")
		if r.Noise == nil || r.Noise.PSI != (err == nil) {
			t.Errorf("%s: noise %+v, want PSI %v", r.Ratio, r.Noise, err == nil)
		} else {
			t.Logf("%s: host CPU pressure %.0f%%, memory %.0f%%, %d neighbour(s), contended %v (%s)", r.Ratio, 100*r.Noise.CPUSome, 100*r.Noise.MemorySome, r.Noise.Neighbours, r.Noise.Contended, r.Noise.Why)
		}
		if r.Ratio.Uncapped {
			if c.ThrottledNanos != 0 || c.Periods != 0 {
				t.Errorf("uncapped: throttled %v over %d periods, want none", c.Throttled(), c.Periods)
			}
			continue
		}
		if c.ThrottledNanos <= 0 || c.ThrottledPeriods <= 0 || c.ThrottledShare() <= 0 {
			t.Errorf("1x: a 2-thread step under a 0.25-core quota was not throttled: %+v", c)
		}
	}
}

// The built-in deadline task fails at 1x for want of CPU, not memory (its
// quota alone puts the work past the deadline), and passes with three
// times its CPU. The host's own load can starve a 3x trial too (this
// engine is shared), so 3x runs three repeats and one must pass; every
// 1x trial must fail.
func TestDeadlineTaskFailsForCPUAt1x(t *testing.T) {
	needEngine(t)
	cat, err := taskfile.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	task, err := cat.Find("builtin/cpu-deadline-tests")
	if err != nil {
		t.Fatal(err)
	}
	tasks := []model.Task{task}
	taskfile.ResolveImages(tasks, testImage)
	b := newBackend(t, Options{})
	results, _ := sweep(t, b, tasks, []model.Ratio{{K: 1}, {K: 3}}, 3, context.Background(), nil)
	passedAt3 := 0
	for _, r := range results {
		v := r.Steps[len(r.Steps)-1]
		if v.CPU == nil {
			t.Fatalf("%s: the verifier has no CPU record", r.Ratio)
		}
		t.Logf("%s r%d: %s; verifier %v wall, %d/%d periods throttled (%v); %s", r.Ratio, r.Repeat, r.Outcome, v.Duration().Round(time.Millisecond),
			v.CPU.ThrottledPeriods, v.CPU.Periods, v.CPU.Throttled().Round(time.Millisecond), strings.TrimSpace(v.Output))
		if len(r.OOMs) > 0 {
			t.Errorf("%s: OOM kills %+v: the task must fail for CPU, not memory", r.Ratio, r.OOMs)
		}
		switch r.Ratio.K {
		case 1:
			if r.Outcome != model.Failed || v.CPU.ThrottledNanos == 0 {
				t.Errorf("1x: %s with %v throttled, want failed and throttled", r.Outcome, v.CPU.Throttled())
			}
		case 3:
			if r.Outcome == model.Passed {
				passedAt3++
			}
		}
	}
	if passedAt3 == 0 {
		t.Errorf("3x: no repeat of three passed")
	}
}
