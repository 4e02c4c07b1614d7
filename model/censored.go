package model

// CutOff says whether a run was stopped by a time limit (its agent's, a
// phase's agent's or its verifier's), whatever its verdict: a pass after
// its agent's timeout had its agent cut off too. Its peak is where it was
// stopped, a lower bound of its need (right-censored), not its need:
// calibrate, the variance table and what-if treat it so (docs/STATISTICS.md,
// "Runs cut off by their time limit").
func CutOff(t TrialResult) bool {
	if t.Outcome == Timeout || t.Outcome == PassedAfterTimeout {
		return true
	}
	for _, s := range t.Steps {
		if s.TimedOut {
			return true
		}
	}
	for _, p := range t.Phases {
		if p.AgentTimedOut {
			return true
		}
	}
	return false
}
