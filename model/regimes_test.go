package model

import "testing"

func TestSplitRegimesPairsByTaskAgentRepeat(t *testing.T) {
	tr := func(task string, r Ratio, rep int, o Outcome, c Cause) TrialResult {
		return TrialResult{Trial: Trial{Task: task, Agent: "a", Ratio: r, Repeat: rep}, Outcome: o, Cause: c}
	}
	one, three := Ratio{K: 1}, Ratio{K: 3}
	trials := []TrialResult{
		// heavy install: killed at 1x, passes at 3x: rescued.
		tr("heavy", one, 1, OOMKilled, CauseOwnLimit), tr("heavy", three, 1, Passed, ""),
		tr("heavy", one, 2, Timeout, CauseStalled), tr("heavy", three, 2, Passed, ""),
		// strategy: fails cleanly at 3x, passes uncapped: made easier.
		tr("strategy", three, 1, Failed, ""), tr("strategy", Uncapped, 1, Passed, ""),
		tr("strategy", three, 2, Timeout, CauseAgentTimeout), tr("strategy", Uncapped, 2, Passed, ""),
		// flaky: passes at 1x, fails at 3x: a regression.
		tr("flaky", one, 1, Passed, ""), tr("flaky", three, 1, Failed, ""),
		// a cancelled trial pairs with nothing.
		tr("flaky", one, 2, Cancelled, ""), tr("flaky", three, 2, Passed, ""),
	}
	got := AdjacentRegimes(trials, map[string]bool{"heavy": true, "strategy": true, "flaky": true})
	if len(got) != 2 {
		t.Fatalf("%d splits, want 1x→3x and 3x→uncapped: %+v", len(got), got)
	}
	a, b := got[0], got[1]
	if a.From != "1x" || a.To != "3x" || a.Pairs != 3 || a.Rescued != 2 || a.Easier != 0 || a.Regressed != 1 || a.InfraFixed != 2 {
		t.Errorf("1x→3x: %+v", a)
	}
	if b.Pairs != 2 || b.Rescued != 0 || b.Easier != 2 || b.Regressed != 0 {
		t.Errorf("3x→uncapped: %+v", b)
	}
	if d := a.ScoreChange(); d < 1.0/3-1e-9 || d > 1.0/3+1e-9 {
		t.Errorf("1x→3x score change %v, want +1/3", d)
	}
	if a.RescuedCI.Lo <= 0 || a.EasierCI.Lo != 0 || a.EasierCI.Hi <= 0 {
		t.Errorf("intervals %+v %+v", a.RescuedCI, a.EasierCI)
	}
}

// A task that draws its need each run does not pair by repeat: its repeat
// at 1x and at 1.5x are two draws. "Made easier (the model's own
// failure)" counted its host timeouts and its runs stuck at the limit;
// it is compared by rate now, and those are the machine's.
func TestRegimesOfADrawnTaskAreUnpaired(t *testing.T) {
	pol := func(r Ratio) ResourcePolicy {
		return NewPolicy(Resources{CPUs: 1, MemoryBytes: 320 * MiB}, r, 2)
	}
	tr := func(r Ratio, rep int, o Outcome, c Cause, peakMiB int64, contended bool) TrialResult {
		t := TrialResult{Trial: Trial{Task: "numpy", Agent: "oracle", Ratio: r, Repeat: rep, Policy: pol(r)}, Outcome: o, Cause: c, PeakWorkingSetBytes: peakMiB * MiB}
		if contended {
			t.Noise = &HostNoise{Contended: true}
		}
		return t
	}
	one, more := Ratio{K: 1}, Ratio{K: 1.5}
	trials := []TrialResult{
		tr(one, 1, Timeout, CauseAgentTimeout, 319, false), // stuck at the limit
		tr(one, 2, Timeout, CauseAgentTimeout, 200, true),  // the host's
		tr(one, 3, Failed, "", 200, false),                 // its own
		tr(one, 4, Passed, "", 250, false),
		tr(more, 1, Passed, "", 300, false), tr(more, 2, Passed, "", 200, false),
		tr(more, 3, Passed, "", 380, false), tr(more, 4, Failed, "", 200, false),
	}
	for _, replays := range []map[string]bool{nil, {"numpy": true}} {
		got := AdjacentRegimes(trials, replays)
		if len(got) != 1 {
			t.Fatalf("replays %v: %+v", replays, got)
		}
		s := got[0]
		if replays == nil {
			u := s.Unpaired
			if s.Pairs != 0 || s.Easier != 0 || u == nil || u.From != (RegimeRates{Runs: 4, Passed: 1, Machine: 2, Clean: 1}) || u.To != (RegimeRates{Runs: 4, Passed: 3, Clean: 1}) {
				t.Errorf("drawn: %+v %+v", s, u)
			}
			if want := "1x→1.5x +50pp: unpaired: machine's failures 2/4→0/4, clean 1/4→1/4"; s.Compact() != want {
				t.Errorf("compact %q, want %q", s.Compact(), want)
			}
			continue
		}
		// Where it replays, the timeouts at the limit and on the loaded
		// host are rescues, not made easier.
		if s.Pairs != 4 || s.Rescued != 2 || s.Easier != 1 || s.Regressed != 1 || s.Unpaired != nil {
			t.Errorf("replayed: %+v", s)
		}
	}
}
