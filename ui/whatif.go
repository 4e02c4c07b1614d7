package ui

import (
	"fmt"
	"strings"

	"github.com/headroom-eval/headroom/model"
)

// whatIfLine is the cursor row's predicted cells at the standard ratios
// the sweep did not run, from its finished uncapped trials ("≈", as the
// report marks them), and how many of the row's trials ran contended;
// "" when there is nothing to say.
func (s *SweepState) whatIfLine(row model.RowKey) string {
	var trials []model.TrialResult
	traces := map[string][]model.TracePoint{}
	contended, noted := 0, 0
	s.index()
	for _, id := range s.rowTrials[row] {
		v := s.Trials[id]
		if v.Result == nil {
			continue
		}
		trials = append(trials, *v.Result)
		// Only trials that ran and count say what the host did to them
		// (the report counts the same way).
		if n := v.Result.Noise; n != nil && v.Result.Outcome.Counted() {
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
	var out []string
	if len(parts) > 0 {
		out = append(out, "what-if, from uncapped: "+strings.Join(parts, " · "))
	}
	if contended > 0 {
		out = append(out, fmt.Sprintf("%d of %d ran contended", contended, noted))
	}
	return strings.Join(out, "  ·  ")
}
