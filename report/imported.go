package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/headroom-eval/headroom/model"
	"github.com/headroom-eval/headroom/store"
)

// importedLines say, for an experiment read from another harness's
// runs, where each ratio came from, each run's own score beside
// headroom's count of the same trials (equal, or the difference
// explained line by line) and what those runs do not record (so what
// this report cannot say of them); nil otherwise.
func (r *Report) importedLines() []string {
	if r.Manifest == nil || len(r.Manifest.Imported) == 0 {
		return nil
	}
	out := []string{"Imported (headroom import), not run here:"}
	var unknown []string
	for _, s := range r.Manifest.Imported {
		out = append(out, fmt.Sprintf("  %s  %s from %s %s (%s)", s.Ratio, model.Quantity(s.Trials, "trial"), s.Harness, s.Dir, s.Settings))
		out = append(out, OwnScoreLines(s, r.Trials)...)
		unknown = s.Unknown
	}
	if len(unknown) > 0 {
		out = append(out, "  not recorded by the harness, so not in this report: "+strings.Join(unknown, ", "))
	}
	return out
}

// OwnScoreLines set a run's own score beside headroom's pass rate over
// the trials imported from it (indented to stand under the run's line).
func OwnScoreLines(s store.ImportSource, trials []model.TrialResult) []string {
	var rates model.Rates
	for _, t := range trials {
		if t.Imported != nil && t.Imported.Harness == s.Harness && t.Imported.Job == s.Dir {
			rates.AddCause(t.Outcome, t.Cause)
		}
	}
	mine := fmt.Sprintf("headroom: %d of %d passed (%.2f%%)", rates.Successes, rates.Counted, 100*rates.SuccessRate())
	own := s.Own
	if own == nil {
		return []string{"    its own score: not written by the run · " + mine}
	}
	theirs := fmt.Sprintf("%s %.2f%%", own.Metric, 100*own.Value)
	// The same score, and where the harness counted, the same count.
	same := math.Abs(own.Value-rates.SuccessRate()) < 1e-9
	if own.Passes >= 0 {
		theirs += fmt.Sprintf(" (%d of %d)", own.Passes, own.Trials)
		same = same && own.Passes == rates.Successes && own.Trials == rates.Counted
	}
	line := fmt.Sprintf("    its own score: %s, from %s · %s", theirs, own.From, mine)
	switch {
	case same:
		return []string{line + ": the same"}
	case len(own.Differences) == 0:
		return []string{line + ": they differ, and no cause is known (a bug: please report it with the run)"}
	}
	out := []string{line + ", because:"}
	for _, d := range own.Differences {
		out = append(out, "      "+d)
	}
	return out
}
