package docker

import (
	"context"
	"testing"

	"github.com/headroom-eval/headroom/cgroup"
	"github.com/headroom-eval/headroom/model"
)

// A step that writes 64 MiB of files and allocates little (a MiB at a
// time over about 4 s: an interval's figure without cache subtracts the
// smaller cache of its two ends, so it can err high by what one interval
// wrote — a single 64 MiB dd inside one 50 ms interval read 33 MiB in a
// CI run): the kernel's
// mark holds the files' page cache, which the kernel reclaims before it
// kills, so it is not need. The figure without cache is recorded per
// step and trial, and the need (what calibrate, what-if and Resources per
// cell read) follows it.
func TestKernelPeakWithoutCache(t *testing.T) {
	needEngine(t)
	needDebian(t)
	task := parseTask(t, `
[task]
name = "test/page-cache"
[environment]
image = "`+DebianImage+`"
memory = "256M"
[verifier]
command = ["true"]
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "write"
  command = ["sh", "-c", "for i in $(seq 64); do dd if=/dev/zero of=/var/tmp/f$i bs=1M count=1 status=none; sleep 0.05; done; sleep 1; echo written"]
`)
	task.Image = DebianImage
	b := newBackend(t, Options{})
	results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{Uncapped: true}}, 1, context.Background(), nil)
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	r := results[0]
	if r.Outcome != model.Passed {
		t.Fatalf("outcome %s: %+v", r.Outcome, r.Steps)
	}
	if r.PeakMode != cgroup.PeakReset {
		t.Skipf("peak mode %q: this kernel's mark cannot be reset here", r.PeakMode)
	}
	var st model.StepResult
	for _, s := range r.Steps {
		if s.Name == "write" {
			st = s
		}
	}
	t.Logf("write: sampled working set %s, kernel peak with cache %s, without %s; need %s",
		model.FormatBytes(st.PeakWorkingSetBytes), model.FormatBytes(st.KernelPeakBytes), model.FormatBytes(st.KernelPeakNoCacheBytes), model.FormatBytes(model.StepPeakBytes(st)))
	if st.KernelPeakBytes < 64*model.MiB {
		t.Fatalf("kernel peak %s: the files' page cache is not in the mark", model.FormatBytes(st.KernelPeakBytes))
	}
	if st.KernelPeakNoCacheBytes == 0 || st.KernelPeakBytes-st.KernelPeakNoCacheBytes < 40*model.MiB {
		t.Errorf("kernel peak with cache %s, without %s: want the cache (most of 64MiB) left out",
			model.FormatBytes(st.KernelPeakBytes), model.FormatBytes(st.KernelPeakNoCacheBytes))
	}
	if need := model.StepPeakBytes(st); need >= 16*model.MiB {
		t.Errorf("step need %s: want it to follow the figure without cache, not the files' cache", model.FormatBytes(need))
	}
	if r.KernelPeakNoCacheBytes < st.KernelPeakNoCacheBytes {
		t.Errorf("trial without cache %d below its step's %d", r.KernelPeakNoCacheBytes, st.KernelPeakNoCacheBytes)
	}
	if need := model.TrialPeakBytes(r); need >= 16*model.MiB {
		t.Errorf("trial need %s: want it without the files' cache (kernel peak with it %s)", model.FormatBytes(need), model.FormatBytes(r.KernelPeakBytes))
	}
}
