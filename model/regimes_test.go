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
	got := AdjacentRegimes(trials)
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
