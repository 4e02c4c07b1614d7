package ui

import (
	"fmt"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// whatIfLine follows the cursor's cell: on a measured capped cell, the
// rate predicted for it from the row's finished uncapped trials beside
// what it measured; then the standard ratios the sweep did not run ("≈",
// as the report marks them); and how many of the cell's trials ran
// contended. "" when there is nothing to say.
func (s *SweepState) whatIfLine(row model.RowKey, ratio model.Ratio) string {
	var trials []model.TrialResult
	traces := model.TraceMap{}
	contended, noted := 0, 0
	s.index()
	for _, id := range s.rowTrials[row] {
		v := s.Trials[id]
		if v.Result == nil {
			continue
		}
		trials = append(trials, *v.Result)
		// Only the cell's trials that ran and count say what the host did
		// to them (the report counts the same way).
		if n := v.Result.Noise; n != nil && v.Result.Outcome.Counted() && v.Trial.Ratio == ratio {
			noted++
			if n.Contended {
				contended++
			}
		}
		if v.Trial.Ratio.Uncapped {
			pts := make([]model.TracePoint, len(v.Samples))
			for i, sm := range v.Samples {
				pts[i] = model.TracePoint{At: sm.Time, WorkingSetBytes: sm.WorkingSetBytes}
			}
			traces[v.Trial.ID] = pts
		}
	}
	var out []string
	for _, rc := range model.RateChecks(trials) {
		if rc.Ratio != ratio {
			continue
		}
		verdict := rc.Verdict()
		out = append(out, fmt.Sprintf("what-if at %s, from uncapped: killed ≈%s, measured %s failed at the limit: %s",
			ratio, rc.PredictedText(), rc.Measured, verdict))
	}
	var parts []string
	for _, c := range model.PredictCells(trials, traces, model.StandardRatios) {
		// The rate with its interval, not a count that reads as certain;
		// and where a tighter measured cell did better, why.
		text := fmt.Sprintf("%s %s", c.Ratio, c.RateText())
		if c.Note != "" {
			text += " (" + c.Note + ")"
		}
		parts = append(parts, text)
	}
	if len(parts) > 0 {
		out = append(out, "not run: "+strings.Join(parts, " · "))
		if len(out) == 1 {
			out[0] = "what-if, from uncapped: " + strings.Join(parts, " · ")
		}
	}
	if contended > 0 {
		out = append(out, fmt.Sprintf("%d of %d at %s ran contended", contended, noted, ratio))
	}
	return strings.Join(out, "  ·  ")
}
