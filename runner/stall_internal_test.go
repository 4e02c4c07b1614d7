package runner

import (
	"testing"
	"time"

	"github.com/headroom-eval/headroom/model"
)

// A timed-out step's stall evidence is its own record, judged: t0001 (the
// sweep's first) and t0045 (after clean runs had set a bar from Python's
// start-up faults) got opposite verdicts on the same numbers. Nothing of
// other runs reaches it now; the faults counted at the limit and the
// kernel's peak travel with it.
func TestStallEvidenceIsTheStepsOwn(t *testing.T) {
	t0 := time.Unix(0, 0)
	limit := 320 * model.MiB
	step := func(d, atLimit time.Duration, faults int64) model.StepResult {
		return model.StepResult{Name: "python3 -", Start: t0, End: t0.Add(d), TimedOut: true, AtLimit: model.Duration(atLimit), MajorFaults: faults, KernelPeakBytes: limit}
	}
	first := stallEvidence(step(14900*time.Millisecond, 5100*time.Millisecond, 2818), limit)
	later := stallEvidence(step(14800*time.Millisecond, 6700*time.Millisecond, 2836), limit)
	if !first.Stalled || !later.Stalled {
		t.Errorf("t0001 %s: %v; t0045 %s: %v; want both stalled", first, first.Stalled, later, later.Stalled)
	}
	s := step(14800*time.Millisecond, 6700*time.Millisecond, 2836)
	n := int64(2700)
	s.MajorFaultsAtLimit = &n
	if e := stallEvidence(s, limit); e.MajorFaultsAtLimit == nil || *e.MajorFaultsAtLimit != n || e.KernelPeakBytes != limit {
		t.Errorf("evidence %+v lost the faults at the limit or the kernel's peak", e)
	}
}
