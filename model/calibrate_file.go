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
