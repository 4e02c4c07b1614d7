package model

import "fmt"

// CalibratedTasks lists the tasks of cals in order, once each.
func CalibratedTasks(cals []Calibration) []string {
	var out []string
	for _, c := range cals {
		if len(out) == 0 || out[len(out)-1] != c.Task {
			out = append(out, c.Task)
		}
	}
	return out
}

// TaskRecommendation is what one task file gets: its file holds one spec
// for all its agents, so the largest guarantee and limit among them (each
// agent's need stays in the table); why says why nothing is written.
func TaskRecommendation(cals []Calibration, task string) (Calibration, string) {
	var rec Calibration
	found := false
	for _, c := range cals {
		if c.Task != task {
			continue
		}
		if c.Verdict == "unknown" {
			return rec, fmt.Sprintf("agent %s: no limit recommended: %s", c.Agent, c.UnknownWhy())
		}
		if c.LimitBytes < c.SpecBytes && c.TooFew() && c.Repeats == RepeatsDrawn {
			// A lower limit on too few runs is one no run showed safe: 3
			// runs wrote memory_mb 64 → 8 beside the table's own "about
			// 299 runs would" (the twenty-sixth attacker's 5). A raise
			// on few runs is still written: it kills less, not more.
			return rec, fmt.Sprintf("agent %s: not lowered on %d runs: about %d runs, none over the lower limit, would show a %.3g%% fail rate there (as measured it is ≤%.3g%%); run more repeats with uncapped among the ratios", c.Agent, c.Runs(), c.RunsForTarget, 100*c.TargetKillRate, 100*c.KillRateCI.Hi)
		}
		if !found || c.LimitBytes > rec.LimitBytes {
			g := max(rec.GuaranteeBytes, c.GuaranteeBytes)
			rec = c
			rec.GuaranteeBytes = g
		} else {
			rec.GuaranteeBytes = max(rec.GuaranteeBytes, c.GuaranteeBytes)
		}
		found = true
	}
	switch {
	case rec.LimitBytes > rec.SpecBytes:
		rec.Verdict = "raise"
	case rec.LimitBytes < rec.SpecBytes:
		rec.Verdict = "lower"
	default:
		rec.Verdict = "keep"
	}
	return rec, ""
}
