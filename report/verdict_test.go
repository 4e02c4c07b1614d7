package report

import (
	"bytes"
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
