package model

import "testing"

func TestCalibrate(t *testing.T) {
	spec := 128 * MiB
	pol := func(r Ratio) ResourcePolicy { return NewPolicy(Resources{CPUs: 1, MemoryBytes: spec}, r, 2) }
	var trials []TrialResult
	add := func(task string, r Ratio, rep int, peak int64, killed bool) {
		tr := TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: r, Repeat: rep, Policy: pol(r)}, PeakWorkingSetBytes: peak, Outcome: Passed}
		if killed {
			tr.Outcome = OOMKilled
			tr.OOMs = []OOMEvent{{Step: "install"}}
		}
		trials = append(trials, tr)
	}
	// heavy: killed at 1x every time; uncapped shows needs of 150–180 MiB.
	for rep, need := range []int64{150, 160, 170, 180} {
		add("heavy", Ratio{K: 1}, rep+1, 128*MiB, true)
		add("heavy", Uncapped, rep+1, need*MiB, false)
	}
	// steady: 50 MiB at every ratio.
	for rep := 1; rep <= 4; rep++ {
		add("steady", Ratio{K: 1}, rep, 50*MiB, false)
		add("steady", Uncapped, rep, 52*MiB, false)
	}
	// unmeasured: killed everywhere it ran; its uncapped run was
	// cancelled, which is no evidence.
	add("unmeasured", Ratio{K: 1}, 1, 128*MiB, true)
	add("unmeasured", Ratio{K: 3}, 1, 384*MiB, true)
	trials = append(trials, TrialResult{Trial: Trial{Task: "unmeasured", Agent: "a", Ratio: Uncapped, Repeat: 1, Policy: pol(Uncapped)}, Outcome: Cancelled})

	// kernel: a spike between samples only the kernel's peak saw.
	add("kernel", Uncapped, 1, 100*MiB, false)
	trials[len(trials)-1].KernelPeakBytes = 140 * MiB
	cs := Calibrate(trials, map[string]int64{"heavy": spec, "steady": spec, "unmeasured": spec, "kernel": spec}, 0.01, 0.10)
	by := map[string]Calibration{}
	for _, c := range cs {
		by[c.Task] = c
	}
	h := by["heavy"]
	// 99th percentile of {150..180} is 180; +10% = 198 MiB → 200 MiB.
	if h.Verdict != "raise" || h.LimitBytes != 200*MiB || h.GuaranteeBytes != 160*MiB || len(h.NeedBytes) != 4 {
		t.Errorf("heavy: %+v", h)
	}
	// The limit is stated against the spec the task ran with (200/128),
	// not against the new guarantee (200/160 = 1.25x read as the opposite).
	if r := h.LimitRatio(); r != 200.0/128 {
		t.Errorf("heavy limit ratio %v, want %v", r, 200.0/128)
	}
	if len(h.Kills) != 2 || h.Kills[0].Killed != 4 || h.Kills[1].Killed != 0 {
		t.Errorf("heavy kills %+v", h.Kills)
	}
	// steady needs 52 MiB of its 128: lowered to a 56 MiB guarantee and
	// a 64 MiB limit (52 × 1.1 rounded up to 8 MiB).
	if s := by["steady"]; s.Verdict != "lower" || s.LimitBytes != 64*MiB || s.GuaranteeBytes != 56*MiB {
		t.Errorf("steady must be lowered: %+v", s)
	}
	// Four runs under the limit say little: the kill rate could be up to
	// Wilson's 49%, and 1% takes 299 runs none of which is killed.
	if h.Exceeding != 0 || h.KillRateCI.Hi < 0.48 || h.KillRateCI.Hi > 0.5 || h.RunsForTarget != 299 {
		t.Errorf("heavy uncertainty: %d exceeding, %+v, %d runs", h.Exceeding, h.KillRateCI, h.RunsForTarget)
	}
	if k := by["kernel"]; k.NeedBytes[0] != 140*MiB || k.Verdict != "raise" {
		t.Errorf("the kernel's peak (140 MiB) must count where the samples (100 MiB) missed it: %+v", k)
	}
	if u := by["unmeasured"]; u.Verdict != "unknown" || u.Censored != 1 || u.CensoredAboveBytes != 384*MiB || u.Cancelled != 1 || len(u.Kills) != 2 {
		t.Errorf("unmeasured: %+v", u)
	}
}

func TestQuantileBytes(t *testing.T) {
	s := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for q, want := range map[float64]int64{0.5: 5, 0.99: 10, 0.1: 1, 0: 1, 1: 10} {
		if got := quantileBytes(s, q); got != want {
			t.Errorf("q%.2f = %d, want %d", q, got, want)
		}
	}
}
