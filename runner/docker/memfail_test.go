package docker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/headroom-eval/headroom/event"
	"github.com/headroom-eval/headroom/internal/enginetest"
	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/runner"
)

// A step that sits at its limit for under half its time, thrashing (its
// file-backed pages evicted and read back), until its time limit: a stall,
// not an agent timeout. Seen before the graded rule: 6.85 s of a 14.7 s
// step at the limit (46.6%) with 6,652 major faults recorded as a plain
// agent timeout, because the rule wanted 50%.
func TestThrashUnderHalfTheStepIsAStall(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	task := parseTask(t, `
[task]
name = "test/thrash"
[environment]
image = "builtin"
memory = "128M"
cpus = 1
[agent]
timeout_sec = 10
[verifier]
timeout_sec = 20
workload = { duration_ms = 10, requires = ["done"] }
[[agents]]
name = "agent"
  [[agents.steps]]
  name = "work"
  workload = { duration_ms = 60000, base_mb = 4, hold_at_limit = true, hold_after_ms = 6500, thrash_mb = 12, writes = ["done"] }
`)
	// 128M, not 64M: the thrash evicts and reads back hr-workload's own
	// pages, which stay as inactive file (6.6 MiB of a 12.3 MB binary):
	// at 64M that left the working set at 89.4% of the limit, under the
	// 90% a stall's "at the limit" asks (model.StallWorkingSet), once the
	// binary grew by 270 KB (CI: 1.0 s of 10 at the limit, 3 of 3 tries).
	// The workload holds at the limit from 6.5 s of the step's 10: about
	// a third of it (26-34% measured). Once in a CI run it reached the
	// limit only for its last second (10%), where by the graded rule it
	// is rightly no stall: the condition this test is about did not
	// happen, so that run is made again (at most three), said in the log.
	var r model.TrialResult
	for try := 1; ; try++ {
		results, _ := sweep(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), nil)
		if len(results) != 1 {
			t.Fatalf("%d results, want 1", len(results))
		}
		r = results[0]
		if r.Stall == nil {
			t.Fatalf("%s / %s (%s): no stall evidence recorded on a timeout", r.Outcome, r.Cause, r.Reason)
		}
		if r.Stall.Share() >= 0.2 || try == 3 {
			break
		}
		t.Logf("try %d: at the limit only %.0f%% of the step (%s): not the thrash this test needs; again", try, 100*r.Stall.Share(), r.Reason)
	}
	st := *r.Stall
	t.Logf("%s / %s: %s", r.Outcome, r.Cause, r.Reason)
	if r.Outcome != model.Timeout || r.Cause != model.CauseStalled || !st.Stalled {
		t.Errorf("%s / %s, want timeout / stalled-at-limit (%s)", r.Outcome, r.Cause, st)
	}
	if st.MajorFaults < 1000 || !strings.Contains(r.Reason, "major faults") {
		t.Errorf("major faults %d, reason %q: want the thrash's thousands, named", st.MajorFaults, r.Reason)
	}
	if r.MemoryFailure() != model.StalledAtLimit {
		t.Errorf("memory failure %v, want stalled", r.MemoryFailure())
	}
}

// A kill at the trial's own limit while the sampler is starved (its tick
// blocked for the whole step, as on a loaded host) and every notice of the
// kill comes after the step has closed: the kernel's own peak of the step says
// the limit was reached, whatever the samples and the counters read after
// the step's peak was reset. Seen before: about 1 kill in 20 on a loaded
// host recorded as outside pressure (P) with the step's kernel peak at
// exactly the limit.
func TestOwnLimitKillWithTheSamplerStarvedIsOwnLimit(t *testing.T) {
	needEngine(t)
	b := newBackend(t, Options{})
	task := parseTask(t, enginetest.HeavyInstall)
	var mu sync.Mutex
	held := false
	release := func() {
		mu.Lock()
		defer mu.Unlock()
		if held {
			b.sampler.mu.Unlock()
			b.mu.Unlock()
			held = false
		}
	}
	t.Cleanup(release)
	results, _ := sweepTuned(t, b, []model.Task{task}, []model.Ratio{{K: 1}}, 1, context.Background(), func(e event.Event) {
		switch e := e.(type) {
		case event.StepStarted:
			if e.Step.Name == "install" {
				mu.Lock()
				// No sample and no cgroup kill count (the sampler), no
				// engine event and no kernel log line (both find their
				// container under the backend's lock) until the step ends:
				// a host too loaded to run headroom's readers in time.
				b.sampler.mu.Lock()
				b.mu.Lock()
				held = true
				mu.Unlock()
			}
		case event.StepEnded:
			if e.Result.Name == "install" {
				release()
			}
		}
	}, func(c *runner.Config) { c.OOMSettle = time.Millisecond })
	if len(results) != 1 {
		t.Fatalf("%d results, want 1", len(results))
	}
	r := results[0]
	var install model.StepResult
	for _, s := range r.Steps {
		if s.Name == "install" {
			install = s
		}
	}
	t.Logf("%s / %s: %s; install kernel peak %s, sampled %s, limit %s", r.Outcome, r.Cause, r.Reason,
		model.FormatBytes(install.KernelPeakBytes), model.FormatBytes(install.PeakWorkingSetBytes), model.FormatBytes(r.Policy.HardLimitBytes))
	if len(r.OOMs) == 0 {
		t.Fatalf("no kill recorded: %s / %s (%s)", r.Outcome, r.Cause, r.Reason)
	}
	if r.Outcome != model.OOMKilled || r.Cause != model.CauseOwnLimit {
		t.Errorf("%s / %s, want oom-killed / own-limit (%s)", r.Outcome, r.Cause, r.Reason)
	}
	if r.KilledInStep != "install" {
		t.Errorf("killed in step %q, want install: the kill's own time names the step, not the step running when its notice came", r.KilledInStep)
	}
}
